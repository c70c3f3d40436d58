"""Per-checkpoint results: failure kind, test groups, counts, verdict; results.json."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from scbench_ci import policy
from scbench_ci.categorize import group_of, owning_checkpoint
from scbench_ci.executors.base import PYTEST_LOG, SETUP_LOG, ExecutionResult
from scbench_ci.policy import GroupCounts
from scbench_ci.problem import Checkpoint, Group, Problem
from scbench_ci.reports import FAILING, PASSING, Reports, Status

SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"
LOG_TAIL_LINES = 40
LOG_TAIL_CHARS = 6000


class FailureKind(StrEnum):
    SETUP = "setup"
    TIMEOUT = "timeout"
    INFRASTRUCTURE = "infrastructure"
    COLLECTION = "collection"
    NO_TESTS = "no_tests"
    USAGE = "usage"
    INTERNAL = "internal"
    TAMPERED = "tampered"
    """The reports are not the ones pytest wrote: they were changed or forged."""


INFRASTRUCTURE_KINDS = frozenset({FailureKind.INFRASTRUCTURE, FailureKind.INTERNAL})


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    message: str
    log_tail: str | None = None


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest test class

    id: str
    checkpoint: str
    group: Group
    status: Status
    duration_s: float
    markers: tuple[str, ...]
    message: str | None
    details: str | None
    file: str
    line: int | None


@dataclass(frozen=True)
class CheckpointResult:
    name: str
    include_prior_tests: bool
    passed: bool
    failure: Failure | None
    pytest_exit_code: int | None
    duration_s: float
    groups: dict[Group, GroupCounts]
    tests: tuple[TestResult, ...]
    warnings: tuple[str, ...]

    @property
    def counts(self) -> GroupCounts:
        return _add(self.groups.values())


@dataclass(frozen=True)
class EvaluationResult:
    problem: Problem
    policy: str
    executor: str
    started_at: str
    duration_s: float
    checkpoints: tuple[CheckpointResult, ...]
    tool_versions: dict[str, str]

    @property
    def passed(self) -> bool:
        return bool(self.checkpoints) and all(c.passed for c in self.checkpoints)

    def group_totals(self) -> dict[Group, GroupCounts]:
        """Each group's counts added up over the evaluated checkpoints."""
        return {group: _add(c.groups[group] for c in self.checkpoints) for group in Group}

    @property
    def infrastructure_failure(self) -> bool:
        return any(
            c.failure is not None and c.failure.kind in INFRASTRUCTURE_KINDS
            for c in self.checkpoints
        )


def judge_checkpoint(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    tested: tuple[Checkpoint, ...],
    include_prior_tests: bool,
    execution: ExecutionResult,
    reports: Reports | None,
    log_dir: Path,
    policy_name: str,
    session_timeout_s: float,
    warnings: tuple[str, ...],
    untrusted_reports: str | None = None,
) -> CheckpointResult:
    """`untrusted_reports` says why the reports cannot be believed, when they cannot: their
    outcomes are then left out."""
    if untrusted_reports is not None:
        reports = None
    tests = tuple(
        TestResult(
            id=outcome.node_id,
            checkpoint=(owner := owning_checkpoint(outcome.file, tested, checkpoint)).name,
            group=group_of(outcome.markers, owner, checkpoint, problem.markers),
            status=outcome.status,
            duration_s=outcome.duration_s,
            markers=outcome.markers,
            message=outcome.message,
            details=outcome.details,
            file=outcome.file,
            line=outcome.line,
        )
        for outcome in (reports.tests if reports else ())
    )
    groups = {group: _count(t for t in tests if t.group is group) for group in Group}
    failure = (
        Failure(FailureKind.TAMPERED, untrusted_reports, log_tail(log_dir / PYTEST_LOG))
        if untrusted_reports is not None
        else detect_failure(execution, reports, log_dir, session_timeout_s)
    )
    if failure is not None and failure.kind in INFRASTRUCTURE_KINDS and execution.limits_hit:
        failure = replace(failure, message=f"{failure.message}; {'; '.join(execution.limits_hit)}")
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=failure is None and policy.passes(policy_name, groups),
        failure=failure,
        pytest_exit_code=execution.exit_code,
        duration_s=round(execution.duration_s, 3),
        groups=groups,
        tests=tests,
        warnings=(
            *warnings,
            *execution.limits_hit,
            *_execution_warnings(execution),
            *(reports.problems if reports else ()),
        ),
    )


def _execution_warnings(execution: ExecutionResult) -> tuple[str, ...]:
    if execution.leftover_processes and execution.timed_out_in is None:
        return (
            f"{execution.leftover_processes} process(es) were still running after their "
            "command ended and were killed",
        )
    return ()


def infrastructure_result(
    checkpoint: Checkpoint, include_prior_tests: bool, message: str, warnings: tuple[str, ...]
) -> CheckpointResult:
    """The result of a checkpoint whose tests could not be run at all."""
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=False,
        failure=Failure(FailureKind.INFRASTRUCTURE, message),
        pytest_exit_code=None,
        duration_s=0.0,
        groups={group: GroupCounts() for group in Group},
        tests=(),
        warnings=warnings,
    )


