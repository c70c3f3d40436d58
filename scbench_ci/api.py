"""The Python API: `evaluate` and `check_problems` (the CLI's `check`; `scbench_ci.check` is the
package of its pipeline) called from a program, through the same cores the CLI calls
(`commands/`).

Plain values in (paths, names, numbers; each option checked by the parser of the CLI's flag, and
refused with its message as a UsageError naming the keyword), typed results out. Nothing is
printed unless `echo` is given. Without `output`, the run writes into a scratch folder that is
removed before the call returns; the results returned hold their tests in memory either way, so
they never read a file later.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TextIO, TypeVar

from scbench_ci.commands import check as check_command
from scbench_ci.commands import evaluate as evaluate_command
from scbench_ci.commands.channels import Echo, Outcome
from scbench_ci.errors import ExitCode, InfrastructureError, ScbenchError, UsageError
from scbench_ci.executors.choice import DEFAULT_EXECUTOR, executor_name
from scbench_ci.executors.docker.settings import (
    DEFAULT_CPUS,
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    DEFAULT_PIDS_LIMIT,
    DockerSettings,
    as_text,
    settings,
)
from scbench_ci.option_values import boolean, choice, seconds, whole_number
from scbench_ci.options import (
    DEFAULT_CHECK_REPEAT,
    DEFAULT_ORACLE_POLICY,
    DEFAULT_RAY_ADDRESS,
    DEFAULT_SESSION_TIMEOUT_S,
    ENGINES,
    CheckOptions,
    EvaluationOptions,
    job_count,
)
from scbench_ci.options import ray_address as ray_address_text
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, FAIL_ON
from scbench_ci.plan import Target
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.results.policy import DEFAULT_POLICY, POLICY_NAMES
from scbench_ci.trust.files import scratch_folder

StrPath = str | os.PathLike[str]
Value = TypeVar("Value")


@dataclass(frozen=True)
class EvaluationResult:
    """What `evaluate` gives back."""

    run: RunResult
    """The whole run, as results.json holds it."""
    checkpoints: tuple[CheckpointResult, ...]
    """Each target's result, in the targets' order."""
    exit_code: ExitCode
    """What `scbench-ci evaluate` would exit with: 0 passed, 1 failed (by `fail_on`), 3 an
    infrastructure failure."""
    results_path: Path | None
    """The results.json written in `output`; None without `output`."""


@dataclass(frozen=True)
class CheckResult:
    """What `check_problems` gives back."""

    run: RunResult
    """Each problem with its findings (`ProblemResult.check`) and its reference solutions' runs
    (`ProblemResult.checkpoints`)."""
    exit_code: ExitCode
    """What `scbench-ci check` would exit with."""
    results_path: Path | None
    """The results.json written in `output`; None without `output`, or when `changed_since`
    left no problem to check."""


def evaluate(
    targets: Sequence[Target],
    *,
    output: StrPath | None = None,
    executor: str = DEFAULT_EXECUTOR,
    engine: str = "local",
    ray_address: str = DEFAULT_RAY_ADDRESS,
    image: str | None = None,
    memory: str = DEFAULT_MEMORY,
    cpus: float = DEFAULT_CPUS,
    pids_limit: int = DEFAULT_PIDS_LIMIT,
    disk: str = DEFAULT_DISK,
    use_cache: bool = True,
    test_network: bool = True,
    entrypoint: str | None = None,
    environment: StrPath | None = None,
    jobs: int | str = "auto",
    policy: str = DEFAULT_POLICY,
    fail_on: str = DEFAULT_FAIL_ON,
    include_prior_tests: bool | None = None,
    test_timeout: float | None = None,
    session_timeout: float = DEFAULT_SESSION_TIMEOUT_S,
    reruns: int = 0,
    repeat: int = 1,
    flaky_passes: bool = False,
    pytest_args: Sequence[str] = (),
    echo: TextIO | None = None,
) -> EvaluationResult:
    """Evaluate each target's submission against its problem's checkpoint, as `scbench-ci
    evaluate` does; the options are its flags (`test_timeout` is `--timeout`, `use_cache=False`
    is `--no-cache`)."""
    with _api_errors():
        chosen = _targets(targets)
        fields = _run_fields(
            executor=executor,
            engine=engine,
            ray_address=ray_address,
            docker={
                "image": image,
                "memory": memory,
                "cpus": cpus,
                "pids_limit": pids_limit,
                "disk": disk,
                "use_cache": use_cache,
                "test_network": test_network,
            },
            entrypoint=entrypoint,
            environment=environment,
            jobs=jobs,
            test_timeout=test_timeout,
            session_timeout=session_timeout,
            pytest_args=pytest_args,
        )
        with _output_folder(output) as folder:
            options = EvaluationOptions(
                problems=(),
                checkpoint="all",
                submission="",
                output_dir=folder,
                policy=_parsed("policy", policy, partial(choice, choices=POLICY_NAMES)),
                fail_on=_parsed("fail_on", fail_on, partial(choice, choices=FAIL_ON)),
                include_prior_tests=_optional("include_prior_tests", include_prior_tests, boolean),
                reruns=_parsed("reruns", reruns, whole_number),
                repeat=_parsed("repeat", repeat, partial(whole_number, least=1)),
                flaky_passes=_parsed("flaky_passes", flaky_passes, boolean),
                targets=chosen,
                **fields,
            )
            outcome = evaluate_command.evaluate(options, echo=_echo(echo), warn=_warn)
            run = _in_memory(outcome.result)
    by_key = {(problem.name, c.name): c for problem, c in run.checkpoints()}
    return EvaluationResult(
        run=run,
        checkpoints=tuple(by_key[_key(target)] for target in chosen),
        exit_code=outcome.exit_code,
        results_path=_kept(outcome, output),
    )


def check_problems(
    problems: Sequence[StrPath],
    *,
    output: StrPath | None = None,
    executor: str = DEFAULT_EXECUTOR,
    engine: str = "local",
    ray_address: str = DEFAULT_RAY_ADDRESS,
    image: str | None = None,
    memory: str = DEFAULT_MEMORY,
    cpus: float = DEFAULT_CPUS,
    pids_limit: int = DEFAULT_PIDS_LIMIT,
    disk: str = DEFAULT_DISK,
    use_cache: bool = True,
    test_network: bool = True,
    entrypoint: str | None = None,
    environment: StrPath | None = None,
    jobs: int | str = "auto",
    oracle_policy: str = DEFAULT_ORACLE_POLICY,
    repeat: int = DEFAULT_CHECK_REPEAT,
    changed_since: str | None = None,
    test_timeout: float | None = None,
    session_timeout: float = DEFAULT_SESSION_TIMEOUT_S,
    pytest_args: Sequence[str] = (),
    echo: TextIO | None = None,
) -> CheckResult:
    """Check each problem (a problem folder, or a folder of problem folders) as `scbench-ci
    check` does; the options are its flags."""
    with _api_errors():
        folders = _paths("problems", problems)
        fields = _run_fields(
            executor=executor,
            engine=engine,
            ray_address=ray_address,
            docker={
                "image": image,
                "memory": memory,
                "cpus": cpus,
                "pids_limit": pids_limit,
                "disk": disk,
                "use_cache": use_cache,
                "test_network": test_network,
            },
            entrypoint=entrypoint,
            environment=environment,
            jobs=jobs,
            test_timeout=test_timeout,
            session_timeout=session_timeout,
            pytest_args=pytest_args,
        )
        with _output_folder(output) as folder:
            runs = EvaluationOptions(
                problems=folders,
                checkpoint="all",
                submission="",
                output_dir=folder,
                policy=_parsed(
                    "oracle_policy", oracle_policy, partial(choice, choices=POLICY_NAMES)
                ),
                repeat=_parsed("repeat", repeat, partial(whole_number, least=1)),
                **fields,
            )
            options = CheckOptions(runs, changed_since=_optional_text(changed_since))
            outcome = check_command.check(options, echo=_echo(echo), warn=_warn)
            run = _in_memory(outcome.result)
    return CheckResult(run=run, exit_code=outcome.exit_code, results_path=_kept(outcome, output))


def _run_fields(
    *,
    executor: str,
    engine: str,
    ray_address: str,
    docker: Mapping[str, object],
    entrypoint: str | None,
    environment: StrPath | None,
    jobs: int | str,
    test_timeout: float | None,
    session_timeout: float,
    pytest_args: Sequence[str],
) -> dict[str, Any]:
    """The EvaluationOptions fields both commands take, as the CLI's `run_options` gives them."""
    return {
        "executor": _parsed("executor", executor, executor_name),
        "engine": _parsed("engine", engine, partial(choice, choices=ENGINES)),
        "ray_address": _parsed("ray_address", ray_address, ray_address_text),
        "docker": DockerSettings(
            **{name: _parsed(name, docker[name], setting.parse) for name, setting in settings()}
        ),
        "entrypoint": _optional_text(entrypoint),
        "environment": None if environment is None else _path("environment", environment),
        "jobs": _parsed("jobs", jobs, job_count),
        "test_timeout_s": _optional("test_timeout", test_timeout, seconds),
        "session_timeout_s": _parsed("session_timeout", session_timeout, seconds),
        "pytest_args": _texts("pytest_args", pytest_args),
    }


