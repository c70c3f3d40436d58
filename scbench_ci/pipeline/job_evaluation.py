"""One job of a run: its checkpoint staged, run where the placement puts it, judged, and its
files written into a job folder of the output folder (a result reused instead when
`--skip-existing` finds it signed there).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from scbench_ci.engines.admission import AUTO
from scbench_ci.executors.base import ExecutionRequest, Executor, TestCommand
from scbench_ci.executors.sealed import SealedRun
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import PYTEST_LOG, QUALITY_LOG, SETUP_LOG, WORKSPACE_TESTS_DIR
from scbench_ci.foundation.paths import real_path
from scbench_ci.foundation.scbench_runner import scbench_runner
from scbench_ci.foundation.version import __version__
from scbench_ci.job.environment import Environment, default_environment
from scbench_ci.job.fingerprint import fingerprint
from scbench_ci.job.plan import Job
from scbench_ci.job.pytest_command import build_test_command
from scbench_ci.job.reports import Reports, read_reports
from scbench_ci.job.workspace import Workspace, stage_workspace
from scbench_ci.options import EvaluationOptions
from scbench_ci.pipeline.placement import Placement
from scbench_ci.pipeline.shards import (
    MergedRun,
    Sharding,
    ShardRun,
    merge_shards,
    most_units,
    named_failure,
    shard_argument,
    unit_weights,
    unshardable,
    warm_up_for,
)
from scbench_ci.results.file import (
    CHECKPOINT_RESULT_FILE,
    ResultsError,
    StoredTests,
    read_checkpoint,
    write_checkpoint,
)
from scbench_ci.results.judge import judge_checkpoint, unrun_result
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind
from scbench_ci.results.provenance import now
from scbench_ci.results.scbench_format import evaluation_json, session_output, write_evaluation
from scbench_ci.standalone.pytest_runner import read_regular
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import fresh_folder, write_file
from scbench_ci.trust.reuse import check_signature, sign
from scbench_ci.trust.seal import CTRF_REPORT, INVENTORY, PYTEST_REPORT, ReportFiles, Seal
from scbench_ci.trust.terminal import inert


def evaluate_job(
    options: EvaluationOptions,
    job: Job,
    output_dir: Path,
    environment_file: Environment | None,
    placement: Placement,
    preflight: Callable[[], None],
    echo: TextIO | None,
    notices: tuple[str, ...] = (),
    sharding: Sharding | None = None,
) -> CheckpointResult:
    """Evaluate one job and write its files into a new job folder; the result's tests are then
    read from its file. A result that can be reused is signed. `preflight`: called before the
    job's tests run (never when its result is reused). `notices`: the run's own, added to the
    result's. `sharding`: over how many runs its tests are split (none: one)."""
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
            options,
            job,
            output_dir,
            environment,
            entrypoint,
            placement,
            preflight,
            echo,
            sharding or Sharding(),
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
    scbench = scbench_runner(options.scbench)
    evaluation = evaluation_json(
        job.problem,
        result,
        entrypoint=entrypoint,
        scbench=scbench,
        flaky_passes=options.flaky_passes,
    )
    if evaluation is not None:
        stdout, report = session_output(artifacts_dir)
        write_evaluation(artifacts_dir, evaluation, scbench=scbench, stdout=stdout, report=report)
    result = write_checkpoint(result, artifacts_dir / CHECKPOINT_RESULT_FILE)
    if result.fingerprint is not None and not result.infrastructure_failure:
        sign(output_dir, job.artifacts, result.fingerprint)
    return result


@dataclass(frozen=True)
class _Staged:
    """A job made ready to run: its workspace, its logs' folder, its command and what a
    reusable result of it must have been made from."""

    workspace: Workspace
    log_dir: Path
    command: TestCommand
    fingerprint: str


