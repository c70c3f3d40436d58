"""The Python API: `evaluate`, `check_problems` (the CLI's `check`; `scbench_ci.check` is the
package of its pipeline) and `history` called from a program, through the same cores the CLI calls
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
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from scbench_ci.commands import check as check_command
from scbench_ci.commands import evaluate as evaluate_command
from scbench_ci.commands import history as history_command
from scbench_ci.commands.channels import Echo, Outcome
from scbench_ci.foundation.errors import ExitCode, InfrastructureError, ScbenchError, UsageError
from scbench_ci.foundation.option_values import Option, as_text
from scbench_ci.foundation.paths import real_path
from scbench_ci.job.plan import Target
from scbench_ci.options import CheckOptions, EvaluationOptions, HistoryOptions, fields_of
from scbench_ci.options.declared import (
    CHANGED_SINCE,
    CHECK,
    CHECK_JOBS,
    CHECK_REPEAT,
    ENGINE,
    ENTRYPOINT,
    ENVIRONMENT,
    EVALUATE,
    EXECUTOR,
    EXECUTOR_SETTINGS,
    FAIL_ON,
    FLAKY_PASSES,
    INCLUDE_PRIOR_TESTS,
    JOBS,
    ORACLE_POLICY,
    POLICY,
    PYTEST_ARGS,
    QUALITY,
    RAY_ADDRESS,
    REPEAT,
    RERUNS,
    SCBENCH,
    SESSION_TIMEOUT,
    TEST_SHARDS,
    TEST_TIMEOUT,
)
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.results.trends import Trends
from scbench_ci.trust.files import scratch_folder

StrPath = str | os.PathLike[str]
# `evaluate` and `check_problems` spell out the keywords they share (each defaulted from its
# declaration, held to it by tests/options/test_declared.py): a signature made at run time would
# hide them from type checkers and from help().
_DOCKER = {setting.name: setting for setting in EXECUTOR_SETTINGS}
EVALUATE_KEYWORDS = (*(option for option in EVALUATE if option.keyword), PYTEST_ARGS)
"""The options `evaluate` takes as keywords (besides `output` and `echo`)."""
CHECK_KEYWORDS = (*(option for option in CHECK if option.keyword), PYTEST_ARGS)
"""The options `check_problems` takes as keywords (besides `output` and `echo`)."""


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
    executor: str = EXECUTOR.default,
    engine: str = ENGINE.default,
    ray_address: str = RAY_ADDRESS.default,
    image: str | None = _DOCKER["image"].default,
    memory: str = _DOCKER["memory"].default,
    cpus: float = _DOCKER["cpus"].default,
    pids_limit: int = _DOCKER["pids_limit"].default,
    disk: str = _DOCKER["disk"].default,
    use_cache: bool = _DOCKER["use_cache"].default,
    cache_size: str = _DOCKER["cache_size"].default,
    test_network: bool = _DOCKER["test_network"].default,
    entrypoint: str | None = ENTRYPOINT.default,
    environment: StrPath | None = ENVIRONMENT.default,
    jobs: int | str = JOBS.default,
    test_shards: int | str = TEST_SHARDS.default,
    policy: str = POLICY.default,
    fail_on: str = FAIL_ON.default,
    include_prior_tests: bool | None = INCLUDE_PRIOR_TESTS.default,
    test_timeout: float | None = TEST_TIMEOUT.default,
    session_timeout: float = SESSION_TIMEOUT.default,
    quality: bool = QUALITY.default,
    scbench: str = SCBENCH.default,
    reruns: int = RERUNS.default,
    repeat: int = REPEAT.default,
    flaky_passes: bool = FLAKY_PASSES.default,
    pytest_args: Sequence[str] = PYTEST_ARGS.default,
    echo: TextIO | None = None,
) -> EvaluationResult:
    """Evaluate each target's submission against its problem's checkpoint, as `scbench-ci
    evaluate` does; the options are its flags (`test_timeout` is `--timeout`, `use_cache=False`
    is `--no-cache`)."""
    keywords = dict(locals())  # each keyword is read through its declaration (EVALUATE_KEYWORDS)
    options = {option.name: keywords[option.name] for option in EVALUATE_KEYWORDS}
    with _ParsedSession(options, echo, open_ended=False) as one_call:
        return one_call.evaluate(targets, output=output)


class Session:
    """Evaluations one after another, or from several threads at once, that share what each
    `evaluate` call would make and throw away: the Docker client, the pre-flight (the daemon,
    the image), the problems' parsed configs, and containers made ahead of need (the next
    evaluation's is made while one runs; each serves one evaluation, then is removed). For
    reward loops that score one submission at a time.

    `Session(**options)` takes `evaluate`'s keywords but `targets` and `output`; `close` (or
    the end of a `with` block) removes what is left and waits for it."""

    def __init__(self, **options: Any) -> None:
        known = {option.name for option in EVALUATE_KEYWORDS}
        for name in options:
            if name not in known and name != "echo":
                raise TypeError(f"Session() got an unexpected keyword argument {name!r}")
        defaults = {option.name: option.default for option in EVALUATE_KEYWORDS}
        echo = options.pop("echo", None)
        self._evaluations = _ParsedSession({**defaults, **options}, echo, open_ended=True)

    def evaluate(
        self, targets: Sequence[Target], *, output: StrPath | None = None
    ) -> EvaluationResult:
        """As `scbench_ci.evaluate(targets, output=output, **options)`, with the session's
        options."""
        return self._evaluations.evaluate(targets, output=output)

    def close(self) -> None:
        self._evaluations.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _ParsedSession:
    """A session's options parsed once and its placement; each call a run of its own."""

    def __init__(self, keywords: Mapping[str, object], echo: TextIO | None, *, open_ended: bool):
        with _api_errors():
            values = _parsed_keywords(keywords, EVALUATE_KEYWORDS)
            self._fields = fields_of(
                EvaluationOptions, EVALUATE_KEYWORDS, lambda one: values[one.name]
            )
            self._echo = echo
            self._core = evaluate_command.EvaluationSession(
                self._options((), Path()), warn=_warn, open_ended=open_ended
            )

    def _options(self, targets: tuple[Target, ...], folder: Path) -> EvaluationOptions:
        return EvaluationOptions(
            problems=(),
            checkpoint="all",
            submission="",
            output_dir=folder,
            targets=targets,
            **self._fields,
        )

    def evaluate(self, targets: Sequence[Target], *, output: StrPath | None) -> EvaluationResult:
        with _api_errors():
            chosen = _targets(targets)
            with _output_folder(output) as folder:
                outcome = self._core.run(self._options(chosen, folder), echo=_echo(self._echo))
                run = _in_memory(outcome.result)
        by_key = {(problem.name, c.name): c for problem, c in run.checkpoints()}
        return EvaluationResult(
            run=run,
            checkpoints=tuple(by_key[_key(target)] for target in chosen),
            exit_code=outcome.exit_code,
            results_path=_kept(outcome, output),
        )

    def close(self) -> None:
        with _api_errors():
            self._core.close()

    def __enter__(self) -> _ParsedSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def check_problems(
    problems: Sequence[StrPath],
    *,
    output: StrPath | None = None,
    executor: str = EXECUTOR.default,
    engine: str = ENGINE.default,
    ray_address: str = RAY_ADDRESS.default,
    image: str | None = _DOCKER["image"].default,
    memory: str = _DOCKER["memory"].default,
    cpus: float = _DOCKER["cpus"].default,
    pids_limit: int = _DOCKER["pids_limit"].default,
    disk: str = _DOCKER["disk"].default,
    use_cache: bool = _DOCKER["use_cache"].default,
    cache_size: str = _DOCKER["cache_size"].default,
    test_network: bool = _DOCKER["test_network"].default,
    entrypoint: str | None = ENTRYPOINT.default,
    environment: StrPath | None = ENVIRONMENT.default,
    jobs: int | str = CHECK_JOBS.default,
    oracle_policy: str = ORACLE_POLICY.default,
    repeat: int = CHECK_REPEAT.default,
    changed_since: str | None = CHANGED_SINCE.default,
    test_timeout: float | None = TEST_TIMEOUT.default,
    session_timeout: float = SESSION_TIMEOUT.default,
    quality: bool = QUALITY.default,
    scbench: str = SCBENCH.default,
    pytest_args: Sequence[str] = PYTEST_ARGS.default,
    echo: TextIO | None = None,
) -> CheckResult:
    """Check each problem (a problem folder, or a folder of problem folders) as `scbench-ci
    check` does; the options are its flags."""
    keywords = dict(locals())  # each keyword is read through its declaration (CHECK_KEYWORDS)
    with _api_errors():
        folders = _paths("problems", problems)
        values = _parsed_keywords(keywords, CHECK_KEYWORDS)

        def value(option: Option) -> Any:
            return values[option.name]

        with _output_folder(output) as folder:
            runs = EvaluationOptions(
                problems=folders,
                checkpoint="all",
                submission="",
                output_dir=folder,
                **fields_of(EvaluationOptions, CHECK_KEYWORDS, value),
            )
            options = CheckOptions(runs, **fields_of(CheckOptions, CHECK_KEYWORDS, value))
            outcome = check_command.run_check(options, echo=_echo(echo), warn=_warn)
            run = _in_memory(outcome.result)
    return CheckResult(run=run, exit_code=outcome.exit_code, results_path=_kept(outcome, output))


