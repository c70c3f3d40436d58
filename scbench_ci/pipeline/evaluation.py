"""The pipeline over many jobs: problem -> workspace -> command -> executor -> reports ->
results for each (`job_evaluation.py`), side by side as the placement admits them, into one run's
results."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from scbench_ci.engines.admission import AUTO, NEAR_TIMEOUT, TIMED_OUT, Admission, IdleCores
from scbench_ci.engines.pool import Slot, run_jobs
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.paths import real_path
from scbench_ci.foundation.scbench_runner import ScbenchRunner, scbench_runner
from scbench_ci.job.environment import load_environment
from scbench_ci.job.plan import Job, Plan, plan_jobs, plan_targets, start_order
from scbench_ci.job.reports import FAILING, Status
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.progress import FinishedLines, Headers, LiveStatus
from scbench_ci.outputs.summary import SUMMARY_FILE
from scbench_ci.pipeline.job_evaluation import evaluate_job
from scbench_ci.pipeline.placement import Placement
from scbench_ci.pipeline.shards import Sharding, TestTimes, fixed_count
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Problem
from scbench_ci.results.file import CHECKPOINT_RESULT_FILE, RESULTS_FILE, write_checkpoint
from scbench_ci.results.model import CheckpointResult, FailureKind, ProblemResult, RunResult
from scbench_ci.results.provenance import now, tool_versions
from scbench_ci.results.repeats import combine_runs
from scbench_ci.results.scbench_format import (
    CHECKPOINT_RESULTS_FILE,
    checkpoint_results_row,
    write_checkpoint_results,
)
from scbench_ci.trust.output_folder import make_folder, prepare_output, remove

RUN_FILES = (RESULTS_FILE, SUMMARY_FILE, CHECKPOINT_RESULTS_FILE)
"""What a run writes into the output folder."""
RUN_AGAIN_NOTICE = (
    "run again with no more jobs beside it than the cores hold (--jobs auto): its first run "
    "timed out while extra jobs ran beside it; this is the second run's result"
)


def plan_evaluation(
    options: EvaluationOptions, load: Callable[[Path], Problem] = load_problem
) -> Plan:
    """The jobs of the evaluation; a UsageError naming all that is wrong with the options.
    `load`: how a problem is loaded (a session keeps them)."""
    if options.targets:
        return plan_targets(
            options.targets,
            real_path(options.output_dir),
            options.include_prior_tests,
            repeat=options.repeat,
            load=load,
            test_timeout_s=options.test_timeout_s,
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
        load=load,
        test_timeout_s=options.test_timeout_s,
    )


def evaluate_plan(
    options: EvaluationOptions,
    plan: Plan,
    placement: Placement,
    echo: TextIO | None,
    durations: Mapping[str, float] | None = None,
    test_times: TestTimes | None = None,
) -> RunResult:
    """Run every job of the plan, the longest first when `durations` are known; `echo` gets the
    output as it comes with one job at a time, and progress lines with several. `test_times`:
    each checkpoint's tests' earlier seconds, which balance its shards."""
    started = RunStart()
    output_dir = real_path(options.output_dir)
    by_problem: dict[Path, list[CheckpointResult]] = {}
    rows = []
    scbench = scbench_runner(options.scbench)
    evaluations = evaluate_jobs(
        options, plan.jobs, placement, echo, durations=durations, test_times=test_times
    )
    evaluated = {(job.problem.root, job.checkpoint.name) for job, _ in evaluations.results}
    for job, result in evaluations.results:
        by_problem.setdefault(job.problem.root, []).append(result)
        problem_folder = str(output_dir / job.problem.root.name)
        earlier = job.problem.prior_checkpoints(job.checkpoint)
        rows.append(
            checkpoint_results_row(
                job.problem,
                result,
                path=problem_folder,
                scbench=scbench,
                after_another=any((job.problem.root, c.name) in evaluated for c in earlier),
            )
        )
    # SCBench's metrics read our output folder as one of its run folders.
    write_checkpoint_results(output_dir / CHECKPOINT_RESULTS_FILE, rows)
    problems = tuple(
        ProblemResult(
            problem.root.name,
            str(problem.root),
            problem.version,
            tuple(by_problem[problem.root]),
            tuple(checkpoint.name for checkpoint in problem.checkpoints),
        )
        for problem in plan.problems
        if problem.root in by_problem
    )
    return run_result(options, placement, evaluations, started, problems)


@dataclass(frozen=True)
class RunStart:
    """When a run started: results.json's `started_at`, and the clock its duration is read on."""

    at: str = field(default_factory=now)
    clock: float = field(default_factory=time.monotonic)