def _evaluate_checkpoint(
    options: EvaluationOptions,
    job: Job,
    output_dir: Path,
    environment: Environment,
    entrypoint: str,
    placement: Placement,
    preflight: Callable[[], None],
    echo: TextIO | None,
    sharding: Sharding,
) -> CheckpointResult:
    """The job staged in a scratch folder of its own, then an earlier result reused, or its
    tests run and judged; its phases: staging, then the run's."""
    with scratch_folder("scbench-run-") as scratch:
        clock = time.monotonic()
        staged = _stage(options, job, environment, entrypoint, placement.executor, Path(scratch))
        phases = {"stage": time.monotonic() - clock}
        warnings = staged.workspace.warnings
        if options.skip_existing:
            earlier = _earlier_result(output_dir, job, staged.fingerprint, options)
            if isinstance(earlier, CheckpointResult):
                return earlier
            if earlier is not None:
                warnings = (*warnings, earlier)
        preflight()
        if echo is not None:
            for warning in warnings:
                echo.write(inert(f"warning: {warning}", one_line=True) + "\n")
        artifacts_dir = fresh_folder(output_dir, job.artifacts)
        with sharding.lease(_shards_wanted(options, job, staged)) as shards:
            result = _run_tests(
                options,
                job,
                staged,
                environment,
                placement,
                echo,
                warnings,
                artifacts_dir,
                _Shards(
                    shards,
                    sharding.durations(job.key),
                    warm_up_for(environment.source == "default", entrypoint),
                ),
            )
    return replace(
        result,
        fingerprint=staged.fingerprint,
        phases={**phases, **result.phases},
        notices=(*staged.workspace.notices, *result.notices),
    )


def _stage(
    options: EvaluationOptions,
    job: Job,
    environment: Environment,
    entrypoint: str,
    executor: Executor,
    scratch: Path,
) -> _Staged:
    """The job's workspace and logs' folder made in `scratch`, and its command."""
    scbench = scbench_runner(options.scbench)
    workspace = stage_workspace(
        job.problem,
        job.checkpoint,
        include_prior_tests=job.include_prior_tests,
        submission=job.submission,
        root=scratch / "workspace",
        exclude=real_path(options.output_dir),
        ignores=scbench.snapshot_ignores,
    )
    log_dir = scratch / "logs"
    log_dir.mkdir()
    command = build_test_command(
        job.problem,
        job.checkpoint,
        entrypoint=entrypoint,
        environment_env=environment.env,
        test_timeout_s=job.test_timeout_s,
        pytest_args=(*options.pytest_args, *job.pytest_args),
        reruns=options.reruns,
        # Not for `check`'s collection (its own `--collect-only`): an evaluation's inventory.
        inventory=workspace.tested_checkpoints[:-1]
        if scbench.collection_inventory and not job.pytest_args
        else None,
    )
    return _Staged(
        workspace,
        log_dir,
        command,
        _fingerprint(options, job, workspace.root, command, environment, executor),
    )


@dataclass(frozen=True)
class _Shards:
    """Over how many runs a job's tests are split, and what they are told."""

    count: int
    durations: Mapping[str, float]
    """The seconds each test took before, by test id (the units' weights)."""
    warm_up: tuple[str, ...]
    """What a shard runs first when the collection's first test is another's."""


@dataclass(frozen=True)
class _Ran:
    """A job's tests run, whole or in shards, as they are judged; and what is kept of them."""

    merged: MergedRun
    kept: tuple[tuple[str, ReportFiles, Path], ...]
    """Each run's folder in the job's artifacts (`` for a whole run), its reports and logs."""


def _run_tests(
    options: EvaluationOptions,
    job: Job,
    staged: _Staged,
    environment: Environment,
    placement: Placement,
    echo: TextIO | None,
    warnings: tuple[str, ...],
    artifacts_dir: Path,
    shards: _Shards,
) -> CheckpointResult:
    """The staged job run where the placement puts it (whole, or in shards merged into one run)
    and judged, its reports and logs kept in `artifacts_dir`; its phases are the executor's
    and reading the reports."""
    scbench = scbench_runner(options.scbench)
    request = ExecutionRequest(
        workspace=staged.workspace.root,
        log_dir=staged.log_dir,
        setup_commands=environment.setup_commands,
        command=staged.command,
        session_timeout_s=options.session_timeout_s,
        echo=echo,
        image=environment.image,
        network=environment.network,
        tests_user=environment.user,
        workdir=environment.workdir,
        cut_network=job.cut_network,
        default_environment=environment.source == "default",
        quality=_measures_quality(options, job),
        scbench=scbench,
    )
    with contextlib.ExitStack() as scratches:
        try:
            ran = (
                _run_shards(placement, request, shards, options, scratches)
                if shards.count > 1
                else None
            )
            if isinstance(ran, str):
                unsafe = f"{SHARDS_NOT_ONE}: {ran}; its tests ran again in one session"
                warnings = (*warnings, unsafe)
            if not isinstance(ran, _Ran):
                ran = _run_whole(placement, request)
        except InfrastructureError as error:
            failure = Failure(FailureKind.INFRASTRUCTURE, str(error))
            return unrun_result(job.checkpoint, job.include_prior_tests, failure, warnings)
        return _judged(options, job, staged, ran, warnings, artifacts_dir)


