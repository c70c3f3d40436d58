"""The summary's code quality: each checkpoint's verbosity and erosion on its figures line, with
their change since the previous measured checkpoint and since the baseline, or why they are
missing; a run over one problem's checkpoints shows their trajectory beside the checkpoints'
table, a chart that mermaid draws and the same figures as a table. Nothing shows without a
measure (the goldens, tests/outputs/test_golden.py, stay as they were)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.outputs.summary import render_summary
from scbench_ci.results.compare import compare
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from testing.mermaid import draw, mermaid_blocks
from testing.results import (
    left_out,
    make_checkpoint,
    make_run,
    make_test,
    measured,
    not_measured,
)

PASSED, FAILED = make_test("a", Status.PASSED), make_test("a", Status.FAILED)


def checkpoint(
    name: str, verbosity: float, erosion: float, *, fails: bool = False
) -> CheckpointResult:
    return measured(make_checkpoint(FAILED if fails else PASSED, name=name), verbosity, erosion)


def trajectory_run() -> RunResult:
    """The issue's measure of one problem's reference solutions (erosion 0.22 -> 0.34 -> 0.39,
    verbosity 0.066 -> 0.073 -> 0.115), a checkpoint between them the measure failed on."""
    return make_run(
        checkpoint("checkpoint_1", 0.066, 0.22),
        not_measured(
            make_checkpoint(PASSED, name="checkpoint_2"), "scb-check timed out after 60 s"
        ),
        checkpoint("checkpoint_3", 0.073, 0.34, fails=True),
        checkpoint("checkpoint_4", 0.115, 0.39),
    )


def test_nothing_shows_without_a_measure() -> None:
    run = make_run(
        make_checkpoint(PASSED, name="checkpoint_1"), make_checkpoint(PASSED, name="checkpoint_2")
    )
    markdown = render_summary(run, details="all")
    assert "quality" not in markdown.lower() and "verbosity" not in markdown


def test_a_single_checkpoint_shows_its_figures_under_its_counts() -> None:
    markdown = render_summary(make_run(checkpoint("checkpoint_1", 0.0661, 0.2249)))

    assert (
        "\n\nCode quality (scb-check 0.2.0): verbosity **6.6%** · erosion **22.5%**.\n" in markdown
    )
    assert "```mermaid" not in markdown  # one point is no trajectory


def test_the_source_files_the_measure_left_out_are_named_beside_the_figures() -> None:
    files = ("build/*a*.py", "dist/<b>.js", "env/c.py", "d.py", "e.py", "f.py")
    partial = left_out(checkpoint("checkpoint_1", 0.0661, 0.2249), 6, *files)
    unknown = checkpoint("checkpoint_2", 0.1, 0.3)
    assert unknown.quality is not None
    unknown = replace(unknown, quality=replace(unknown.quality, unmeasured=None))

    markdown = render_summary(make_run(partial, unknown), details="all")

    assert (
        "Code quality (scb-check 0.2.0): verbosity **6.6%** · erosion **22.5%** · 6 source files "
        "left out. Left out of these figures: build/\\*a\\*.py, dist/&lt;b&gt;.js, env/c.py, "
        "d.py, e.py and 1 more.\n"
    ) in markdown
    assert "since checkpoint\\_1). Which source files it measured is not recorded.\n" in markdown


def test_the_figures_line_gives_the_change_since_the_previous_checkpoint_and_the_baseline() -> None:
    baseline = make_run(
        checkpoint("checkpoint_1", 0.05, 0.25), checkpoint("checkpoint_2", 0.05, 0.30)
    )
    run = make_run(checkpoint("checkpoint_1", 0.066, 0.22), checkpoint("checkpoint_2", 0.073, 0.34))
    run = replace(run, comparison=compare(run, baseline, "baseline.json"))

    markdown = render_summary(run, details="all")

    assert (
        "Code quality (scb-check 0.2.0): verbosity **7.3%** (+0.7 pt since checkpoint\\_1, +2.3 pt "
        "since the baseline) · erosion **34.0%** (+12.0 pt since checkpoint\\_1, +4.0 pt since the "
        "baseline).\n"
    ) in markdown
    assert (
        "Code quality (scb-check 0.2.0): verbosity **6.6%** (+1.6 pt since the baseline) · "
        "erosion **22.0%** (-3.0 pt since the baseline).\n"
    ) in markdown
    assert "| Verbosity since the baseline | Erosion since the baseline |" in markdown
    assert (
        "| 2 | checkpoint\\_2 | 7.3% (+0.7) | 34.0% (+12.0) | 800 | 40 | +2.3 pt | +4.0 pt |"
        in markdown
    )


def test_a_focused_section_says_why_the_measure_is_missing() -> None:
    run = make_run(
        not_measured(
            make_checkpoint(FAILED), "the parser crashed\nTraceback (most recent call last)"
        )
    )
    markdown = render_summary(run)
    assert "\n\nCode quality not measured: the parser crashed.\n" in markdown


def test_the_trajectory_charts_and_tabulates_the_measured_checkpoints() -> None:
    markdown = render_summary(trajectory_run())

    (chart,) = mermaid_blocks(markdown)
    assert "  x-axis [1, 3, 4]\n" in chart
    assert '  y-axis "Share of the code (%)" 0 --> 40\n' in chart
    assert chart.endswith("  line [6.6, 7.3, 11.5]\n  line [22.0, 34.0, 39.0]\n")
    dash = "\N{EN DASH}"
    assert f"| 2 | checkpoint\\_2 | {dash} | {dash} | {dash} | {dash} |\n" in markdown
    assert "| 4 | checkpoint\\_4 | 11.5% (+4.2) | 39.0% (+5.0) | 800 | 40 |\n" in markdown
    assert "Not measured: checkpoint\\_2 (scb-check timed out after 60 s).\n" in markdown
    # Beside the checkpoints' table: after it, before the failing checkpoint's section.
    assert markdown.index("| Checkpoint | Verdict |") < markdown.index("```mermaid")
    assert markdown.index("```mermaid") < markdown.index("### checkpoint\\_3")


def test_a_folded_section_gives_the_figures_on_its_one_line() -> None:
    markdown = render_summary(trajectory_run(), details="all")  # four sections: folded

    assert (
        "Core 1/1 · all 1/1 · verbosity **11.5%** (+4.2 pt since checkpoint\\_3) · erosion "
        "**39.0%** (+5.0 pt since checkpoint\\_3)\n"
    ) in markdown
    assert "Core 1/1 · all 1/1 · quality not measured: scb-check timed out after 60 s\n" in markdown


def test_no_trajectory_for_several_problems_or_one_measured_checkpoint() -> None:
    one = make_run(
        checkpoint("checkpoint_1", 0.1, 0.2), make_checkpoint(PASSED, name="checkpoint_2")
    )
    assert "```mermaid" not in render_summary(one)
    run = trajectory_run()
    other = ProblemResult("other", "/problems/other", 1, run.problems[0].checkpoints)
    several = replace(run, problems=(*run.problems, other))
    markdown = render_summary(several, details="all")
    assert "```mermaid" not in markdown
    assert "verbosity **11.5%** (+4.2 pt since checkpoint\\_3)" in markdown


def test_hostile_reasons_and_versions_are_escaped_and_never_reach_the_chart() -> None:
    hostile = "x|y</code><img src=x>`@team [l](https://e.x) \u202eevil\x1b[31m"
    run = trajectory_run()
    first = run.problems[0].checkpoints[0]
    assert first.quality is not None and first.quality.measures is not None
    versioned = replace(
        first,
        quality=replace(
            first.quality, measures=replace(first.quality.measures, tool_version=hostile)
        ),
    )
    checkpoints = (
        versioned,
        not_measured(run.problems[0].checkpoints[1], hostile),
        *run.problems[0].checkpoints[2:],
    )
    run = replace(run, problems=(replace(run.problems[0], checkpoints=checkpoints),))

    folded = render_summary(run, details="all")
    alone = render_summary(make_run(versioned))  # its section names the version

    (chart,) = mermaid_blocks(folded)
    assert "img" not in chart and "team" not in chart
    for markdown in (folded, alone):
        assert "<img" not in markdown and "@team" not in markdown and "[l](" not in markdown
        assert "\u202e" not in markdown and "\x1b" not in markdown
    escaped = (
        "x\\|y&lt;/code&gt;&lt;img src=x&gt;\\`@\u200bteam \\[l\\](https\\://e.x) \\\\u202eevil"
    )
    assert f"Not measured: checkpoint\\_2 ({escaped}" in folded
    assert f"quality not measured: {escaped}" in folded
    assert f"Code quality (scb-check {escaped}" in alone


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.npm
def test_the_trajectory_is_drawn_by_mermaid_with_a_line_per_measure() -> None:
    (chart,) = mermaid_blocks(render_summary(trajectory_run()))

    drawn = draw(chart)

    assert drawn.error is None
    assert drawn.svg is not None and 'aria-roledescription="xychart"' in drawn.svg
    strokes = re.findall(r'<g class="line-plot-(\d)"><path [^>]*stroke="(#[0-9a-f]{6})"', drawn.svg)
    assert strokes == [("0", "#0969da"), ("1", "#cf222e")]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", drawn.svg)
    assert labels[:4] == ["Verbosity and erosion per checkpoint (%)", "1", "3", "4"]
