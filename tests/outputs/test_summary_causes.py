"""The summary in the order a person asks (issue #35): the cause first, identical failures once
with their count and tests, the submission's stderr where a test only says its command failed,
each message once, then the changes, the fixed tests as whole ids, and the renderer that the
commands build once (SummaryRenderer)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.outputs.failing_view import cause_groups
from scbench_ci.outputs.summary import SummaryRenderer, render_summary, summary_renderer
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Problem
from scbench_ci.results.causes import Source
from scbench_ci.results.compare import compare
from scbench_ci.results.file import load_results
from testing.golden import GOLDEN
from testing.problems import ProblemFolder
from testing.results import make_outcome
from tests.outputs.test_summary import checkpoint_result, document

MISSING = "ModuleNotFoundError: No module named &#x27;greeting\\_helpers&#x27;"
"""The cause of the missing_module golden as the summary's markdown writes it."""


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return load_problem(ProblemFolder(tmp_path_factory.mktemp("causes") / "demo").root)


def golden(name: str) -> str:
    return (GOLDEN / name / "summary.md").read_text()


def test_a_missing_module_is_one_cause_shown_once_with_its_tests() -> None:
    markdown = golden("missing_module")
    run = load_results(GOLDEN / "missing_module" / "results.json")
    ((_, checkpoint),) = run.checkpoints()
    (group,) = [g for g in cause_groups(checkpoint, frozenset()) if g.cause.source is Source.STDERR]
    # The folded line names the cause and how many tests it hit, in the words of the console's
    # report; its block lists them all and shows the submission's stderr once; no
    # CompletedProcess repr is left to read.
    title = (
        f"<strong>The main cause ({len(group.tests)} of 18 failing tests)</strong>: "
        "ModuleNotFoundError: No module named"
    )
    assert title in markdown
    block = markdown[markdown.index(title) : markdown.index("</details>", markdown.index(title))]
    for test in group.tests:
        assert test.id.replace("_", "\\_").replace("[", "\\[").replace("]", "\\]") in block
    assert "the cause is in the submission&#x27;s stderr:" in block
    assert "```text\nTraceback (most recent call last):\n" in block
    assert "CompletedProcess(" not in markdown
    assert markdown.count("ModuleNotFoundError") == 2  # the folded line, the stderr's last line


def test_the_cause_comes_first_then_the_counts_then_the_changes() -> None:
    markdown = golden("comparison")
    why = markdown.index("**Why it failed**")
    cause = markdown.index("AssertionError: assert {")
    counts = markdown.index("| Group | Passed |")
    changes = markdown.index("### Changes since the baseline")
    assert why < cause < counts < changes


def test_each_failure_message_is_shown_once(problem: Problem) -> None:
    """On its folded line; the block under it is the traceback alone (its `E` lines are the
    message pytest wrote in it), with no message copied above it and no cut marker in it."""
    message = "AssertionError: assert 'one of a kind' == 'two'"
    traceback = "def test_x():\n>   assert 'one of a kind' == 'two'\nE   " + message
    outcome = make_outcome("test_x", Status.FAILED, message=message, traceback=traceback)
    markdown = render_summary(
        document(problem, checkpoint_result(problem, "checkpoint_1", [outcome]))
    )
    assert markdown.count("one of a kind") == 3  # the folded line, the source line, the E line
    assert "```text\ndef test_x():\n" in markdown
    assert "characters cut" not in markdown


def test_tests_failing_the_same_way_are_one_cause(problem: Problem) -> None:
    same = [
        make_outcome(f"test_{i}", Status.FAILED, message="OSError: disk full", traceback=f"tb {i}")
        for i in range(4)
    ]
    other = make_outcome("test_other", Status.FAILED, message="KeyError: 'k'", traceback="tb k")
    result = checkpoint_result(problem, "checkpoint_1", [*same, other])
    markdown = render_summary(document(problem, result))
    assert "#### checkpoint\\_1: 5 failing tests, 2 causes\n" in markdown
    assert (
        "<details><summary><strong>The main cause (4 of 5 failing tests)</strong>: OSError: disk "
        "full</summary>"
    ) in markdown
    assert markdown.count("disk full") == 1
    assert "```text\ntb 0\n```" in markdown and "tb 1" not in markdown  # the first test's, once
    assert markdown.index("disk full") < markdown.index("KeyError")  # the most tests first


def test_fixed_tests_are_a_folded_list_of_whole_ids(problem: Problem) -> None:
    long_name = "test_" + "a_rather_long_name_" * 6
    before = checkpoint_result(
        problem, "checkpoint_1", [make_outcome(long_name, Status.FAILED, message="x")]
    )
    after = checkpoint_result(problem, "checkpoint_1", [make_outcome(long_name, Status.PASSED)])
    run = document(problem, after)
    markdown = render_summary(replace(run, comparison=compare(run, document(problem, before), "b")))
    escaped = f"tests/test_checkpoint_1.py::{long_name}".replace("_", "\\_")
    listed = f"- <code>{escaped}</code>\n"
    assert "<details><summary><strong>Fixed</strong>: 1 test in checkpoint_1</summary>" in markdown
    assert listed in markdown
    assert "…" not in markdown and "(checkpoint\\_1)" not in markdown


def test_the_renderer_is_render_summary_with_the_command_s_choices(problem: Problem) -> None:
    outcome = make_outcome("test_x", Status.FAILED, message="boom")
    run = document(problem, checkpoint_result(problem, "checkpoint_1", [outcome]))

    class Options:
        fail_on = "regressions"
        details = "all"

    render = summary_renderer(Options())
    assert render == SummaryRenderer("regressions", "all")
    expected = render_summary(
        run, fail_on="regressions", details="all", reports_folder=Path("out"), max_bytes=5000
    )
    assert render(run, reports_folder=Path("out"), max_bytes=5000) == expected


def test_failing_tests_of_passing_checkpoints_are_named_at_the_top(problem: Problem) -> None:
    """Issue #52: log_query over all its checkpoints reported 5 of 5 passed while 8 tests failed,
    and no part of the summary named them without `--details all`."""
    ok = make_outcome("test_core", Status.PASSED)
    broken = make_outcome(
        "test_extra", Status.ERROR, "functionality", message="FileNotFoundError: x.csv"
    )

    def run_of(count: int) -> str:
        checkpoints = [
            checkpoint_result(problem, "checkpoint_1", [ok, broken]) for _ in range(count)
        ]
        named = [replace(c, name=f"checkpoint_{i}") for i, c in enumerate(checkpoints, start=1)]
        return render_summary(document(problem, *named))

    two = run_of(2)
    line = (
        "**Failing tests in checkpoints that pass**: 2 tests in 2 of 2 checkpoints (the policy "
        "core-cases does not need them to pass).\n\n"
        "- **checkpoint\\_1**: 1 failing test. The cause (1 test): FileNotFoundError: x.csv (in "
        "<code>tests/test\\_checkpoint\\_1.py::test\\_extra</code>).\n"
    )
    assert line in two
    assert two.index(line) < two.index("| Checkpoint | Verdict |")
    # Folded when many: the counts stay on the first screen, the list is one click away.
    many = run_of(7)
    assert (
        "<details><summary><strong>Failing tests in checkpoints that pass</strong>: 7 tests in 7 "
        "of 7 checkpoints (the policy core-cases does not need them to pass)</summary>\n\n"
        "- **checkpoint\\_1**: 1 failing test."
    ) in many
    assert many.count(": 1 failing test. The cause") == 5
    assert "- … and 2 more: `--details all` gives each a section.\n\n</details>" in many
