"""Annotations: checkpoint failures, regressions and failing tests as errors, flaky tests as
warnings, within GitHub's limits, every property and message escaped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scbench_ci.job.reports import Status
from scbench_ci.outputs.github.annotations import MAX_ANNOTATIONS, error_annotations
from scbench_ci.results.compare import compare
from scbench_ci.results.model import RunResult
from testing.results import make_run
from tests.outputs.test_console import checkpoint, result_of

WORKSPACE = Path("/problems")
"""make_run's problem is /problems/demo."""


def compared(run: RunResult, baseline: RunResult) -> RunResult:
    return replace(run, comparison=compare(run, baseline, "baseline"))


def test_a_regression_is_an_error_and_a_flaky_test_a_warning() -> None:
    baseline = make_run(checkpoint([result_of("a", Status.PASSED), result_of("b", Status.FAILED)]))
    run = make_run(
        checkpoint(
            [
                result_of("a", Status.FAILED, "AssertionError: 1 == 2\nmore"),
                result_of("b", Status.FAILED, "still broken"),
                result_of("c", Status.FLAKY, "ConnectionError", reruns=2),
            ]
        )
    )
    where = "file=demo/tests/test_checkpoint_1.py,line=3"
    assert error_annotations(compared(run, baseline), WORKSPACE) == [
        "::error title=Regression%3A checkpoint_1 · Core · tests/test_checkpoint_1.py%3A%3Aa,"
        f"{where}::passed before, failed now: AssertionError: 1 == 2%0Amore",
        f"::error title=checkpoint_1 · Core · tests/test_checkpoint_1.py%3A%3Ab,{where}::"
        "still broken",
        "::warning title=Flaky%3A checkpoint_1 · Core · tests/test_checkpoint_1.py%3A%3Ac,"
        f"{where}::passed on attempt 3; first failure: ConnectionError",
    ]
    # Without a baseline the regressed test is an ordinary failing test.
    assert error_annotations(run, WORKSPACE)[0] == (
        f"::error title=checkpoint_1 · Core · tests/test_checkpoint_1.py%3A%3Aa,{where}::"
        "AssertionError: 1 == 2%0Amore"
    )


def test_errors_and_warnings_are_capped_each() -> None:
    names = [f"t{i}" for i in range(15)]
    baseline = make_run(checkpoint([result_of(name, Status.PASSED) for name in names]))
    run = make_run(
        checkpoint(
            [result_of(name, Status.FAILED) for name in names]
            + [result_of(f"f{i}", Status.FLAKY, reruns=1) for i in range(15)]
        )
    )
    lines = error_annotations(compared(run, baseline), WORKSPACE)
    errors = [line for line in lines if line.startswith("::error title=Regression%3A ")]
    warnings = [line for line in lines if line.startswith("::warning title=Flaky%3A ")]
    assert (len(errors), len(warnings), len(lines)) == (MAX_ANNOTATIONS, MAX_ANNOTATIONS, 20)
    assert warnings[-1].endswith("::passed on attempt 2")  # no message, no dangling colon


def test_hostile_test_ids_stay_inside_their_property() -> None:
    hostile = "t[x\r\n::error::a,file=/etc/passwd,line=1::%0A]"
    baseline = make_run(checkpoint([result_of(hostile, Status.PASSED)]))
    run = make_run(
        checkpoint(
            [
                result_of(hostile, Status.FAILED, "m\n::error::injected"),
                result_of(f"{hostile}2", Status.FLAKY, "f\r\n::warning::injected", reruns=1),
            ]
        )
    )
    regression, warning = error_annotations(compared(run, baseline), WORKSPACE)
    # A property is one line: its line break is shown as `\n`, its `:` and `,` percent-escaped.
    escaped = "t[x\\n%3A%3Aerror%3A%3Aa%2Cfile=/etc/passwd%2Cline=1%3A%3A%250A]"
    assert regression == (
        f"::error title=Regression%3A checkpoint_1 · Core · tests/test_checkpoint_1.py%3A%3A"
        f"{escaped},file=demo/tests/test_checkpoint_1.py,line=3::passed before, failed now: "
        "m%0A::error::injected"
    )
    assert warning.startswith(
        "::warning title=Flaky%3A checkpoint_1 · Core · "
        f"tests/test_checkpoint_1.py%3A%3A{escaped}2,file="
    )
    assert warning.endswith("::passed on attempt 2; first failure: f%0A::warning::injected")
