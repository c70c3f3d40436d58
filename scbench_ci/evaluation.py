"""The pipeline: problem -> workspace -> command -> executor -> reports -> results."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import platform
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TextIO

from scbench_ci.command import build_command, per_test_timeout
from scbench_ci.engines.admission import NEAR_TIMEOUT, TIMED_OUT, Admission
from scbench_ci.engines.pool import Slot, run_jobs
from scbench_ci.environment import Environment, default_environment, load_environment
from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.base import (
    PYTEST_LOG,
    SETUP_LOG,
    ExecutionRequest,
    Executor,
    TestCommand,
)
from scbench_ci.executors.docker.image_recipe import recipe_digest
from scbench_ci.fingerprint import fingerprint
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.progress import FinishedLines, Headers, LiveStatus
from scbench_ci.outputs.summary import SUMMARY_FILE
from scbench_ci.placement import Placement
from scbench_ci.plan import Job, Plan, plan_jobs, plan_targets, start_order
from scbench_ci.problem.model import real_path
from scbench_ci.reports import FAILING, Status, read_reports
from scbench_ci.results.file import (
    CHECKPOINT_RESULT_FILE,
    RESULTS_FILE,
    ResultsError,
    StoredTests,
    read_checkpoint,
    write_checkpoint,
)
from scbench_ci.results.judge import judge_checkpoint, unrun_result
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    ProblemResult,
    RunResult,
)
from scbench_ci.results.repeats import combine_runs
from scbench_ci.results.scbench_format import (
    CHECKPOINT_RESULTS_FILE,
    checkpoint_results_row,
    evaluation_json,
    session_output,
    write_checkpoint_results,
    write_evaluation,
)
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import (
    fresh_folder,
    make_folder,
    prepare_output,
    remove,
    write_file,
)
from scbench_ci.trust.reuse import check_signature, sign
from scbench_ci.trust.seal import (
    CTRF_REPORT,
    PYTEST_REPORT,
    ReportFiles,
    Seal,
)
from scbench_ci.trust.terminal import terminal_text
from scbench_ci.version import __version__
from scbench_ci.workspace import stage_workspace

RUN_FILES = (RESULTS_FILE, SUMMARY_FILE, CHECKPOINT_RESULTS_FILE)
"""What a run writes into the output folder."""
RUN_AGAIN_NOTICE = (
    "run again with no more jobs beside it than the cores hold (--jobs auto): its first run "
    "timed out while extra jobs ran beside it; this is the second run's result"
)


def plan_evaluation(options: EvaluationOptions) -> Plan:
    """The jobs of the evaluation; a UsageError naming all that is wrong with the options."""
    if options.targets:
        return plan_targets(
            options.targets,
            real_path(options.output_dir),
            options.include_prior_tests,
            repeat=options.repeat,
        )
    return plan_jobs(
        options.problems,
        options.checkpoint,
        options.submission,
        real_path(options.output_dir),
        options.include_prior_tests,
        select=options.select,
        repeat=options.repeat,
        confine_submissions_to=options.confine_submissions_to,
    )


def evaluate(
    options: EvaluationOptions,
    plan: Plan,
    placement: Placement,
    echo: TextIO | None,
    durations: Mapping[str, float] | None = None,
) -> RunResult:
    """Run every job of the plan, the longest first when `durations` are known; `echo` gets the
    output as it comes with one job at a time, and progress lines with several."""
    started_at = now()
    started = time.monotonic()
    output_dir = real_path(options.output_dir)
    by_problem: dict[Path, list[CheckpointResult]] = {}
    rows = []
    evaluations = run_evaluations(options, plan.jobs, placement, echo, durations=durations)
    for job, result in evaluations.results:
        by_problem.setdefault(job.problem.root, []).append(result)
        problem_folder = str(output_dir / job.problem.root.name)
        rows.append(checkpoint_results_row(job.problem, result, path=problem_folder))
    # SCBench's metrics read our output folder as one of its run folders.
    write_checkpoint_results(output_dir / CHECKPOINT_RESULTS_FILE, rows)
    return RunResult(
        policy=options.policy,
        executor=placement.executor.name,
        jobs=evaluations.side_by_side,
        started_at=started_at,
        duration_s=time.monotonic() - started,
        problems=tuple(
            ProblemResult(
                problem.root.name,
                str(problem.root),
                problem.version,
                tuple(by_problem[problem.root]),
                tuple(checkpoint.name for checkpoint in problem.checkpoints),
            )
            for problem in plan.problems
            if problem.root in by_problem
        ),
        tool_versions=tool_versions(),
        reruns=options.reruns,
        repeat=options.repeat,
        flaky_passes=options.flaky_passes,
    )


@dataclass(frozen=True)
class Evaluations:
    results: list[tuple[Job, CheckpointResult]]
    """One for each checkpoint folder, with its first job, in the jobs' order."""
    side_by_side: int
    """The most evaluations that ran at once (1 when none ran)."""