def _judged(
    options: EvaluationOptions,
    job: Job,
    staged: _Staged,
    ran: _Ran,
    warnings: tuple[str, ...],
    artifacts_dir: Path,
) -> CheckpointResult:
    """The run's result, its reports and logs kept in `artifacts_dir`."""
    merged = ran.merged
    clock = time.monotonic()
    result = judge_checkpoint(
        job.problem,
        job.checkpoint,
        include_prior_tests=job.include_prior_tests,
        execution=merged.execution,
        seal=merged.seal,
        reports=merged.reports,
        log_dir=merged.log_dir,
        policy_name=options.policy,
        session_timeout_s=options.session_timeout_s,
        warnings=warnings,
        scbench=scbench_runner(options.scbench),
        flaky_passes=options.flaky_passes,
        inventory=merged.inventory,
        inventory_expected=bool(staged.command.runner_options),
    )
    if merged.deciding is not None and result.failure is not None:
        failure = named_failure(result.failure, merged.deciding, len(ran.kept))
        result = replace(result, failure=failure)
    for folder, files, log_dir in ran.kept:
        _collect_artifacts(files, log_dir, artifacts_dir / folder if folder else artifacts_dir)
    if len(ran.kept) > 1:
        write_file(artifacts_dir, PYTEST_LOG, _joined_logs(ran.kept))
        if merged.inventory is not None:
            write_file(artifacts_dir, INVENTORY, merged.inventory)
        result = replace(result, notices=(_sharded_notice(ran),))
    return replace(result, phases={**merged.execution.phases, "reports": time.monotonic() - clock})


def _sharded_notice(ran: _Ran) -> str:
    folders = ", ".join(f"{folder}/" for folder, _, _ in ran.kept)
    return (
        f"its tests ran in {len(ran.kept)} shards side by side, each a whole run that kept its "
        f"part of the collection, merged into one result; each shard's reports and logs are in "
        f"{folders}"
    )


SHARDS_NOT_ONE = "the shards' reports did not add up to the checkpoint's one collection"


def _run_whole(placement: Placement, request: ExecutionRequest) -> _Ran:
    sealed = placement.run(request)
    run = _shard_run(sealed, request.log_dir)
    merged = MergedRun(run.execution, run.seal, run.reports, run.log_dir, None, run.inventory)
    return _Ran(merged, (("", sealed.files, request.log_dir),))


def _shard_run(sealed: SealedRun, log_dir: Path) -> ShardRun:
    """A sealed run as it is judged: the processes its runner killed count as left over."""
    execution, seal = sealed.execution, sealed.seal
    if isinstance(seal, Seal):
        killed = execution.leftover_processes + seal.killed
        execution = replace(execution, leftover_processes=killed)
    return ShardRun(execution, seal, read_reports(sealed.files), log_dir, sealed.inventory)


def _run_shards(
    placement: Placement,
    request: ExecutionRequest,
    shards: _Shards,
    options: EvaluationOptions,
    scratches: contextlib.ExitStack,
) -> _Ran | str:
    """The request as `shards.count` runs side by side, each on a copy of the workspace in a
    scratch folder of its own (a place like the whole run's, removed with `scratches`), merged;
    or why their reports are not one run. The wall time is theirs together."""
    started = time.monotonic()
    places = [scratches.enter_context(scratch_folder("scbench-run-")) for _ in range(shards.count)]
    weights = unit_weights(shards.durations)
    requests = []
    for index, place in enumerate(places, start=1):
        shutil.copytree(request.workspace, place / "workspace", symlinks=True)
        (place / "logs").mkdir()
        argument = shard_argument(index, shards.count, weights, shards.warm_up)
        command = replace(request.command, pytest_args=(argument, *request.command.pytest_args))
        requests.append(
            replace(
                request,
                workspace=place / "workspace",
                log_dir=place / "logs",
                command=command,
                echo=None,
                quality=request.quality and index == 1,
            )
        )
    with ThreadPoolExecutor(shards.count, thread_name_prefix="scbench-shard") as pool:
        futures = [pool.submit(placement.run, one) for one in requests]
        try:
            ended = [future.exception() for future in futures]
        except BaseException:
            # Ctrl-C or SIGTERM here: the shards' runs stop now, not when their tests end.
            placement.cancel()
            raise
    if error := next((one for one in ended if one is not None), None):
        raise error
    sealed = [future.result() for future in futures]
    runs = [_shard_run(one, req.log_dir) for one, req in zip(sealed, requests, strict=True)]
    merged = merge_shards(runs, options.session_timeout_s)
    if isinstance(merged, str):
        return merged
    execution = replace(merged.execution, duration_s=time.monotonic() - started)
    kept = tuple(
        (f"shard-{index}", one.files, req.log_dir)
        for index, (one, req) in enumerate(zip(sealed, requests, strict=True), start=1)
    )
    if request.echo is not None:
        for index, run in enumerate(runs, start=1):
            request.echo.write(_shard_line(index, len(runs), run))
    return _Ran(replace(merged, execution=execution), kept)


