"""`scbench-ci check` as one run: each problem's static findings, then the runs of every problem
without static errors through the evaluation pipeline (all problems' jobs side by side), judged
stage by stage. The run's checkpoints are the oracle runs, their repeats combined."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from scbench_ci.check.changed import changed_problems
from scbench_ci.check.jobs import CheckpointRuns, check_jobs, checkpoint_runs, has_solutions
from scbench_ci.check.known_failures import read_known_failures
from scbench_ci.check.stages import (
    Place,
    collection_findings,
    empty_findings,
    flaky_findings,
    known_list_findings,
    oracle_findings,
    time_findings,
)
from scbench_ci.check.static import SOLUTIONS_DIR, static_findings
from scbench_ci.command import per_test_timeout
from scbench_ci.errors import UsageError
from scbench_ci.evaluation import EvaluationRequest, run_evaluations, tool_versions
from scbench_ci.executors.base import Executor
from scbench_ci.options import EvaluationOptions
from scbench_ci.plan import Job, problem_folders
from scbench_ci.problem.model import Problem, real_path
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import prepare_output

DEFAULT_REPEAT = 2
DEFAULT_ORACLE_POLICY = "all-cases"
DYNAMIC_STAGES = frozenset(Stage) - {Stage.STATIC}
WITHOUT_SOLUTIONS = frozenset({Stage.FLAKY, Stage.TIME})
"""The stages a problem without reference solutions skips (the oracle says why)."""


@dataclass(frozen=True)
class CheckRequest:
    evaluation: EvaluationRequest
    """The problems and how their runs are made (output folder, `--jobs`, the executor's
    settings, timeouts); its policy is the oracle policy, its repeat the number of oracle
    runs of each checkpoint."""
    changed_since: str | None = None
    """Only the problems with files changed since this git ref."""


def check_request(
    options: EvaluationOptions, *, oracle_policy: str, repeat: int, changed_since: str | None
) -> CheckRequest:
    """The check of `options.problems`, its runs made as `options` says."""
    evaluation = replace(options, checkpoint="all", policy=oracle_policy, repeat=repeat)
    return CheckRequest(evaluation.request(), changed_since)


def run_check(request: CheckRequest, executor: Executor, echo: TextIO | None) -> RunResult:
    """Check every problem of the request; `echo` gets the runs' output as `evaluate` gives
    it. A run without problems: `--changed-since` selected none."""
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    evaluation = request.evaluation
    folders = problem_folders(evaluation.problems)
    if request.changed_since is not None:
        folders = tuple(changed_problems(folders, request.changed_since))
    _refuse_unusable(folders)
    if not evaluation.own_output:
        prepare_output(evaluation.output_dir, {folder: "the problem" for folder in folders})
    statics = [(folder, *static_findings(folder)) for folder in folders]
    sound = [
        problem
        for _, findings, problem in statics
        if problem is not None and not _has_errors(findings)
    ]
    with scratch_folder("scbench-empty-") as empty:
        jobs = [
            job
            for problem in sound
            for job in check_jobs(
                problem,
                empty=empty,
                repeat=evaluation.repeat,
                include_prior_tests=evaluation.include_prior_tests,
            )
        ]
        results = run_evaluations(evaluation, jobs, executor, echo)
    return RunResult(
        policy=evaluation.policy,
        executor=executor.name,
        jobs=max(1, min(evaluation.jobs, len(jobs))),
        started_at=started_at,
        duration_s=time.monotonic() - started,
        problems=tuple(
            _problem_result(folder, findings, problem, results, evaluation)
            for folder, findings, problem in statics
        ),
        tool_versions=tool_versions(),
        reruns=evaluation.reruns,
        repeat=evaluation.repeat,
        flaky_passes=evaluation.flaky_passes,
    )


def _refuse_unusable(folders: Sequence[Path]) -> None:
    """Also a folder that is not there: a mistyped path, not a problem's defect."""
    names: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder")
        if folder.name in names:
            raise UsageError(
                f"{folder} and {names[folder.name]} have the same folder name, and so would "
                "share an output folder"
            )
        names[folder.name] = folder


