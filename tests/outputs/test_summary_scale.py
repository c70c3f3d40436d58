"""The summary of many problems and checkpoints: what it shows follows what went wrong, not how
much ran (a matrix that fits the page, warnings once each, sections for what failed or changed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.outputs.summary import render_summary
from scbench_ci.outputs.summary_view import MATRIX_COLUMNS, detailed, matrix, run_warnings
from scbench_ci.problem.model import Group
from scbench_ci.results.compare import compare
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    ProblemResult,
    RunResult,
)
from scbench_ci.results.verdict import count_groups
from testing.results import make_checkpoint, make_run, make_test
from tests.outputs.test_summary import HOSTILE, outside_fences, rendered_tags

DISCARDED = "the submission's tests was discarded: the evaluator makes its own"
LEFT_OUT = "2 symlink(s) of the submission point outside it and were left out: a, b"


def checkpoint(
    name: str, *, passed: bool = True, warnings: tuple[str, ...] = ()
) -> CheckpointResult:
    status = Status.PASSED if passed else Status.FAILED
    tests = (make_test("test_a", Status.PASSED), make_test("test_b", status))
    return replace(make_checkpoint(*tests, name=name), warnings=warnings)


def problems(
    count: int, checkpoints: int, failing: frozenset[tuple[int, int]] = frozenset()
) -> RunResult:
    """`count` problems of `checkpoints` checkpoints each; (problem, checkpoint) in `failing`
    fail."""
    run = make_run()
    made = tuple(
        ProblemResult(
            f"problem_{p}",
            f"/problems/problem_{p}",
            1,
            tuple(
                checkpoint(f"checkpoint_{c}", passed=(p, c) not in failing)
                for c in range(1, checkpoints + 1)
            ),
        )
        for p in range(1, count + 1)
    )
    return replace(run, problems=made)


def with_checkpoint(run: RunResult, index: int, checkpoint: CheckpointResult) -> RunResult:
    """The run with the first problem's checkpoint at `index` replaced."""
    first = run.problems[0]
    checkpoints = list(first.checkpoints)
    checkpoints[index] = checkpoint
    return replace(
        run, problems=(replace(first, checkpoints=tuple(checkpoints)), *run.problems[1:])
    )


def test_the_matrix_fits_the_page_in_tables_of_eight_checkpoints() -> None:
    run = problems(3, 11, failing=frozenset({(2, 10)}))
    shown = matrix(run)
    assert shown.prefix == "checkpoint_"
    assert [table.labels for table in shown.tables] == [
        [str(c) for c in range(1, 9)],
        ["9", "10", "11"],
    ]
    markdown = render_summary(run)
    assert "| Problem | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |\n" in markdown
    assert "| Problem | 9 | 10 | 11 |\n| --- | :---: | :---: | :---: |\n" in markdown
    assert "| problem\\_2 | ✅ | ❌ 1/2 | ✅ |\n" in markdown
    assert "The columns are the checkpoints `checkpoint_…`." in markdown
    assert max(len(table.labels) for table in shown.tables) == MATRIX_COLUMNS


def test_a_cell_says_what_failed() -> None:
    run = problems(2, 2)
    broken = replace(
        run.problems[1].checkpoints[1],
        passed=False,
        failure=Failure(FailureKind.SETUP, "pip failed"),
    )
    second = replace(run.problems[1], checkpoints=(run.problems[1].checkpoints[0], broken))
    markdown = render_summary(replace(run, problems=(run.problems[0], second)))
    assert "| problem\\_1 | ✅ | ✅ |\n| problem\\_2 | ✅ | ❌ setup |\n" in markdown


@pytest.mark.parametrize(
    ("names", "prefix", "labels"),
    [
        (["checkpoint_1", "checkpoint_10"], "checkpoint_", ["1", "10"]),
        (["checkpoint_10", "checkpoint_11"], "checkpoint_", ["10", "11"]),
        (["part_a", "part_b"], "part_", ["a", "b"]),
        (["a1", "a2"], "", ["a1", "a2"]),
        (["checkpoint_1"], "", ["checkpoint_1"]),
    ],
)
def test_headers_leave_out_only_a_prefix_that_says_nothing(
    names: list[str], prefix: str, labels: list[str]
) -> None:
    run = replace(
        make_run(),
        problems=(
            ProblemResult("p", "/p", 1, tuple(checkpoint(name) for name in names)),
            ProblemResult("q", "/q", 1, (checkpoint(names[0]),)),
        ),
    )
    shown = matrix(run)
    assert (shown.prefix, shown.tables[0].labels) == (prefix, labels)
    assert shown.tables[0].rows[1].cells[1:] == [None] * (len(names) - 1)


def test_warnings_are_said_once_with_where_and_notices_not_at_all() -> None:
    run = problems(3, 2)
    warned = tuple(
        replace(
            problem,
            checkpoints=tuple(
                replace(c, warnings=(LEFT_OUT,), notices=(DISCARDED,)) for c in problem.checkpoints
            ),
        )
        for problem in run.problems
    )
    run = replace(run, problems=warned)
    assert run_warnings(run)[0].places[:2] == [
        "problem_1 / checkpoint_1",
        "problem_1 / checkpoint_2",
    ]
    markdown = render_summary(run)
    assert markdown.count("symlink") == 1
    assert (
        "- 2 symlink(s) of the submission point outside it and were left out: a, b (6 of 6 "
        "checkpoints: problem\\_1 / checkpoint\\_1, problem\\_1 / checkpoint\\_2, problem\\_2 / "
        "checkpoint\\_1, problem\\_2 / checkpoint\\_2, problem\\_3 / checkpoint\\_1, and 1 more)\n"
    ) in markdown
    assert "discarded" not in markdown
    assert "###" not in markdown  # a warning alone gives no checkpoint a section


