"""The pipeline: problem -> workspace -> command -> executor -> reports -> results."""

from __future__ import annotations

import contextlib
import platform
import secrets
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TextIO

from scbench_ci import __version__
from scbench_ci.command import CTRF_REPORT, PYTEST_REPORT, build_command
from scbench_ci.environment import Environment, default_environment, load_environment
from scbench_ci.errors import InfrastructureError, UsageError
from scbench_ci.executors.base import PYTEST_LOG, SETUP_LOG, ExecutionRequest, Executor
from scbench_ci.files import replace_file, scratch_folder
from scbench_ci.problem import Checkpoint, Problem, load_problem, real_path
from scbench_ci.reports import read_reports
from scbench_ci.results import (
    RESULTS_FILE,
    CheckpointResult,
    EvaluationResult,
    infrastructure_result,
    judge_checkpoint,
)
from scbench_ci.seal import ReportFiles, Seal, check_seal, read_report_files
from scbench_ci.summary import SUMMARY_FILE
from scbench_ci.workspace import REPORTS_DIR, stage_workspace

ARTIFACT_FILES = (CTRF_REPORT, PYTEST_REPORT, PYTEST_LOG, SETUP_LOG)
CHECKPOINT_PLACEHOLDER = "{checkpoint}"


@dataclass(frozen=True)
class EvaluationRequest:
    problem_dir: Path
    checkpoint: str
    """A checkpoint name, or `all`."""
    submission: str
    """A folder; `{checkpoint}` in it is replaced by each evaluated checkpoint's name."""
    output_dir: Path
    policy: str
    session_timeout_s: float
    include_prior_tests: bool | None = None
    entrypoint: str | None = None
    environment_file: Path | None = None
    test_timeout_s: float | None = None
    pytest_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Plan:
    checkpoint: Checkpoint
    submission: Path
    artifacts_dir: Path


def evaluate(
    request: EvaluationRequest, executor: Executor, echo: TextIO | None
) -> EvaluationResult:
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    problem = load_problem(request.problem_dir)
    checkpoints = problem.select(request.checkpoint)
    output_dir = real_path(request.output_dir)
    plans = [
        _plan(request, checkpoint, output_dir, several=len(checkpoints) > 1)
        for checkpoint in checkpoints
    ]
    environment_file = (
        load_environment(request.environment_file) if request.environment_file else None
    )
    _prepare_output(output_dir, plans)

    results = []
    for plan in plans:
        if echo is not None:
            echo.write(f"\n=== {problem.name} / {plan.checkpoint.name} ({plan.submission}) ===\n")
        environment = environment_file or default_environment(plan.submission)
        results.append(_evaluate_checkpoint(request, problem, plan, environment, executor, echo))
    return EvaluationResult(
        problem=problem,
        policy=request.policy,
        executor=executor.name,
        started_at=started_at,
        duration_s=time.monotonic() - started,
        checkpoints=tuple(results),
        tool_versions=_tool_versions(),
    )


def _plan(
    request: EvaluationRequest, checkpoint: Checkpoint, output_dir: Path, several: bool
) -> _Plan:
    submission = real_path(
        Path(request.submission.replace(CHECKPOINT_PLACEHOLDER, checkpoint.name))
    )
    if not submission.is_dir():
        raise UsageError(
            f"--submission: {submission} is not a folder (checkpoint {checkpoint.name})"
        )
    if output_dir == submission or submission.is_relative_to(output_dir):
        raise UsageError(f"--output: {output_dir} would write over the submission {submission}")
    return _Plan(checkpoint, submission, output_dir / checkpoint.name if several else output_dir)


def _prepare_output(output_dir: Path, plans: list[_Plan]) -> None:
    """Create the output folders and drop the files an earlier run of ours left there."""
    for plan in plans:
        if plan.artifacts_dir.is_symlink():
            raise UsageError(f"--output: {plan.artifacts_dir} is a symlink; give a plain folder")
        plan.artifacts_dir.mkdir(parents=True, exist_ok=True)
        for name in ARTIFACT_FILES:
            (plan.artifacts_dir / name).unlink(missing_ok=True)
    for name in (RESULTS_FILE, SUMMARY_FILE):
        (output_dir / name).unlink(missing_ok=True)


def _evaluate_checkpoint(
    request: EvaluationRequest,
    problem: Problem,
    plan: _Plan,
    environment: Environment,
    executor: Executor,
    echo: TextIO | None,
) -> CheckpointResult:
    checkpoint = plan.checkpoint
    include_prior = (
        checkpoint.include_prior_tests
        if request.include_prior_tests is None
        else request.include_prior_tests
    )
    with scratch_folder("scbench-run-") as scratch:
        workspace = stage_workspace(
            problem,
            checkpoint,
            include_prior_tests=include_prior,
            submission=plan.submission,
            root=Path(scratch) / "workspace",
            exclude=real_path(request.output_dir),
        )
        for warning in workspace.warnings:
            if echo is not None:
                echo.write(f"warning: {warning}\n")
        log_dir = Path(scratch) / "logs"
        log_dir.mkdir()
        command = build_command(
            problem,
            checkpoint,
            entrypoint=request.entrypoint or environment.entrypoint(problem.entry_file),
            workspace_dir=executor.workspace_dir(workspace.root),
            environment_env=environment.env,
            test_timeout_s=request.test_timeout_s,
            pytest_args=request.pytest_args,
        )
        seal_key = secrets.token_hex(32)
        try:
            execution = executor.execute(
                ExecutionRequest(
                    workspace=workspace.root,
                    log_dir=log_dir,
                    setup_commands=environment.setup_commands,
                    command=command,
                    session_timeout_s=request.session_timeout_s,
                    seal_key=seal_key,
                    echo=echo,
                    image=environment.image,
                )
            )
        except InfrastructureError as error:
            return infrastructure_result(checkpoint, include_prior, str(error), workspace.warnings)
        # Read once, never through a link: the bytes that are sealed are the bytes parsed.
        files = read_report_files(workspace.root / REPORTS_DIR)
        seal = check_seal(log_dir / PYTEST_LOG, files, seal_key, execution.exit_code)
        if isinstance(seal, Seal):
            execution = replace(
                execution, leftover_processes=execution.leftover_processes + seal.killed
            )
        result = judge_checkpoint(
            problem,
            checkpoint,
            tested=workspace.tested_checkpoints,
            include_prior_tests=include_prior,
            execution=execution,
            seal=seal,
            reports=read_reports(files),
            log_dir=log_dir,
            policy_name=request.policy,
            session_timeout_s=request.session_timeout_s,
            warnings=workspace.warnings,
        )
        _collect_artifacts(files, log_dir, plan.artifacts_dir)
    return result


def _collect_artifacts(files: ReportFiles, log_dir: Path, target: Path) -> None:
    """The reports as they were read, and the logs (the evaluator's own files)."""
    for name, data in ((CTRF_REPORT, files.ctrf), (PYTEST_REPORT, files.pytest)):
        if data is not None:
            replace_file(target / name, data)
    for log in (log_dir / PYTEST_LOG, log_dir / SETUP_LOG):
        if log.is_file():
            replace_file(target / log.name, log.read_bytes())


def _tool_versions() -> dict[str, str]:
    versions = {"scbench-ci": __version__, "python": platform.python_version()}
    for package in ("uv", "docker"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return versions