def _has_errors(findings: Sequence[Finding]) -> bool:
    return any(finding.severity is Severity.ERROR for finding in findings)


def _problem_result(
    folder: Path,
    static: list[Finding],
    problem: Problem | None,
    results: Sequence[tuple[Job, CheckpointResult]],
    evaluation: EvaluationRequest,
) -> ProblemResult:
    if problem is None:
        # config.yaml does not load: no version, no checkpoints.
        report = CheckReport(tuple(static), skipped=DYNAMIC_STAGES)
        return ProblemResult(folder.name, str(folder), 0, (), check=report)
    order = tuple(checkpoint.name for checkpoint in problem.checkpoints)
    oracle: tuple[CheckpointResult, ...] = ()
    if _has_errors(static):
        report = CheckReport(tuple(static), skipped=DYNAMIC_STAGES)
    else:
        runs = checkpoint_runs(problem, results)
        report = _judged(problem, static, runs, evaluation)
        oracle = tuple(run.oracle[1] for run in runs if run.oracle is not None)
    return ProblemResult(
        problem.root.name, str(problem.root), problem.version, oracle, order, check=report
    )


def _judged(
    problem: Problem,
    static: list[Finding],
    runs: list[CheckpointRuns],
    evaluation: EvaluationRequest,
) -> CheckReport:
    place = Place(problem, problem.root.parent)
    output_dir = real_path(evaluation.output_dir)
    infrastructure: list[str] = []

    def usable(job: Job, result: CheckpointResult) -> bool:
        """Whether the run can be judged: the infrastructure did not stop it."""
        if result.failure is not None and result.infrastructure_failure:
            where = f"{problem.root.name} / {job.checkpoint.name} {job.role}"
            infrastructure.append(f"{where}: {result.failure.message}")
            return False
        return True

    found: list[Finding] = []
    for run in runs:
        job, result = run.collect
        if usable(job, result):
            reports = output_dir / job.artifacts
            found += collection_findings(place, run.checkpoint, result, reports)
    # When the tests do not collect, the other runs fail for that same reason.
    run_failures = not found
    known, _ = read_known_failures(problem)  # the list's own defects are static findings
    finished: list[CheckpointResult] = []
    for run in runs:
        if run.oracle is not None and usable(*run.oracle):
            result = run.oracle[1]
            finished.append(result)
            found += oracle_findings(
                place, run.checkpoint, result, known, evaluation.policy, run_failures
            )
            found += flaky_findings(place, run.checkpoint, result.tests)
            timeout = per_test_timeout(run.checkpoint, evaluation.test_timeout_s)
            found += time_findings(place, run.checkpoint, result.tests, timeout)
        if usable(*run.empty):
            found += empty_findings(place, run.checkpoint, run.empty[1], run_failures)
    skipped: frozenset[Stage] = frozenset()
    if has_solutions(problem):
        found += known_list_findings(known, finished)
    else:
        skipped = WITHOUT_SOLUTIONS
        found.append(
            Finding(
                Stage.ORACLE,
                Severity.WARNING,
                place.file(SOLUTIONS_DIR),
                None,
                f"the problem ships no reference solutions ({SOLUTIONS_DIR}/<checkpoint>/): "
                "the oracle, flaky and time checks are not run",
            )
        )
    return CheckReport(
        (*static, *_once_per_test(found)), skipped=skipped, infrastructure=tuple(infrastructure)
    )


def _once_per_test(findings: list[Finding]) -> list[Finding]:
    """In stage order; a flaky or slow test once, though each later checkpoint's oracle runs
    it again (`include_prior_tests`)."""
    seen: set[tuple[Stage, str]] = set()
    kept = []
    for finding in sorted(findings, key=lambda finding: list(Stage).index(finding.stage)):
        if finding.stage in (Stage.FLAKY, Stage.TIME) and finding.test is not None:
            if (finding.stage, finding.test) in seen:
                continue
            seen.add((finding.stage, finding.test))
        kept.append(finding)
    return kept