def history(results: StrPath) -> Trends | None:
    """What the history a results.json carries says, as `scbench-ci history` prints it: each
    group's pass rate and each run's code quality (`quality`: the mean verbosity and erosion of
    its measured checkpoints) run by run, the flaky and the failing tests; None when it carries
    no history. `results` is the file, or a folder holding one. Read by the strict reader: a
    file it refuses is a UsageError naming the field."""
    with _api_errors():
        return history_command.run_history(HistoryOptions(_path("results", results))).trends


def _parsed_keywords(keywords: Mapping[str, object], options: Iterable[Option]) -> dict[str, Any]:
    """Each option's keyword as the parser of its flag reads its text: refused with the flag's
    reason, naming the keyword. None is the default of an option whose default is None."""
    values: dict[str, Any] = {}
    for option in options:
        given = keywords[option.name]
        if option is ENVIRONMENT:
            values[option.name] = None if given is None else _path(option.name, given)
        elif option is PYTEST_ARGS:
            values[option.name] = _texts(option.name, given)  # type: ignore[arg-type]
        elif given is None and option.default is None:
            values[option.name] = None
        else:
            values[option.name] = option.parse(option.name, as_text(given))
    return values


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
    return real_path(target.problem).name, target.checkpoint


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
    # Shown at the caller of the API: the first frame, going out, that is not scbench-ci's.
    frame, level = sys._getframe(), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("scbench_ci"):
        frame, level = frame.f_back, level + 1
    warnings.warn(f"scbench-ci: {notice}", RuntimeWarning, stacklevel=level)


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