def run_evaluations(
    options: EvaluationOptions,
    jobs: Sequence[Job],
    placement: Placement,
    echo: TextIO | None,
    *,
    stream: bool = True,
    durations: Mapping[str, float] | None = None,
    admission: Admission | None = None,
) -> Evaluations:
    """Run the jobs into the options' output folder (emptied of an earlier run's files), as many
    side by side as `options.jobs` admits, the longest first when `durations` (a baseline's, by
    `Job.key`) are known: one result for each checkpoint folder (`Job.folder`), the runs of a
    repeated checkpoint combined. `echo` gets the output as it comes with one job at a time when
    `stream` says so, else progress lines. `admission`: instead of the one `options.jobs`
    makes."""
    environment_file = load_environment(options.environment) if options.environment else None
    untrusted = {job.submission: "the submission" for job in jobs}
    output_dir = prepare_output(options.output_dir, None if options.own_output else untrusted)
    for name in RUN_FILES:
        remove(output_dir, name)
    preflight = _Preflight(placement, environment_file.image if environment_file else None, echo)
    # Before any job, so that a place that cannot run them is one error, not one per job; with
    # --skip-existing, the first job that is not reused runs it (reusing all needs no daemon).
    if jobs and not options.skip_existing:
        preflight()
    admission = admission or placement.admission(options.jobs, len(jobs))
    streamed = echo if admission.most == 1 and stream else None
    progress = _progress(echo, streamed is not None, len(jobs), options.policy)

    def run(
        job: Job, notices: tuple[str, ...] = (), run_options: EvaluationOptions = options
    ) -> CheckpointResult:
        return _run_job(
            run_options, job, output_dir, environment_file, placement, preflight, streamed, notices
        )

    def work(job: Job, slot: Slot) -> CheckpointResult:
        result = run(job)
        if not slot.crowded or result.reused:
            return result
        timeout_s = per_test_timeout(job.checkpoint, options.test_timeout_s)
        used = _timeout_used(result, timeout_s)
        if used is not None and used >= NEAR_TIMEOUT:
            slot.back_off(
                f"a test of {job.label} used {used:.0%} of its {timeout_s:g} s timeout "
                "beside extra jobs"
            )
        if not _timed_out(result, timeout_s):
            return result
        with slot.without_extras():
            # Never the first run's result, which it has just signed.
            return run(job, (RUN_AGAIN_NOTICE,), replace(options, skip_existing=False))

    order = start_order(jobs, durations or {})
    ran = run_jobs([jobs[index] for index in order], work, admission, progress, placement.cancel)
    by_index = dict(zip(order, ran.results, strict=True))
    runs: dict[str, list[CheckpointResult]] = {}
    firsts: dict[str, Job] = {}
    for index, job in enumerate(jobs):
        runs.setdefault(job.folder, []).append(by_index[index])
        firsts.setdefault(job.folder, job)
    results = [
        (
            job,
            _combined(options, job, runs[folder], output_dir) if job.runs > 1 else runs[folder][0],
        )
        for folder, job in firsts.items()
    ]
    return Evaluations(results, max(1, ran.most_side_by_side))


def _timeout_used(result: CheckpointResult, timeout_s: float) -> float | None:
    """The largest share of its timeout a test of the result took (None: no test ran)."""
    return max((test.duration_s / timeout_s for test in result.tests), default=None)


def _timed_out(result: CheckpointResult, timeout_s: float) -> bool:
    """Whether the session's timeout stopped it, or a test failed as its timeout ended."""
    if result.failure is not None and result.failure.kind == FailureKind.TIMEOUT:
        return True
    return any(
        test.status in (*FAILING, Status.FLAKY) and test.duration_s >= TIMED_OUT * timeout_s
        for test in result.tests
    )


class _Preflight:
    """The executor's pre-flight, run once, by the first to call it; its failure is then every
    caller's (each job that needs the executor calls it, so side by side jobs all stop)."""

    def __init__(self, placement: Placement, image: str | None, echo: TextIO | None) -> None:
        self._placement = placement
        self._image = image
        self._echo = echo
        self._lock = threading.Lock()
        self._ran = False
        self._failure: str | None = None

    def __call__(self) -> None:
        with self._lock:
            if not self._ran:
                self._ran = True
                try:
                    self._placement.preflight(self._image, self._echo)
                except InfrastructureError as error:
                    self._failure = str(error)
            if self._failure is not None:
                raise InfrastructureError(self._failure)