def _shard_line(index: int, count: int, run: ShardRun) -> str:
    tests = len(run.reports.tests) if isinstance(run.reports, Reports) else 0
    return (
        inert(
            f"[scbench-ci] shard {index} of {count}: {tests} test(s), pytest exit code "
            f"{run.execution.exit_code}, {run.execution.duration_s:.1f} s (shard-{index}/)",
            one_line=True,
        )
        + "\n"
    )


def _joined_logs(kept: tuple[tuple[str, ReportFiles, Path], ...]) -> list[bytes]:
    """The shards' test logs one after the other, each under a line naming it."""
    joined = []
    for index, (folder, _, log_dir) in enumerate(kept, start=1):
        joined.append(
            f"[scbench-ci] shard {index} of {len(kept)} ({folder}/{PYTEST_LOG})\n".encode()
        )
        log = log_dir / PYTEST_LOG
        joined.append(log.read_bytes() if log.is_file() else b"")
    return joined


def _shards_wanted(options: EvaluationOptions, job: Job, staged: _Staged) -> int:
    """How many runs the job's tests could use: as many as asked (`auto`: any number), at most
    one per unit its test files can hold; one under a pytest argument that orders the tests."""
    if options.test_shards == 1 or unshardable((*options.pytest_args, *job.pytest_args)):
        return 1
    tests_dir = staged.workspace.root / WORKSPACE_TESTS_DIR
    sources = [
        read_regular(tests_dir / tested.test_file, MAX_TEST_FILE_BYTES)
        for tested in staged.workspace.tested_checkpoints
    ]
    units = most_units(source for source in sources if isinstance(source, bytes))
    return units if options.test_shards == AUTO else min(options.test_shards, units)


MAX_TEST_FILE_BYTES = 16 * 1024 * 1024


def _measures_quality(options: EvaluationOptions, job: Job) -> bool:
    """Measured once per checkpoint: in its first run (`--repeat` runs the same files again)."""
    return options.quality and job.quality and job.run == 1


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
        earlier = read_checkpoint(path, options.policy, options.flaky_passes, options.scbench)
    except ResultsError as error:
        return f"{job.artifacts}: the earlier result is not reused ({error}); run again"
    if earlier.fingerprint != fingerprint or earlier.infrastructure_failure:
        return None
    return replace(earlier, reused=True, tests=StoredTests(path, len(earlier.tests)))


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
        "policy": options.policy,
        "flaky_passes": options.flaky_passes,
        "scbench": options.scbench,
        "session_timeout_s": options.session_timeout_s,
        "include_prior_tests": job.include_prior_tests,
        "reruns": options.reruns,
        "repeat": options.repeat,
        # The verdict's inputs on the host: checkpoint order, markers and their groups,
        # timeouts, env; the workspace holds the selected test files themselves.
        "problem": dataclasses.asdict(job.problem),
        "checkpoint": job.checkpoint.name,
        # With the job's test timeout where the command held it before: earlier results' hashes
        # stay what they were.
        "command": {
            **dataclasses.asdict(replace(command, variables=variables)),
            "test_timeout_s": job.test_timeout_s,
        },
        "setup": environment.setup_commands,
        "image": environment.image,
        "network": environment.network,
        "user": environment.user,
        "workdir": environment.workdir,
        "cut_network": job.cut_network,
        "quality": _measures_quality(options, job),
        # The executor's name and settings, and what else of its own can change a result.
        **options.executor_settings.fingerprinted(executor.name, scbench_runner(options.scbench)),
    }
    return fingerprint(workspace, settings)


def _collect_artifacts(files: ReportFiles, log_dir: Path, target: Path) -> None:
    """The reports as they were read, and the logs (the evaluator's own files)."""
    reports = (
        (CTRF_REPORT, files.ctrf),
        (PYTEST_REPORT, files.pytest),
        (INVENTORY, files.inventory),
    )
    for name, data in reports:
        if data is not None:
            write_file(target, name, data)
    for log in (log_dir / PYTEST_LOG, log_dir / SETUP_LOG, log_dir / QUALITY_LOG):
        if log.is_file():
            write_file(target, log.name, log.read_bytes())
