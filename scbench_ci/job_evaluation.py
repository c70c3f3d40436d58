"""One job of a run: its checkpoint staged, run where the placement puts it, judged, and its
files written into a job folder of the output folder (a result reused instead when
`--skip-existing` finds it signed there).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from scbench_ci.command import build_command
from scbench_ci.environment import Environment, default_environment
from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.base import (
    PYTEST_LOG,
    QUALITY_LOG,
    SETUP_LOG,
    ExecutionRequest,
    Executor,
    TestCommand,
)
from scbench_ci.executors.docker.image_recipe import recipe_digest
from scbench_ci.fingerprint import fingerprint
from scbench_ci.options import EvaluationOptions
from scbench_ci.placement import Placement
from scbench_ci.plan import Job
from scbench_ci.problem.model import real_path
from scbench_ci.reports import read_reports
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
from scbench_ci.scbench_runner import scbench_runner
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import fresh_folder, write_file
from scbench_ci.trust.reuse import check_signature, sign
from scbench_ci.trust.seal import CTRF_REPORT, INVENTORY, PYTEST_REPORT, ReportFiles, Seal
from scbench_ci.trust.terminal import terminal_text
from scbench_ci.version import __version__
from scbench_ci.workspace import Workspace, stage_workspace


def evaluate_job(
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
    read from its file. A result that can be reused is signed. `preflight`: called before the
    job's tests run (never when its result is reused). `notices`: the run's own, added to the
    result's."""
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
                echo.write(terminal_text(f"warning: {warning}") + "\n")
        artifacts_dir = fresh_folder(output_dir, job.artifacts)
        result = _run_tests(
            options, job, staged, environment, placement, echo, warnings, artifacts_dir
        )
    return replace(
        result,
        fingerprint=staged.fingerprint,
        phases={**phases, **result.phases},
        notices=staged.workspace.notices,
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
    command = build_command(
        job.problem,
        job.checkpoint,
        entrypoint=entrypoint,
        environment_env=environment.env,
        test_timeout_s=options.test_timeout_s,
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


def _run_tests(
    options: EvaluationOptions,
    job: Job,
    staged: _Staged,
    environment: Environment,
    placement: Placement,
    echo: TextIO | None,
    warnings: tuple[str, ...],
    artifacts_dir: Path,
) -> CheckpointResult:
    """The staged job run where the placement puts it and judged, its reports and logs kept in
    `artifacts_dir`; its phases are the executor's and reading the reports."""
    scbench = scbench_runner(options.scbench)
    try:
        sealed = placement.run(
            ExecutionRequest(
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
        )
    except InfrastructureError as error:
        failure = Failure(FailureKind.INFRASTRUCTURE, str(error))
        return unrun_result(job.checkpoint, job.include_prior_tests, failure, warnings)
    execution, files, seal = sealed.execution, sealed.files, sealed.seal
    clock = time.monotonic()
    if isinstance(seal, Seal):
        execution = replace(
            execution, leftover_processes=execution.leftover_processes + seal.killed
        )
    result = judge_checkpoint(
        job.problem,
        job.checkpoint,
        tested=staged.workspace.tested_checkpoints,
        include_prior_tests=job.include_prior_tests,
        execution=execution,
        seal=seal,
        reports=read_reports(files),
        log_dir=staged.log_dir,
        policy_name=options.policy,
        session_timeout_s=options.session_timeout_s,
        warnings=warnings,
        scbench=scbench,
        flaky_passes=options.flaky_passes,
        inventory=sealed.inventory,
        inventory_expected=bool(staged.command.runner_options),
    )
    _collect_artifacts(files, staged.log_dir, artifacts_dir)
    return replace(result, phases={**execution.phases, "reports": time.monotonic() - clock})


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
        "executor": options.executor_settings(executor.name),
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
        "command": dataclasses.asdict(replace(command, variables=variables)),
        "setup": environment.setup_commands,
        "image": environment.image,
        "network": environment.network,
        "user": environment.user,
        "workdir": environment.workdir,
        "cut_network": job.cut_network,
        "quality": _measures_quality(options, job),
        # A run with no image named has its runner's recipe: a changed one is another image.
        "recipe": recipe_digest(scbench_runner(options.scbench).image_recipe),
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