def _parsed(name: str, value: object, parse: Callable[[str, str], Value]) -> Value:
    """The value as the parser of its flag reads its text: refused with the flag's reason."""
    return parse(name, as_text(value))


def _optional(name: str, value: object, parse: Callable[[str, str], Value]) -> Value | None:
    return None if value is None else _parsed(name, value, parse)


def _optional_text(value: str | None) -> str | None:
    return None if value is None else str(value)


def _targets(targets: Sequence[Target]) -> tuple[Target, ...]:
    if isinstance(targets, Target):
        raise UsageError("targets: a list of Target, not one Target")
    chosen = tuple(targets)
    if not chosen:
        raise UsageError("targets: no target given")
    for number, target in enumerate(chosen):
        if not isinstance(target, Target):
            raise UsageError(
                f"targets[{number}]: not a Target(problem, checkpoint, submission): "
                f"{type(target).__name__}"
            )
        _path(f"targets[{number}].problem", target.problem)
        _path(f"targets[{number}].submission", target.submission)
        if not isinstance(target.checkpoint, str):
            raise UsageError(f"targets[{number}].checkpoint: not a checkpoint name (a str)")
    return tuple(
        Target(Path(target.problem), target.checkpoint, Path(target.submission))
        for target in chosen
    )


def _key(target: Target) -> tuple[str, str]:
    """The target's problem and checkpoint as the run names them (the problem's real folder's
    name)."""
    return Path(os.path.realpath(target.problem)).name, target.checkpoint


