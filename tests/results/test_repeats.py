"""A checkpoint run several times: each test's pass count, flaky when its outcome differs."""

from __future__ import annotations

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.model import Failure, FailureKind, RepeatCount
from scbench_ci.results.repeats import combine_runs
from testing.results import make_checkpoint, make_test


def test_pass_counts_and_flaky_tests() -> None:
    runs = [
        make_checkpoint(
            make_test("a", Status.PASSED),
            make_test("b", Status.PASSED),
            make_test("c", Status.FAILED),
        ),
        make_checkpoint(
            make_test("a", Status.PASSED),
            make_test("b", Status.FAILED),
            make_test("c", Status.FAILED),
        ),
        make_checkpoint(
            make_test("a", Status.PASSED),
            make_test("b", Status.PASSED),
            make_test("c", Status.FAILED),
        ),
    ]
    combined = combine_runs(runs, "core-cases", flaky_passes=False)
    by_name = {t.id.split("::")[1]: t for t in combined.tests}
    assert {name: (t.status, t.repeat) for name, t in by_name.items()} == {
        "a": (Status.PASSED, RepeatCount(3, 3)),
        "b": (Status.FLAKY, RepeatCount(2, 3)),
        "c": (Status.FAILED, RepeatCount(0, 3)),
    }
    assert by_name["b"].message == "run 2: b broke"
    core = combined.groups[Group.CORE]
    assert (core.passed, core.failed, core.flaky, core.total) == (1, 2, 1, 3)
    assert not combined.passed
    assert combined.duration_s == 3.0


def test_flaky_tests_may_pass_and_a_stopped_run_fails_the_checkpoint() -> None:
    runs = [
        make_checkpoint(make_test("a", Status.PASSED), make_test("b", Status.FAILED)),
        make_checkpoint(make_test("a", Status.PASSED), make_test("b", Status.PASSED)),
    ]
    combined = combine_runs(runs, "core-cases", flaky_passes=True)
    assert combined.passed
    assert combined.groups[Group.CORE].passed == 2
    stopped = make_checkpoint(failure=Failure(FailureKind.TIMEOUT, "the session timeout"))
    combined = combine_runs([*runs, stopped], "core-cases", flaky_passes=True)
    assert not combined.passed
    assert combined.failure == Failure(FailureKind.TIMEOUT, "run 3 of 3: the session timeout")
    assert [t.repeat for t in combined.tests] == [RepeatCount(2, 2), RepeatCount(1, 2)]