def _combined(
    options: EvaluationOptions, job: Job, runs: list[CheckpointResult], output_dir: Path
) -> CheckpointResult:
    """A repeated checkpoint's result over its runs, written to the checkpoint's folder."""
    result = combine_runs(runs, options.policy, options.flaky_passes)
    result = replace(result, artifacts=job.folder)
    return write_checkpoint(result, make_folder(output_dir, job.folder) / CHECKPOINT_RESULT_FILE)


def _progress(
    echo: TextIO | None, streamed: bool, total: int, policy_name: str
) -> Headers | FinishedLines:
    if echo is None:
        return FinishedLines(io.StringIO(), total, policy_name)
    if streamed:
        return Headers(echo)
    lines = LiveStatus if echo.isatty() else FinishedLines
    return lines(echo, total, policy_name)


def _run_job(
    options: EvaluationOptions,
    job: Job,
    output_dir: Path,
    environment_file: Environment | None,
    placement: Placement,
    preflight: Callable[[], None],
    echo: TextIO | None,
    notices: tuple[str, ...] = (),
) -> CheckpointResult:
    """Evaluate one job and write its files into a new job folder; the result's tests are then
    read from its file. A result that can be reused is signed. `notices`: the run's own, added
    to the result's."""
    started_at = now()
    environment = environment_file or default_environment(job.submission)
    entrypoint = options.entrypoint or environment.entrypoint(job.problem.entry_file)
    if not job.submission.is_dir():
        fresh_folder(output_dir, job.artifacts)
        failure = Failure(
            FailureKind.MISSING, f"the submission folder {job.submission} does not exist"
        )
        result = unrun_result(job.checkpoint, job.include_prior_tests, failure)
    else:
        result = _evaluate_checkpoint(
            options, job, output_dir, environment, entrypoint, placement, preflight, echo
        )
        if result.reused:
            return result
    result = replace(
        result,
        submission=str(job.submission),
        artifacts=job.artifacts,
        started_at=started_at,
        notices=(*result.notices, *notices),
    )
    artifacts_dir = output_dir / job.artifacts
    evaluation = evaluation_json(
        job.problem, result, entrypoint=entrypoint, flaky_passes=options.flaky_passes
    )
    if evaluation is not None:
        stdout, report = session_output(artifacts_dir)
        write_evaluation(artifacts_dir, evaluation, stdout=stdout, report=report)
    result = write_checkpoint(result, artifacts_dir / CHECKPOINT_RESULT_FILE)
    if result.fingerprint is not None and not result.infrastructure_failure:
        sign(output_dir, job.artifacts, result.fingerprint)
    return result


def _earlier_result(
    output_dir: Path, job: Job, fingerprint: str, options: EvaluationOptions
) -> CheckpointResult | str | None:
    """The job's result from an earlier run in the same output folder, if this user's key
    signed it with its files for the same inputs (`fingerprint`); else the line that says why
    what is there is run again, or None when nothing is there."""
    unsigned = check_signature(output_dir, job.artifacts, fingerprint)
    if unsigned is not None:
        if not unsigned.found:
            return None
        return f"{job.artifacts}: the earlier result is not reused, {unsigned.reason}; run again"
    path = output_dir / job.artifacts / CHECKPOINT_RESULT_FILE
    try:
        earlier = read_checkpoint(path, options.policy, options.flaky_passes)
    except ResultsError as error:
        return f"{job.artifacts}: the earlier result is not reused ({error}); run again"
    if earlier.fingerprint != fingerprint or earlier.infrastructure_failure:
        return None
    return replace(earlier, reused=True, tests=StoredTests(path, len(earlier.tests)))