def _path(name: str, value: object) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"{name}: not a path: {type(value).__name__}")
    return Path(value)


def _paths(name: str, values: Sequence[StrPath]) -> tuple[Path, ...]:
    if isinstance(values, (str, os.PathLike)):
        raise UsageError(f"{name}: a list of paths, not one path")
    paths = tuple(_path(f"{name}[{number}]", value) for number, value in enumerate(values))
    if not paths:
        raise UsageError(f"{name}: none given")
    return paths


def _texts(name: str, values: Sequence[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise UsageError(f"{name}: a list of arguments, not one string (['-k', 'parse'])")
    for number, value in enumerate(values):
        if not isinstance(value, str):
            raise UsageError(f"{name}[{number}]: not a str: {type(value).__name__}")
    return tuple(values)


@contextlib.contextmanager
def _output_folder(output: StrPath | None) -> Iterator[Path]:
    """The output folder given, or a scratch one removed on the way out."""
    if output is not None:
        yield _path("output", output)
        return
    with scratch_folder("scbench-api-") as folder:
        yield folder


def _kept(outcome: Outcome, output: StrPath | None) -> Path | None:
    return outcome.results_path if output is not None else None


def _in_memory(run: RunResult) -> RunResult:
    """The run with every checkpoint's tests read into memory: the files they are read from
    lazily (`StoredTests`) may be gone or changed by the time the caller looks."""
    return replace(
        run,
        problems=tuple(_problem_in_memory(problem) for problem in run.problems),
    )


def _problem_in_memory(problem: ProblemResult) -> ProblemResult:
    checkpoints = tuple(replace(c, tests=tuple(c.tests)) for c in problem.checkpoints)
    return replace(problem, checkpoints=checkpoints)


def _echo(stream: TextIO | None) -> Echo:
    return lambda: contextlib.nullcontext(stream)


def _warn(notice: str) -> None:
    """A notice that does not stop the run (the local executor's lack of isolation), as Python
    shows one."""
    # Shown at the caller of `evaluate` or `check_problems`: this, make_executor, the core, the API.
    warnings.warn(f"scbench-ci: {notice}", RuntimeWarning, stacklevel=5)


@contextlib.contextmanager
def _api_errors() -> Iterator[None]:
    """Each error the user can act on as the API's own, with its one-line message and no
    traceback from inside: an infrastructure failure (exit 3 in the CLI) as InfrastructureError,
    anything else (a bad option, target or problem) as UsageError."""
    try:
        yield
    except InfrastructureError as error:
        raise InfrastructureError(str(error)) from None
    except ScbenchError as error:
        raise UsageError(str(error)) from None
