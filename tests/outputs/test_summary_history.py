"""The summary's section on the history of the last runs: a mermaid chart of each group's pass
rate that mermaid (from npm, in headless Chromium) draws, the same figures as a table, and the
flaky, newly flaky and failing tests; no section under three runs (two are the baseline and
this run, which the changes already compare)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.outputs.summary import render_summary
from scbench_ci.problem.model import Group
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.model import RunResult
from testing.mermaid import draw, mermaid_blocks
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured

P, F = Status.PASSED, Status.FAILED
SCHEDULE: dict[str, tuple[Group, list[Status]]] = {
    "core": (Group.CORE, [P, P, P, P, P, P]),
    "flaky": (Group.FUNCTIONALITY, [P, F, P, P, F, P]),
    "error_case": (Group.ERROR, [P, P, P, P, P, P]),
    "breaks": (Group.REGRESSION, [P, P, P, P, F, F]),
}
COMMIT = "c0ffee0123456789"


def nights(count: int, schedule: dict[str, tuple[Group, list[Status]]] = SCHEDULE) -> RunResult:
    run = None
    for number in range(1, count + 1):
        tests = [
            make_test(name, statuses[number - 1], group)
            for name, (group, statuses) in schedule.items()
        ]
        # The same code nights 1-4, a change on night 5 (when `breaks` broke).
        inputs = "c" * 64 if number <= 4 else "d" * 64
        checkpoint = replace(make_checkpoint(*tests), fingerprint=inputs)
        tonight = make_run(checkpoint, started_at=f"2026-03-0{number}T02:00:00+00:00")
        run = with_history(tonight, 30, COMMIT, carried(run))
    assert run is not None
    return run


@pytest.mark.parametrize("runs", [1, 2])
def test_no_history_section_under_three_runs(runs: int) -> None:
    assert "### History" not in render_summary(nights(runs))
    assert "### History: the last 3 runs" in render_summary(nights(3))


def test_the_history_section_charts_tabulates_and_lists_the_trends() -> None:
    markdown = render_summary(nights(6))

    assert "### History: the last 6 runs" in markdown
    (chart,) = mermaid_blocks(markdown)
    assert chart.splitlines()[-4:] == [
        "  line [100.0, 100.0, 100.0, 100.0, 100.0, 100.0]",
        "  line [100.0, 0.0, 100.0, 100.0, 0.0, 100.0]",
        "  line [100.0, 100.0, 100.0, 100.0, 100.0, 100.0]",
        "  line [100.0, 100.0, 100.0, 100.0, 0.0, 0.0]",
    ]
    assert "x-axis [1, 2, 3, 4, 5, 6]" in chart
    assert "Lines: Core blue, Functionality green, Error red, Regression brown." in markdown
    assert "| 2 | 2026-03-02 02:00 | `c0ffee0` | 100.0% | 0.0% | 100.0% | 100.0% |" in markdown
    assert (
        "| checkpoint\\_1 | <code>tests/test\\_checkpoint\\_1.py::flaky</code> | 2 of 6 | 3 |"
        in markdown
    )
    # The failing tests are listed by their causes above: here only how many, and since when.
    assert "**Failing now**: 1 test, the longest since 2026-03-05 02:00 (2 runs).\n" in markdown
    assert "| Failing since |" not in markdown and "breaks</code> |" not in markdown
    # Its flips were in runs 2 and 3 with the first code and 6 with the second: all in the last
    # five, after a run that passed; `breaks` broke with the change, which is no flip.
    assert (
        "**Newly flaky** (every flip in the last 5 runs): <code>tests/test\\_checkpoint\\_1.py"
        "::flaky</code> (checkpoint\\_1, failed 2 of 6)." in markdown
    )


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.npm
def test_the_chart_is_drawn_by_mermaid_with_a_line_per_group() -> None:
    (chart,) = mermaid_blocks(render_summary(nights(6)))

    drawn = draw(chart)

    assert drawn.error is None
    assert drawn.svg is not None and 'aria-roledescription="xychart"' in drawn.svg
    strokes = re.findall(r'<g class="line-plot-(\d)"><path [^>]*stroke="(#[0-9a-f]{6})"', drawn.svg)
    assert strokes == [("0", "#0969da"), ("1", "#1a7f37"), ("2", "#cf222e"), ("3", "#9a6700")]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", drawn.svg)
    assert labels[:7] == ["Pass rate per group, oldest run first (%)", *"123456"]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.npm
def test_a_group_without_tests_has_no_line_and_a_dash_in_its_column() -> None:
    markdown = render_summary(nights(3, {"core": (Group.CORE, [P, P, P])}))
    (chart,) = mermaid_blocks(markdown)
    assert chart.count("  line [") == 1
    assert "Lines: Core blue." in markdown
    dash = "\N{EN DASH}"
    assert f"| 1 | 2026-03-01 02:00 | `c0ffee0` | 100.0% | {dash} | {dash} | {dash} |" in markdown
    assert draw(chart).error is None


def test_test_ids_from_the_history_are_escaped_and_never_reach_the_chart() -> None:
    hostile = "tests/t.py::x|y</code><img src=x>`@team"
    run = nights(3, {"core": (Group.CORE, [P, P, P])})
    assert run.history is not None
    records = tuple(
        replace(
            record,
            checkpoints={
                key: replace(checkpoint, outcomes={hostile: F if index % 2 else P})
                for key, checkpoint in record.checkpoints.items()
            },
        )
        for index, record in enumerate(run.history.runs)
    )
    markdown = render_summary(replace(run, history=replace(run.history, runs=records)))

    (chart,) = mermaid_blocks(markdown)
    assert "img" not in chart and "team" not in chart
    assert "<img" not in markdown and "@team" not in markdown
    assert "x\\|y&lt;/code&gt;&lt;img src=x&gt;\\`@\u200bteam" in markdown


def measured_nights(figures: list[tuple[float, float] | None]) -> RunResult:
    """Nights of one checkpoint, measured with (verbosity, erosion) or not (None)."""
    run = None
    for number, measures in enumerate(figures, start=1):
        made = make_checkpoint(make_test("core", P))
        checkpoint = (
            not_measured(made, "timed out") if measures is None else measured(made, *measures)
        )
        tonight = make_run(checkpoint, started_at=f"2026-03-0{number}T02:00:00+00:00")
        run = with_history(tonight, 30, COMMIT, carried(run))
    assert run is not None
    return run


def test_each_run_s_code_quality_is_charted_and_tabulated() -> None:
    markdown = render_summary(measured_nights([(0.066, 0.22), (0.073, 0.34), (0.115, 0.39)]))

    _, chart = mermaid_blocks(markdown)
    assert "  x-axis [1, 2, 3]\n" in chart
    assert '  y-axis "Share of the code (%)" 0 --> 40\n' in chart
    assert chart.endswith("  line [6.6, 7.3, 11.5]\n  line [22.0, 34.0, 39.0]\n")
    assert "| 3 | 11.5% | 39.0% | 1 |\n" in markdown
    assert "Lines: verbosity blue, erosion red.\n" in markdown


def test_a_run_not_measured_has_a_dash_and_no_chart() -> None:
    markdown = render_summary(measured_nights([(0.066, 0.22), None, (0.115, 0.39)]))

    assert len(mermaid_blocks(markdown)) == 1  # the pass rates' only
    dash = "\N{EN DASH}"
    assert f"| 2 | {dash} | {dash} | 0 |\n" in markdown
    assert "**Code quality per run**" in markdown


def test_no_code_quality_in_a_history_never_measured() -> None:
    assert "Code quality" not in render_summary(nights(3))


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.npm
def test_the_code_quality_chart_is_drawn_with_both_lines() -> None:
    nights_measured = measured_nights([(0.05, 0.2), (0.06, 0.3), (0.07, 0.35)])
    _, chart = mermaid_blocks(render_summary(nights_measured))

    drawn = draw(chart)

    assert drawn.error is None and drawn.svg is not None
    strokes = re.findall(r'<g class="line-plot-(\d)"><path [^>]*stroke="(#[0-9a-f]{6})"', drawn.svg)
    assert strokes == [("0", "#0969da"), ("1", "#cf222e")]
