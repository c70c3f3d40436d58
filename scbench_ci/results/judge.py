"""A checkpoint's result from its run: each test's outcome in its group, the counts, what
stopped the run if anything did (`failure_detection.py`), and the verdict."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.foundation.scbench_runner import ScbenchRunner
from scbench_ci.job.reports import Reports
from scbench_ci.problem.model import Checkpoint, Group, Problem
from scbench_ci.results.categorize import group_of, owning_checkpoint
from scbench_ci.results.failure_detection import detect_failure
from scbench_ci.results.log_tail import log_tail
from scbench_ci.results.model import CheckpointResult, Failure, ScbenchRecord, TestResult
from scbench_ci.results.network_causes import network_failures
from scbench_ci.results.policy import GroupCounts, counted
from scbench_ci.results.quality_report import read_quality
from scbench_ci.results.scbench_rules import judge_by_1_0
from scbench_ci.results.verdict import count_groups, counts_skipped, verdict
from scbench_ci.trust.seal import Broken, Seal


def judge_checkpoint(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    include_prior_tests: bool,
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    log_dir: Path,
    policy_name: str,
    session_timeout_s: float,
    warnings: tuple[str, ...],
    scbench: ScbenchRunner,
    flaky_passes: bool = False,
    inventory: bytes | None = None,
    inventory_expected: bool = False,
) -> CheckpointResult:
    """Outcomes count only from sealed reports: `reports` is ignored unless `seal` is a Seal; as
    a string, it says why there are no outcomes. `scbench`: whose rules decide; `inventory`:
    SCBench 1.0's inventory of the tests as the runner sealed it; `inventory_expected`: the run
    was to take it (an evaluation under SCBench 1.0's rules, which alone they judge)."""
    trusted = reports if isinstance(seal, Seal) and isinstance(reports, Reports) else None
    tests = tuple(
        TestResult(
            id=outcome.node_id,
            checkpoint=(owner := owning_checkpoint(outcome.file, checkpoint)),
            group=group_of(outcome.keywords, owner, checkpoint, problem.markers),
            status=outcome.status,
            duration_s=outcome.duration_s,
            markers=outcome.markers,
            message=outcome.message,
            traceback=outcome.traceback,
            file=outcome.file,
            line=outcome.line,
            reruns=outcome.reruns,
        )
        for outcome in (trusted.tests if trusted else ())
    )
    failure = detect_failure(execution, seal, reports, log_dir, session_timeout_s)
    record: ScbenchRecord | None = None
    rules_warnings: tuple[str, ...] = ()
    # SCBench 1.0 judges an evaluation: a run that took its inventory (not `check`'s collection).
    exit_codes = scbench.infrastructure_exit_codes if inventory_expected else None
    if exit_codes is not None and execution.exit_code is not None:
        judged = judge_by_1_0(
            tests,
            inventory,
            evaluated=checkpoint.name,
            exit_code=execution.exit_code,
            exit_codes=exit_codes,
            inventory_expected=inventory_expected,
        )
        tests, record = judged.tests, judged.record
        rules_warnings = () if judged.warning is None else (judged.warning,)
        if failure is None and judged.failure is not None:
            kind, message = judged.failure
            failure = Failure(kind, message, log_tail(log_dir / PYTEST_LOG))
        elif judged.unreported:
            rules_warnings += (
                f"{counted(judged.unreported, 'test')} of SCBench 1.0's inventory never reported "
                "an outcome: each counts as failed, as SCBench 1.0 counts it",
            )
    groups = count_groups(tests, flaky_passes, counts_skipped(scbench, record))
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=verdict(policy_name, failure, groups),
        failure=failure,
        pytest_exit_code=execution.exit_code,
        duration_s=round(execution.duration_s, 3),
        groups=groups,
        tests=tests,
        warnings=(
            *warnings,
            *execution.limits_hit,
            *_execution_warnings(execution),
            *(trusted.problems if trusted else ()),
            *rules_warnings,
        ),
        image=execution.image,
        quality=read_quality(execution.quality),
        network=network_failures(tests),
        scbench=record,
    )


def _execution_warnings(execution: ExecutionResult) -> tuple[str, ...]:
    warnings = []
    if execution.setup_exit_code is not None:
        # SCBench's entry script goes on too: its setup commands are lines without `set -e`.
        warnings.append(
            f"a setup command failed with exit code {execution.setup_exit_code} (see "
            f"{SETUP_LOG}); the tests ran all the same, as under SCBench"
        )
    if execution.leftover_processes and execution.timed_out_in is None:
        warnings.append(
            f"{execution.leftover_processes} process(es) were still running after their "
            "command ended and were killed"
        )
    return tuple(warnings)


def unrun_result(
    checkpoint: Checkpoint,
    include_prior_tests: bool,
    failure: Failure,
    warnings: tuple[str, ...] = (),
) -> CheckpointResult:
    """The result of a checkpoint whose tests could not be run at all."""
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=False,
        failure=failure,
        pytest_exit_code=None,
        duration_s=0.0,
        groups={group: GroupCounts() for group in Group},
        tests=(),
        warnings=warnings,
    )
