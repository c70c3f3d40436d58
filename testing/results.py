"""Results made by hand: executions, reports and test outcomes, runs, and the checkpoints of a
results.json document."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.job.reports import CollectionError, Reports, Status, TestOutcome
from scbench_ci.problem.model import Group
from scbench_ci.results.model import CheckpointResult, Failure, ProblemResult, RunResult, TestResult
from scbench_ci.results.network_causes import network_failures
from scbench_ci.results.quality import QualityMeasures, QualityOutcome, Unmeasured
from scbench_ci.results.verdict import count_groups, verdict


def make_outcome(
    name: str,
    status: Status,
    *markers: str,
    file: str = "test_checkpoint_1.py",
    message: str | None = None,
    traceback: str | None = None,
) -> TestOutcome:
    return TestOutcome(
        node_id=f"tests/{file}::{name}",
        file=f"tests/{file}",
        line=3,
        status=status,
        duration_s=0.1,
        markers=markers,
        message=message,
        traceback=traceback,
        keywords=(name, *markers),  # as pytest has them: its name, then its marks
    )


def make_run(
    *checkpoints: CheckpointResult,
    problem: str = "demo",
    version: int = 1,
    policy: str = "core-cases",
    duration_s: float = 1.0,
    started_at: str = "2026-01-01T00:00:00+00:00",
) -> RunResult:
    """A run of one problem's checkpoints, as `evaluate` returns it."""
    return RunResult(
        policy=policy,
        executor="local",
        jobs=1,
        started_at=started_at,
        duration_s=duration_s,
        problems=(ProblemResult(problem, f"/problems/{problem}", version, checkpoints),),
        tool_versions={"scbench-ci": "test"},
    )


def checkpoint_documents(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every checkpoint entry of a results.json document, problem by problem."""
    return [c for problem in results["problems"] for c in problem["checkpoints"]]


# `since`: the start of a failing streak, which is a run's own start when it begins then;
# `seconds`: how long the quality measure took.
VOLATILE = frozenset(
    {"started_at", "since", "duration_s", "phases", "seconds", "jobs", "tool_versions", "executor"}
)
"""What differs between two runs of the same tests: times, jobs, the executor."""


def comparable(document: object, volatile: frozenset[str] = VOLATILE) -> object:
    """A results.json document without the keys `volatile` names, at any depth."""
    if isinstance(document, dict):
        return {k: comparable(v, volatile) for k, v in document.items() if k not in volatile}
    if isinstance(document, list):
        return [comparable(item, volatile) for item in document]
    return document


def make_test(name: str, status: Status, group: Group = Group.CORE) -> TestResult:
    """A test of checkpoint_1 with a status; a failed one says so."""
    return TestResult(
        id=f"tests/test_checkpoint_1.py::{name}",
        checkpoint="checkpoint_1",
        group=group,
        status=status,
        duration_s=0.1,
        markers=(),
        message=None if status is Status.PASSED else f"{name} broke",
        traceback=None,
        file="tests/test_checkpoint_1.py",
        line=3,
    )


def make_checkpoint(
    *tests: TestResult, name: str = "checkpoint_1", failure: Failure | None = None
) -> CheckpointResult:
    """A checkpoint of these tests, passing when every Core test passed (and no failure)."""
    groups = count_groups(tests, flaky_passes=False)
    return CheckpointResult(
        name=name,
        include_prior_tests=True,
        passed=verdict("core-cases", failure, groups),
        failure=failure,
        pytest_exit_code=None if failure else 0,
        duration_s=1.0,
        groups=groups,
        tests=tests,
        warnings=(),
        network=network_failures(tests),
    )


def make_execution(
    exit_code: int | None = 1,
    setup: int | None = None,
    timed_out_in: str | None = None,
    runner: int | None = None,
    limits: tuple[str, ...] = (),
) -> ExecutionResult:
    return ExecutionResult(
        exit_code=exit_code,
        setup_exit_code=setup,
        timed_out_in=timed_out_in,  # type: ignore[arg-type]
        duration_s=1.5,
        runner_exit_code=runner,
        limits_hit=limits,
    )


def make_reports(
    *tests: TestOutcome, exit_code: int = 1, collection_errors: tuple[CollectionError, ...] = ()
) -> Reports:
    return Reports(
        tests=tests, exit_code=exit_code, collection_errors=collection_errors, problems=()
    )


def make_measures(
    verbosity: float, erosion: float, *, lines: int = 800, functions: int = 40
) -> QualityMeasures:
    """scb-check's figures for a checkpoint: the two ratios, the rest plausible."""
    return QualityMeasures(
        verbosity=verbosity,
        erosion=erosion,
        cog_erosion=erosion,
        total_loc=lines,
        total_functions=functions,
        verbosity_flagged_loc=round(verbosity * lines),
        high_cc_functions=round(erosion * functions),
        files_scanned=3,
        tool_version="0.2.0",
        seconds=1.5,
    )


def measured(checkpoint: CheckpointResult, verbosity: float, erosion: float) -> CheckpointResult:
    """The checkpoint with its code quality measured."""
    return replace(checkpoint, quality=QualityOutcome(make_measures(verbosity, erosion)))


def left_out(checkpoint: CheckpointResult, count: int, *files: str) -> CheckpointResult:
    """The measured checkpoint whose figures left `count` source files out, `files` named."""
    assert checkpoint.quality is not None, "measured first"
    unmeasured = Unmeasured(count, files)
    return replace(checkpoint, quality=replace(checkpoint.quality, unmeasured=unmeasured))


def not_measured(checkpoint: CheckpointResult, reason: str) -> CheckpointResult:
    """The checkpoint whose code quality could not be measured, and why."""
    return replace(checkpoint, quality=QualityOutcome(None, reason))
