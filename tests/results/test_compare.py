"""The comparison with a baseline: each test's change, keyed by problem, checkpoint and test id."""

from __future__ import annotations

from dataclasses import replace

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.compare import compare
from scbench_ci.results.comparison_model import NOT_RUN
from scbench_ci.results.model import Failure, FailureKind
from scbench_ci.results.policy import GroupCounts
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured


def _ids(changes: tuple) -> list[tuple[str, str | None, str | None]]:
    return [(c.test.split("::")[1], c.before, c.after) for c in changes]


def test_regressions_fixes_new_removed_and_flaky() -> None:
    baseline = make_run(
        make_checkpoint(
            make_test("a", Status.PASSED),
            make_test("b", Status.FAILED),
            make_test("c", Status.PASSED),
            make_test("gone", Status.PASSED),
            make_test("d", Status.PASSED),
            make_test("s", Status.PASSED),
        )
    )
    now = make_run(
        make_checkpoint(
            make_test("a", Status.FAILED),
            make_test("b", Status.PASSED),
            make_test("c", Status.PASSED),
            make_test("fresh", Status.FAILED),
            make_test("d", Status.FLAKY),
            make_test("s", Status.SKIPPED),
        )
    )
    comparison = compare(now, baseline, "base/results.json")
    assert _ids(comparison.regressions) == [("a", "passed", "failed")]
    assert comparison.regressions[0].message == "a broke"
    assert _ids(comparison.fixed) == [("b", "failed", "passed")]
    assert _ids(comparison.new) == [("fresh", None, "failed")]
    assert _ids(comparison.removed) == [("gone", "passed", None)]
    assert _ids(comparison.flaky) == [("d", "passed", "flaky")]
    assert comparison.verdict_changes == ()  # b failed it before, a now
    assert comparison.selection_notes == (
        "1 test(s) new and 1 removed in checkpoints both runs evaluated: the tests themselves "
        "changed",
    )
    assert comparison.group_deltas()[Group.CORE] == (-3, 0)  # a, d (flaky), s; b


def test_a_checkpoint_stopped_before_its_tests_regresses_every_passing_test() -> None:
    baseline = make_run(
        make_checkpoint(
            make_test("a", Status.PASSED), make_test("b", Status.SKIPPED, Group.FUNCTIONALITY)
        )
    )
    timeout = Failure(FailureKind.TIMEOUT, "the session timeout of 5 s stopped the tests")
    now = make_run(make_checkpoint(failure=timeout))
    comparison = compare(now, baseline, "b")
    assert _ids(comparison.regressions) == [("a", "passed", NOT_RUN)]
    assert comparison.regressions[0].message == (
        "timeout: the session timeout of 5 s stopped the tests"
    )
    assert comparison.removed == () and comparison.fixed == ()
    (delta,) = comparison.verdict_changes
    assert (delta.passed_before, delta.passed_after) == (True, False)
    # And back: the repair is a fix of every test that passes again.
    back = compare(baseline, now, "b")
    assert _ids(back.fixed) == [("a", NOT_RUN, "passed")]
    assert back.new == () and back.regressions == ()


def test_different_selections_are_said_and_never_counted_as_fixes() -> None:
    first = make_checkpoint(make_test("a", Status.PASSED))
    second = make_checkpoint(make_test("a", Status.FAILED), name="checkpoint_2")
    baseline = make_run(first, second)
    now = make_run(replace(first, include_prior_tests=False))
    comparison = compare(now, baseline, "b")
    assert comparison.fixed == () and comparison.regressions == ()
    assert comparison.selection_notes == (
        "demo / checkpoint_1: earlier checkpoints' tests were included in the baseline and left "
        "out now",
        "not evaluated in this run, only in the baseline: demo / checkpoint_2",
    )
    assert [(d.checkpoint, d.passed_before, d.passed_after) for d in comparison.checkpoints] == [
        ("checkpoint_1", True, True),
        ("checkpoint_2", False, None),
    ]


def test_counts_of_the_groups_compare_only_checkpoints_both_runs_have() -> None:
    baseline = make_run(
        make_checkpoint(make_test("a", Status.PASSED), make_test("e", Status.PASSED, Group.ERROR))
    )
    now = make_run(
        make_checkpoint(make_test("a", Status.PASSED), make_test("e", Status.FAILED, Group.ERROR)),
        make_checkpoint(make_test("x", Status.PASSED), name="checkpoint_2"),
    )
    deltas = compare(now, baseline, "b").group_deltas()
    assert deltas[Group.CORE] == (0, 0)
    assert deltas[Group.ERROR] == (-1, 0)
    assert GroupCounts().flaky == 0


def test_an_interrupted_checkpoint_regresses_the_tests_it_did_not_run() -> None:
    """A submission that stops pytest after one test gains nothing: the baseline's passing
    tests that never ran are regressions, not removed tests."""
    baseline = make_run(
        make_checkpoint(
            make_test("a", Status.PASSED),
            make_test("b", Status.PASSED),
            make_test("c", Status.FAILED),
        )
    )
    stopped = Failure(FailureKind.INTERRUPTED, "pytest was interrupted (exit code 2)")
    run = make_run(make_checkpoint(make_test("a", Status.PASSED), failure=stopped))

    comparison = compare(run, baseline, "base")

    assert _ids(comparison.regressions) == [("b", "passed", NOT_RUN)]
    assert comparison.regressions[0].message == "interrupted: pytest was interrupted (exit code 2)"
    assert comparison.removed == () and comparison.new == ()


def test_the_baselines_quality_of_each_checkpoint_is_kept_when_it_was_measured() -> None:
    test = make_test("a", Status.PASSED)
    first = measured(make_checkpoint(test, name="checkpoint_1"), 0.05, 0.2)
    second = not_measured(make_checkpoint(test, name="checkpoint_2"), "scb-check timed out")
    third = make_checkpoint(test, name="checkpoint_3")
    baseline = make_run(first, second, third)

    comparison = compare(make_run(first, second, third), baseline, "base.json")

    assert [(d.verbosity_before, d.erosion_before) for d in comparison.checkpoints] == [
        (0.05, 0.2),
        (None, None),
        (None, None),
    ]


def test_a_baseline_judged_by_other_rules_is_said() -> None:
    run = make_run(make_checkpoint(make_test("a", Status.PASSED)))
    comparison = compare(run, replace(run, scbench="paper"), "b")
    assert comparison.selection_notes == (
        "the baseline was judged by the rules of --scbench paper, this run by those of "
        "--scbench 1.0",
    )
    assert compare(run, run, "b").selection_notes == ()