def test_details_choose_the_sections() -> None:
    baseline = problems(2, 3, failing=frozenset({(1, 1)}))
    run = problems(2, 3, failing=frozenset({(1, 1), (2, 3)}))
    fixed = replace(baseline.problems[0].checkpoints[2], tests=())  # tests that changed: new
    run = with_checkpoint(run, 2, fixed)
    run = replace(run, comparison=compare(run, baseline, "baseline.json"))
    sections = {details: sorted(detailed(run, details)) for details in ("failed", "changed", "all")}
    assert sections["failed"] == [("problem_1", "checkpoint_1"), ("problem_2", "checkpoint_3")]
    assert sections["changed"] == [
        ("problem_1", "checkpoint_1"),
        ("problem_1", "checkpoint_3"),
        ("problem_2", "checkpoint_3"),
    ]
    assert len(sections["all"]) == 6
    markdown = render_summary(run)
    assert sections_in(markdown) == 3
    assert (
        "Without a section of their own: 3 checkpoints that pass unchanged since the baseline "
        "(details `all` gives every checkpoint one).\n"
    ) in markdown
    assert sections_in(render_summary(run, details="all")) == 6
    assert sections_in(render_summary(run, details="failed")) == 2


def sections_in(markdown: str) -> int:
    """Whole sections (up to FOCUSED_SECTIONS of them) or folded ones."""
    return markdown.count("\n### problem") + markdown.count("\n<details><summary><strong>problem")


def test_the_headline_gives_the_figures_and_how_they_moved() -> None:
    baseline = problems(2, 2, failing=frozenset({(1, 1)}))
    run = problems(2, 2, failing=frozenset({(2, 2), (2, 1)}))
    run = replace(run, comparison=compare(run, baseline, "baseline.json"), jobs=2)
    headline = render_summary(run).split("\n")[2]
    assert headline == (
        "**2 of 4** checkpoints pass (-1) · Core tests: **6 of 8** pass (-1) · all tests: "
        "6 of 8 pass (-1), 2 fail · 1.0 s, 2 jobs side by side"
    )


def test_many_sections_are_folded_and_list_their_first_failures() -> None:
    failing = frozenset((p, c) for p in (1, 2) for c in (1, 2))
    run = problems(2, 3, failing=failing)
    broken = tuple(make_test(f"test_{i}", Status.FAILED, Group.FUNCTIONALITY) for i in range(9))
    first = run.problems[0].checkpoints[0]
    many = replace(
        first, tests=(*first.tests, *broken), groups=count_groups((*first.tests, *broken), False)
    )
    run = with_checkpoint(run, 0, many)
    markdown = render_summary(run)
    assert "\n### Checkpoints that failed or changed\n" in markdown
    assert markdown.count("\n<details><summary><strong>problem") == len(failing)
    assert (
        "<details><summary><strong>problem_1 / checkpoint_1</strong>: ❌ failed in 1.0 s: "
        "1 Core test failed</summary>\n\nCore 1/2 · Functionality 0/9 · all 1/11\n\n"
        "- <code>tests/test\\_checkpoint\\_1.py::test\\_b</code> Core, failed: test\\_b broke\n"
    ) in markdown
    assert "- … and 5 more causes, in the output folder.\n\n</details>\n" in markdown
    assert "```" not in markdown  # no traceback in a folded section
    rendered_tags(markdown)


def test_text_from_a_results_file_is_bounded_in_the_overview() -> None:
    """A results.json may carry a warning or a failure message of a mebibyte: a folded line and
    the warnings list show its start."""
    huge = "x" * 100_000
    run = problems(2, 3, failing=frozenset((p, c) for p in (1, 2) for c in (1, 2, 3)))
    first = replace(
        run.problems[0].checkpoints[0],
        failure=Failure(FailureKind.SETUP, f"{huge}\nsecond line"),
        warnings=(huge,),
    )
    run = with_checkpoint(run, 0, first)
    markdown = render_summary(run)
    assert len(markdown) < 10_000
    assert "setup: " + "x" * 110 in markdown and "second line" not in markdown


def test_hostile_text_in_folded_sections_renders_as_text() -> None:
    """Problem, checkpoint and test names and messages in a folded line and its list."""
    run = problems(2, 2, failing=frozenset((p, c) for p in (1, 2) for c in (1, 2)))
    tests = tuple(
        replace(make_test(f"test[{text}]", Status.FAILED), message=text) for text in HOSTILE
    )
    hostile = replace(
        run.problems[0].checkpoints[0], tests=tests, groups=count_groups(tests, False)
    )
    run = with_checkpoint(run, 0, hostile)
    run = replace(run, problems=(replace(run.problems[0], name=HOSTILE[0]), run.problems[1]))
    markdown = render_summary(run)
    text = outside_fences(markdown)
    assert "<script" not in text and "</code><" not in text
    tags = rendered_tags(markdown)
    assert tags.count("details") == 4  # the folded sections, none closed early
    # The four failing checkpoints at the top; one failing test each, five of the hostile ones.
    assert tags.count("li") == 4 + 4 * 1 + 5
    assert "a" not in tags