def detect_failure(
    execution: ExecutionResult, reports: Reports | None, log_dir: Path, session_timeout_s: float
) -> Failure | None:
    """What stopped the run from being an ordinary pass/fail of its tests, if anything did."""
    pytest_log = log_dir / PYTEST_LOG
    if execution.runner_exit_code is not None:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            "installing the test runner (pytest, its plugins and the test dependencies) failed "
            f"with exit code {execution.runner_exit_code}",
            log_tail(log_dir / SETUP_LOG),
        )
    if execution.setup_exit_code is not None:
        return Failure(
            FailureKind.SETUP,
            f"a setup command failed with exit code {execution.setup_exit_code}",
            log_tail(log_dir / SETUP_LOG),
        )
    if execution.timed_out_in is not None:
        log = log_dir / (SETUP_LOG if execution.timed_out_in == "setup" else PYTEST_LOG)
        return Failure(
            FailureKind.TIMEOUT,
            f"the session timeout of {session_timeout_s:g} s stopped the {execution.timed_out_in}",
            log_tail(log),
        )
    code = execution.exit_code
    if reports is None:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            f"pytest wrote no report (exit code {code})",
            log_tail(pytest_log),
        )
    if code == 2:
        names = ", ".join(e.node_id or "(session)" for e in reports.collection_errors)
        text = "\n\n".join(e.message for e in reports.collection_errors) or log_tail(pytest_log)
        return Failure(
            FailureKind.COLLECTION, f"test collection failed{': ' + names if names else ''}", text
        )
    if code == 3:
        return Failure(FailureKind.INTERNAL, "pytest hit an internal error", log_tail(pytest_log))
    if code == 4:
        return Failure(
            FailureKind.USAGE,
            "pytest rejected its command line (usage error)",
            log_tail(pytest_log),
        )
    if code == 5:
        return Failure(FailureKind.NO_TESTS, "pytest collected no tests", log_tail(pytest_log))
    if code not in (0, 1):
        return Failure(
            FailureKind.INFRASTRUCTURE, f"pytest ended with exit code {code}", log_tail(pytest_log)
        )
    return None


def log_tail(path: Path) -> str | None:
    if not path.is_file():
        return None
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - LOG_TAIL_CHARS * 4))
        text = stream.read().decode("utf-8", errors="replace")
    tail = "\n".join(text.splitlines()[-LOG_TAIL_LINES:])
    return tail[-LOG_TAIL_CHARS:]


def _count(tests: Iterable[TestResult]) -> GroupCounts:
    passed = failed = skipped = total = 0
    for test in tests:
        total += 1
        if test.status in PASSING:
            passed += 1
        elif test.status in FAILING:
            failed += 1
        else:
            skipped += 1
    return GroupCounts(passed=passed, failed=failed, skipped=skipped, total=total)


def _add(counts: Iterable[GroupCounts]) -> GroupCounts:
    return sum(counts, GroupCounts())


def to_json(result: EvaluationResult) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "problem": {"name": result.problem.name, "version": result.problem.version},
        "policy": result.policy,
        "policy_description": policy.describe(result.policy),
        "passed": result.passed,
        "infrastructure_failure": result.infrastructure_failure,
        "executor": result.executor,
        "started_at": result.started_at,
        "duration_s": round(result.duration_s, 3),
        "tool_versions": result.tool_versions,
        "checkpoints": [_checkpoint_json(c) for c in result.checkpoints],
    }


def _counts_json(counts: GroupCounts) -> dict[str, Any]:
    return {
        "passed": counts.passed,
        "failed": counts.failed,
        "skipped": counts.skipped,
        "total": counts.total,
        "pass_rate": counts.pass_rate,
    }


def _checkpoint_json(result: CheckpointResult) -> dict[str, Any]:
    failure = result.failure
    return {
        "name": result.name,
        "include_prior_tests": result.include_prior_tests,
        "passed": result.passed,
        "failure": None
        if failure is None
        else {
            "kind": failure.kind.value,
            "message": failure.message,
            "log_tail": failure.log_tail,
        },
        "pytest_exit_code": result.pytest_exit_code,
        "duration_s": result.duration_s,
        "totals": _counts_json(result.counts),
        "groups": {group.value: _counts_json(counts) for group, counts in result.groups.items()},
        "warnings": list(result.warnings),
        "tests": [
            {
                "id": test.id,
                "checkpoint": test.checkpoint,
                "group": test.group.value,
                "status": test.status.value,
                "duration_s": test.duration_s,
                "markers": list(test.markers),
                "message": test.message,
                "details": test.details,
                "file": test.file,
                "line": test.line,
            }
            for test in result.tests
        ],
    }


def write_results(result: EvaluationResult, output_dir: Path) -> Path:
    path = output_dir / RESULTS_FILE
    path.write_text(
        json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return path
