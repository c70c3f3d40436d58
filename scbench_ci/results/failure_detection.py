"""What stopped a run from being an ordinary pass/fail of its tests, if anything did: asked of
the run's phases in their order (installing the runner, setup, the session's clock), then of
the seal on pytest's reports, then of pytest's exit code and report.
"""

from __future__ import annotations

from pathlib import Path

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.job.reports import Reports
from scbench_ci.results.log_tail import log_tail
from scbench_ci.results.model import Failure, FailureKind
from scbench_ci.trust.seal import Broken, Seal


def detect_failure(
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    log_dir: Path,
    session_timeout_s: float,
) -> Failure | None:
    """What stopped the run from being an ordinary pass/fail of its tests, if anything did.

    Only the runner's installation and a runner that did not start are infrastructure: once
    the test runner has started, the submission's code may have run, and whatever goes wrong
    from then on is a fail that says what happened.
    """
    return (
        _stopped_before_tests(execution, log_dir, session_timeout_s)
        or _unsealed(execution, seal, log_dir / PYTEST_LOG)
        or _pytest_failure(execution, reports, log_dir / PYTEST_LOG)
    )


def _stopped_before_tests(
    execution: ExecutionResult, log_dir: Path, session_timeout_s: float
) -> Failure | None:
    """The run was refused, the runner's installation or a setup command failed, or the
    session's clock ran out."""
    if execution.refused is not None:
        return Failure(FailureKind.RESOURCES, execution.refused, None)
    if execution.runner_exit_code is not None:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            "installing the test runner (pytest, its plugins and the test dependencies) failed "
            f"with exit code {execution.runner_exit_code}",
            log_tail(log_dir / SETUP_LOG),
        )
    if execution.timed_out_in is not None:
        log = log_dir / (SETUP_LOG if execution.timed_out_in == "setup" else PYTEST_LOG)
        return Failure(
            FailureKind.TIMEOUT,
            f"the session timeout of {session_timeout_s:g} s stopped the {execution.timed_out_in}",
            log_tail(log),
        )
    return None


def _unsealed(execution: ExecutionResult, seal: Seal | Broken, pytest_log: Path) -> Failure | None:
    """The test runner did not seal the reports it was to write, or they changed after it did."""
    code, limits = execution.exit_code, _limits(execution)
    if seal is Broken.NOT_STARTED:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            f"the test runner did not start (exit code {code})",
            log_tail(pytest_log),
        )
    if seal is Broken.UNSEALED:
        if limits:
            return Failure(
                FailureKind.RESOURCES,
                f"the test runner ended without reporting (exit code {code}): {limits}",
                log_tail(pytest_log),
            )
        return Failure(
            FailureKind.ABORTED,
            f"the test runner was stopped before it sealed its reports (exit code {code}): "
            "no test outcome is counted",
            log_tail(pytest_log),
        )
    if seal is Broken.MISMATCH:
        return Failure(
            FailureKind.TAMPERED,
            f"{seal.value}: something changed them after they were written, so no test outcome "
            "is counted",
            log_tail(pytest_log),
        )
    return None


def _pytest_failure(
    execution: ExecutionResult, reports: Reports | str, pytest_log: Path
) -> Failure | None:
    """pytest's exit code other than a pass (0) or failed tests (1), or a report that cannot
    be used."""
    code, limits = execution.exit_code, _limits(execution)
    if code == 4:
        return Failure(
            FailureKind.USAGE,
            "pytest rejected its command line (usage error)",
            log_tail(pytest_log),
        )
    if isinstance(reports, str):
        if limits:
            return Failure(
                FailureKind.RESOURCES,
                f"pytest's report could not be used ({reports}): {limits}",
                log_tail(pytest_log),
            )
        return Failure(
            FailureKind.REPORTS,
            f"pytest's report could not be used: {reports}",
            log_tail(pytest_log),
        )
    if code == 2 and reports.collection_errors:
        names = ", ".join(e.node_id or "(session)" for e in reports.collection_errors)
        text = "\n\n".join(e.message for e in reports.collection_errors)
        return Failure(FailureKind.COLLECTION, f"errors collecting {names}", text)
    if code == 2:
        return Failure(
            FailureKind.INTERRUPTED, "pytest was interrupted (exit code 2)", log_tail(pytest_log)
        )
    if code == 3 and limits:
        return Failure(
            FailureKind.RESOURCES,
            f"pytest stopped with an internal error: {limits}",
            log_tail(pytest_log),
        )
    if code == 5:
        return Failure(FailureKind.NO_TESTS, "pytest collected no tests", log_tail(pytest_log))
    if code not in (0, 1):
        return Failure(
            FailureKind.INTERNAL,
            f"pytest hit an internal error (exit code {code})",
            log_tail(pytest_log),
        )
    return None


def _limits(execution: ExecutionResult) -> str:
    """The limits the run reached, as a failure's message names them."""
    return "; ".join(execution.limits_hit)
