"""A checked problem's report: its static findings, then what its runs (collect, oracle, empty;
`check/jobs.py`) show, judged stage by stage. The run's checkpoints are the oracle runs, their
repeats combined."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scbench_ci.check.jobs import CheckpointRuns, checkpoint_runs, has_solutions
from scbench_ci.check.known_failures import read_known_failures
from scbench_ci.check.stages import (
    Place,
    collection_findings,
    empty_findings,
    flaky_findings,
    inventory_findings,
    known_list_findings,
    network_findings,
    oracle_findings,
    time_findings,
)
from scbench_ci.check.static import SOLUTIONS_DIR
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.paths import real_path
from scbench_ci.foundation.scbench_runner import scbench_runner
from scbench_ci.job.plan import Job
from scbench_ci.options import EvaluationOptions
from scbench_ci.problem.model import Problem
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import CheckpointResult, ProblemResult
from scbench_ci.trust.names import MAX_PROBLEM_NAME_CHARS, name_problem
from scbench_ci.trust.terminal import quoted

DYNAMIC_STAGES = frozenset(Stage) - {Stage.STATIC}
WITHOUT_SOLUTIONS = frozenset({Stage.FLAKY, Stage.TIME})
"""The stages a problem without reference solutions skips (the oracle says why)."""


def refuse_unusable(folders: Sequence[Path]) -> None:
    """Also a folder that is not there: a mistyped path, not a problem's defect."""
    names: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder")
        # The folder's name names the problem in results.json and every output.
        wrong = name_problem(folder.name, MAX_PROBLEM_NAME_CHARS)
        if wrong is not None:
            raise UsageError(
                f"{folder.parent}: the problem folder's name {quoted(folder.name)} {wrong}"
            )
        if folder.name in names:
            raise UsageError(
                f"{folder} and {names[folder.name]} have the same folder name, and so would "
                "share an output folder"
            )
        names[folder.name] = folder


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(finding.severity is Severity.ERROR for finding in findings)


def problem_result(
    folder: Path,
    static: list[Finding],
    problem: Problem | None,
    results: Sequence[tuple[Job, CheckpointResult]],
    options: EvaluationOptions,
) -> ProblemResult:
    """`options`: how the runs were made (CheckOptions.runs)."""
    if problem is None:
        # config.yaml does not load: no version, no checkpoints.
        report = CheckReport(tuple(static), skipped=DYNAMIC_STAGES)
        return ProblemResult(folder.name, str(folder), 0, (), check=report)
    order = tuple(checkpoint.name for checkpoint in problem.checkpoints)
    oracle: tuple[CheckpointResult, ...] = ()
    if has_errors(static):
        report = CheckReport(tuple(static), skipped=DYNAMIC_STAGES)
    else:
        runs = checkpoint_runs(problem, results)
        report = _judged(problem, static, runs, options)
        oracle = tuple(run.oracle[1] for run in runs if run.oracle is not None)
    return ProblemResult(
        problem.root.name, str(problem.root), problem.version, oracle, order, check=report
    )


def _judged(
    problem: Problem,
    static: list[Finding],
    runs: list[CheckpointRuns],
    options: EvaluationOptions,
) -> CheckReport:
    place = Place(problem, problem.root.parent)
    output_dir = real_path(options.output_dir)
    scbench = scbench_runner(options.scbench)
    infrastructure: list[str] = []

    def usable(job: Job, result: CheckpointResult) -> bool:
        """Whether the run can be judged: the infrastructure did not stop it."""
        if result.failure is not None and result.infrastructure_failure:
            where = f"{problem.root.name} / {job.checkpoint.name}, {job.role}"
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
                place, run.checkpoint, result, known, options.policy, run_failures
            )
            found += inventory_findings(place, run.checkpoint, result, scbench)
            if run.offline is not None and usable(*run.offline):
                found += network_findings(place, run.checkpoint, result, run.offline[1])
            found += flaky_findings(place, run.checkpoint, result.tests)
            timeout = run.oracle[0].test_timeout_s
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