def _evaluate_checkpoint(
    options: EvaluationOptions,
    job: Job,
    output_dir: Path,
    environment: Environment,
    entrypoint: str,
    placement: Placement,
    preflight: Callable[[], None],
    echo: TextIO | None,
) -> CheckpointResult:
    problem, checkpoint = job.problem, job.checkpoint
    phases: dict[str, float] = {}
    with scratch_folder("scbench-run-") as scratch:
        clock = time.monotonic()
        workspace = stage_workspace(
            problem,
            checkpoint,
            include_prior_tests=job.include_prior_tests,
            submission=job.submission,
            root=Path(scratch) / "workspace",
            exclude=real_path(options.output_dir),
        )
        log_dir = Path(scratch) / "logs"
        log_dir.mkdir()
        command = build_command(
            problem,
            checkpoint,
            entrypoint=entrypoint,
            environment_env=environment.env,
            test_timeout_s=options.test_timeout_s,
            pytest_args=(*options.pytest_args, *job.pytest_args),
            reruns=options.reruns,
        )
        fingerprint = _fingerprint(
            options, job, workspace.root, command, environment, placement.executor
        )
        phases["stage"] = time.monotonic() - clock
        warnings = (*workspace.warnings, *environment.differences)
        if options.skip_existing:
            earlier = _earlier_result(output_dir, job, fingerprint, options)
            if isinstance(earlier, CheckpointResult):
                return earlier
            if earlier is not None:
                warnings = (*warnings, earlier)
        preflight()
        if echo is not None:
            for warning in warnings:
                echo.write(terminal_text(f"warning: {warning}") + "\n")
        artifacts_dir = fresh_folder(output_dir, job.artifacts)
        try:
            sealed = placement.run(
                ExecutionRequest(
                    workspace=workspace.root,
                    log_dir=log_dir,
                    setup_commands=environment.setup_commands,
                    command=command,
                    session_timeout_s=options.session_timeout_s,
                    echo=echo,
                    image=environment.image,
                    network=environment.network,
                    default_environment=environment.source == "default",
                )
            )
        except InfrastructureError as error:
            failure = Failure(FailureKind.INFRASTRUCTURE, str(error))
            result = unrun_result(checkpoint, job.include_prior_tests, failure, warnings)
            return replace(
                result, fingerprint=fingerprint, phases=phases, notices=workspace.notices
            )
        execution, files, seal = sealed.execution, sealed.files, sealed.seal
        phases.update(execution.phases)
        clock = time.monotonic()
        if isinstance(seal, Seal):
            execution = replace(
                execution, leftover_processes=execution.leftover_processes + seal.killed
            )
        result = judge_checkpoint(
            problem,
            checkpoint,
            tested=workspace.tested_checkpoints,
            include_prior_tests=job.include_prior_tests,
            execution=execution,
            seal=seal,
            reports=read_reports(files),
            log_dir=log_dir,
            policy_name=options.policy,
            session_timeout_s=options.session_timeout_s,
            warnings=warnings,
            flaky_passes=options.flaky_passes,
        )
        _collect_artifacts(files, log_dir, artifacts_dir)
        phases["reports"] = time.monotonic() - clock
    return replace(result, fingerprint=fingerprint, phases=phases, notices=workspace.notices)


def _fingerprint(
    options: EvaluationOptions,
    job: Job,
    workspace: Path,
    command: TestCommand,
    environment: Environment,
    executor: Executor,
) -> str:
    # Where the executor puts the workspace is not an input of the run: the local executor's is
    # a fresh scratch folder each time, which no later run would match. The mark is NUL, which
    # no environment variable's value can hold.
    seen_at = executor.workspace_dir(workspace)
    variables = {name: value.replace(seen_at, "\0") for name, value in command.variables.items()}
    settings = {
        "scbench-ci": __version__,
        "executor": options.executor_settings(executor.name),
        "policy": options.policy,
        "flaky_passes": options.flaky_passes,
        "session_timeout_s": options.session_timeout_s,
        "include_prior_tests": job.include_prior_tests,
        "reruns": options.reruns,
        "repeat": options.repeat,
        # The verdict's inputs on the host: checkpoint order, markers and their groups,
        # timeouts, env; the workspace holds the selected test files themselves.
        "problem": dataclasses.asdict(job.problem),
        "checkpoint": job.checkpoint.name,
        "command": dataclasses.asdict(replace(command, variables=variables)),
        "setup": environment.setup_commands,
        "image": environment.image,
        "network": environment.network,
        # A run with no image named has the default's recipe: a changed one is another image.
        "recipe": recipe_digest(),
    }
    return fingerprint(workspace, settings)


def _collect_artifacts(files: ReportFiles, log_dir: Path, target: Path) -> None:
    """The reports as they were read, and the logs (the evaluator's own files)."""
    for name, data in ((CTRF_REPORT, files.ctrf), (PYTEST_REPORT, files.pytest)):
        if data is not None:
            write_file(target, name, data)
    for log in (log_dir / PYTEST_LOG, log_dir / SETUP_LOG):
        if log.is_file():
            write_file(target, log.name, log.read_bytes())


def now() -> str:
    """This moment, as results.json's `started_at` holds it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def tool_versions() -> dict[str, str]:
    # The Python scbench-ci runs on here; the tests' is the image's (each checkpoint's image).
    versions = {"scbench-ci": __version__, "host-python": platform.python_version()}
    for package in ("uv", "docker"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return versions
