from pathlib import Path

import pytest

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.job.reports import CollectionError, Reports
from scbench_ci.results.failure_detection import detect_failure
from scbench_ci.results.model import FailureKind
from scbench_ci.trust.seal import Broken, Seal
from testing.results import make_execution, make_reports

SEALED = Seal(killed=0)
MEMORY = "the memory limit (4g) was reached: the kernel killed 1 process(es)"
NO_REPORT = "pytest-report.json was not written"


@pytest.mark.parametrize(
    ("execution", "seal", "reports", "kind", "message"),
    [
        (
            make_execution(None, runner=2),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.INFRASTRUCTURE,
            "installing the test runner (pytest, its plugins and the test dependencies) failed "
            "with exit code 2",
        ),
        (
            make_execution(None, timed_out_in="tests"),
            Broken.UNSEALED,
            NO_REPORT,
            FailureKind.TIMEOUT,
            "the session timeout of 60 s stopped the tests",
        ),
        (
            make_execution(None, timed_out_in="setup"),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.TIMEOUT,
            "the session timeout of 60 s stopped the setup",
        ),
        (
            make_execution(2),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.INFRASTRUCTURE,
            "the test runner did not start (exit code 2)",
        ),
        (
            make_execution(137),
            Broken.UNSEALED,
            make_reports(exit_code=0),
            FailureKind.ABORTED,
            "the test runner was stopped before it sealed its reports (exit code 137): no test "
            "outcome is counted",
        ),
        (
            make_execution(137, limits=(MEMORY,)),
            Broken.UNSEALED,
            NO_REPORT,
            FailureKind.RESOURCES,
            f"the test runner ended without reporting (exit code 137): {MEMORY}",
        ),
        (
            make_execution(1),
            Broken.MISMATCH,
            make_reports(exit_code=0),
            FailureKind.TAMPERED,
            "the reports are not the ones the test runner wrote (their seal does not match): "
            "something changed them after they were written, so no test outcome is counted",
        ),
        (
            make_execution(1),
            SEALED,
            "pytest-report.json is larger than 268435456 bytes",
            FailureKind.REPORTS,
            "pytest's report could not be used: pytest-report.json is larger than 268435456 bytes",
        ),
        (
            make_execution(1, limits=(MEMORY,)),
            SEALED,
            NO_REPORT,
            FailureKind.RESOURCES,
            f"pytest's report could not be used ({NO_REPORT}): {MEMORY}",
        ),
        (
            make_execution(2),
            SEALED,
            make_reports(
                exit_code=2,
                collection_errors=(
                    CollectionError("tests/test_checkpoint_2.py", "E   SyntaxError"),
                ),
            ),
            FailureKind.COLLECTION,
            "errors collecting tests/test_checkpoint_2.py",
        ),
        (
            make_execution(2),
            SEALED,
            make_reports(exit_code=2),
            FailureKind.INTERRUPTED,
            "pytest was interrupted (exit code 2)",
        ),
        (
            make_execution(3),
            SEALED,
            make_reports(exit_code=3),
            FailureKind.INTERNAL,
            "pytest hit an internal error (exit code 3)",
        ),
        (
            make_execution(3, limits=(MEMORY,)),
            SEALED,
            make_reports(exit_code=3),
            FailureKind.RESOURCES,
            f"pytest stopped with an internal error: {MEMORY}",
        ),
        (
            make_execution(4),
            SEALED,
            NO_REPORT,
            FailureKind.USAGE,
            "pytest rejected its command line (usage error)",
        ),
        (
            make_execution(5),
            SEALED,
            make_reports(exit_code=5),
            FailureKind.NO_TESTS,
            "pytest collected no tests",
        ),
    ],
)
def test_failure_kinds(
    logs: Path,
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    kind: FailureKind,
    message: str,
) -> None:
    failure = detect_failure(execution, seal, reports, logs, 60)
    assert failure is not None
    assert (failure.kind, failure.message) == (kind, message)
    assert failure.log_tail


def test_a_failing_setup_command_is_no_failure_the_tests_decide(logs: Path) -> None:
    """As under SCBench, whose entry script runs its setup lines without `set -e`."""
    assert detect_failure(make_execution(1, setup=2), SEALED, make_reports(), logs, 60) is None
    stopped = detect_failure(
        make_execution(None, setup=2, timed_out_in="setup"), Broken.NOT_STARTED, NO_REPORT, logs, 60
    )
    assert stopped is not None and stopped.kind is FailureKind.TIMEOUT
    assert stopped.log_tail is not None and "no such package: nope" in stopped.log_tail


def test_failure_log_tails(logs: Path) -> None:
    aborted = detect_failure(make_execution(1), Broken.UNSEALED, NO_REPORT, logs, 60)
    assert aborted is not None and aborted.log_tail is not None
    assert aborted.log_tail.splitlines() == [f"line {i}" for i in range(60, 100)]
    collection = detect_failure(
        make_execution(2),
        SEALED,
        make_reports(
            exit_code=2,
            collection_errors=(CollectionError("a", "first"), CollectionError("b", "second")),
        ),
        logs,
        60,
    )
    assert collection is not None and collection.log_tail == "first\n\nsecond"


def test_ordinary_runs_have_no_failure(logs: Path) -> None:
    assert detect_failure(make_execution(0), SEALED, make_reports(exit_code=0), logs, 60) is None
    assert detect_failure(make_execution(1), SEALED, make_reports(), logs, 60) is None