def run_result(
    options: EvaluationOptions,
    placement: Placement,
    evaluations: EvaluatedJobs,
    started: RunStart,
    problems: tuple[ProblemResult, ...],
) -> RunResult:
    """The run's results: its header (the settings that decided it, where and how many side by
    side it ran, when, the tools) over its problems, as `evaluate` and `check` write it."""
    return RunResult(
        policy=options.policy,
        executor=placement.executor.name,
        jobs=evaluations.side_by_side,
        started_at=started.at,
        duration_s=round(time.monotonic() - started.clock, 3),
        problems=problems,
        tool_versions=tool_versions(),
        reruns=options.reruns,
        repeat=options.repeat,
        flaky_passes=options.flaky_passes,
        scbench=options.scbench,
    )


@dataclass(frozen=True)
class EvaluatedJobs:
    results: list[tuple[Job, CheckpointResult]]
    """One for each checkpoint folder, with its first job, in the jobs' order."""
    side_by_side: int
    """The most evaluations that ran at once (1 when none ran)."""


def evaluate_jobs(
    options: EvaluationOptions,
    jobs: Sequence[Job],
    placement: Placement,
    echo: TextIO | None,
    *,
    stream: bool = True,
    durations: Mapping[str, float] | None = None,
    admission: Admission | None = None,
    test_times: TestTimes | None = None,
) -> EvaluatedJobs:
    """Run the jobs into the options' output folder (emptied of an earlier run's files), as many
    side by side as `options.jobs` admits, the longest first when `durations` (a baseline's, by
    `Job.key`) are known: one result for each checkpoint folder (`Job.folder`), the runs of a
    repeated checkpoint combined. `echo` gets the output as it comes with one job at a time when
    `stream` says so, else progress lines. `admission`: instead of the one `options.jobs`
    makes. `test_times`: each checkpoint's tests' earlier seconds, which balance its shards
    (`--shards`)."""
    environment_file = load_environment(options.environment) if options.environment else None
    untrusted = {job.submission: "the submission" for job in jobs}
    output_dir = prepare_output(options.output_dir, None if options.own_output else untrusted)
    for name in RUN_FILES:
        remove(output_dir, name)
    preflight = _Preflight(
        placement,
        environment_file.image if environment_file else None,
        scbench_runner(options.scbench),
        echo,
    )
    # Before any job, so that a place that cannot run them is one error, not one per job; with
    # --skip-existing, the first job that is not reused runs it (reusing all needs no daemon).
    if jobs and not options.skip_existing:
        preflight()
    admission = admission or placement.admission(options.jobs, len(jobs))
    sharding = _sharding(options, placement, admission, len(jobs), test_times)
    shards = 1 if options.test_shards == AUTO else options.test_shards
    placement.expect(len(jobs) * shards, admission.base * shards)
    streamed = echo if admission.most == 1 and stream else None
    order = start_order(jobs, durations or {})
    progress = _progress(echo, streamed is not None, jobs, options.policy, durations)

    def run(
        job: Job, notices: tuple[str, ...] = (), run_options: EvaluationOptions = options
    ) -> CheckpointResult:
        return evaluate_job(
            run_options,
            job,
            output_dir,
            environment_file,
            placement,
            preflight,
            streamed,
            notices,
            sharding,
        )

    def work(job: Job, slot: Slot) -> CheckpointResult:
        result = run(job)
        if not slot.crowded or result.reused:
            return result
        timeout_s = job.test_timeout_s
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

    with progress.ticking():
        ran = run_jobs(
            [jobs[index] for index in order], work, admission, progress, placement.cancel
        )
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
    return EvaluatedJobs(results, max(1, ran.most_side_by_side))


def _sharding(
    options: EvaluationOptions,
    placement: Placement,
    admission: Admission,
    count: int,
    test_times: TestTimes | None,
) -> Sharding:
    """How many runs each of `count` jobs' tests are split over (`--shards`), and what balances
    them."""
    lease: Callable[[int], AbstractContextManager[int]] = (
        IdleCores(placement.cores(), admission.base, count).lease
        if options.test_shards == AUTO
        else fixed_count(options.test_shards)
    )
    return Sharding(lease, test_times or Sharding().durations)


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

    def __init__(
        self,
        placement: Placement,
        image: str | None,
        scbench: ScbenchRunner,
        echo: TextIO | None,
    ) -> None:
        self._placement = placement
        self._image = image
        self._scbench = scbench
        self._echo = echo
        self._lock = threading.Lock()
        self._ran = False
        self._failure: str | None = None

    def __call__(self) -> None:
        with self._lock:
            if not self._ran:
                self._ran = True
                try:
                    self._placement.preflight(self._image, self._echo, self._scbench)
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
    echo: TextIO | None,
    streamed: bool,
    jobs: Sequence[Job],
    policy_name: str,
    durations: Mapping[str, float] | None,
) -> Headers | FinishedLines:
    if echo is None or streamed:
        return Headers(echo if echo is not None else io.StringIO())
    lines = LiveStatus if echo.isatty() else FinishedLines
    # A check's runs (each with a role) are judged together at the end, not one by one.
    judged = not any(job.role for job in jobs)
    progress = lines(echo, len(jobs), policy_name, durations=durations, judged=judged)
    progress.expect(list(jobs))
    return progress
