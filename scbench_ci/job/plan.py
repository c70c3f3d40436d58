"""Plan a run: problems x checkpoints -> jobs, each one checkpoint with its submission folder; or
explicit targets (the Python API's), each one job.

Everything the user can get wrong is found here, before any test runs, and reported all at once:
problems that do not load, checkpoints that do not exist, test files that are missing, two
problems that would share an output folder, a single submission folder (no `{problem}` or
`{checkpoint}` in it) that does not exist. A templated submission folder that does not exist is
not an error of the run: that job's result says so (failure kind `missing`).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePath

from scbench_ci.foundation.errors import ProblemError, ScbenchError, UsageError, UsageErrors
from scbench_ci.foundation.paths import real_path
from scbench_ci.job.workspace import tested_checkpoints
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import CONFIG_NAME, Checkpoint, Problem

MAX_LISTED_ERRORS = 20

DEFAULT_SECONDS = 10.0
"""A checkpoint's estimated duration when nothing is known of any."""

PROBLEM_PLACEHOLDER = "{problem}"
CHECKPOINT_PLACEHOLDER = "{checkpoint}"


@dataclass(frozen=True)
class Job:
    """One evaluation: a checkpoint of a problem against one submission folder."""

    problem: Problem
    checkpoint: Checkpoint
    include_prior_tests: bool
    submission: Path
    """Resolved; it may not exist (the job's result is then `missing`)."""
    artifacts: str
    """The job's folder in the output folder, relative: `<problem>/<checkpoint>`, and
    `<problem>/<checkpoint>/run-<n>` for each run of a repeated checkpoint."""
    test_timeout_s: float
    """Each test's timeout (`test_timeout`), what pytest-timeout is given and what the run's
    durations are measured against."""
    run: int = 1
    runs: int = 1
    """With `--repeat`: this job is run `run` of the checkpoint's `runs`."""
    pytest_args: tuple[str, ...] = ()
    """Given to pytest after the run's own (`check`'s `--collect-only`)."""
    role: str = ""
    """What the job is for, in its label: `check`'s runs (`reference solution`, ...)."""
    cut_network: bool = False
    """The network is cut after setup, whatever the settings say: `check`'s run that finds the
    tests that reach it (container executors)."""
    quality: bool = True
    """Whether its submission's code quality is measured, when the run measures it: `check`
    measures its reference solutions only."""

    @property
    def key(self) -> str:
        """`<problem>/<checkpoint>`, as `--select` names it."""
        return f"{self.problem.root.name}/{self.checkpoint.name}"

    @property
    def folder(self) -> str:
        """The checkpoint's folder in the output folder: `artifacts` without `run-<n>`."""
        return self.artifacts.rsplit("/", 1)[0] if self.runs > 1 else self.artifacts

    @property
    def label(self) -> str:
        label = f"{self.problem.root.name} / {self.checkpoint.name}"
        if self.role:
            label += f", {self.role}"
        return f"{label} (run {self.run}/{self.runs})" if self.runs > 1 else label


def resolved_test_timeout(checkpoint: Checkpoint, test_timeout_s: float | None) -> float:
    """The timeout of each test of a checkpoint's jobs: `--timeout` when given, else the
    checkpoint's (or its problem's)."""
    return test_timeout_s or checkpoint.timeout_s


def resolved_include_prior_tests(checkpoint: Checkpoint, include_prior_tests: bool | None) -> bool:
    """Whether a checkpoint's jobs also run its prior checkpoints' tests: as asked when asked,
    else as the checkpoint's config says."""
    return checkpoint.include_prior_tests if include_prior_tests is None else include_prior_tests


@dataclass(frozen=True)
class Target:
    """One evaluation named outright: a problem folder, one of its checkpoints, and the
    submission folder evaluated against it."""

    problem: Path
    checkpoint: str
    submission: Path


@dataclass(frozen=True)
class Plan:
    problems: tuple[Problem, ...]
    jobs: tuple[Job, ...]
    """In order: problem by problem, each problem's checkpoints in their order."""


def problem_folders(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """Each path is a problem (it holds config.yaml) or a folder of problems (a repository's
    `problems/`): then every sub-folder holding a config.yaml, by name."""
    folders: list[Path] = []
    for path in paths:
        if not path.is_dir() or _has_config(path):
            folders.append(path)
            continue
        found = sorted(child for child in path.iterdir() if child.is_dir() and _has_config(child))
        if not found:
            raise UsageError(f"{path}: holds no {CONFIG_NAME} and no problem folders with one")
        folders += found
    return tuple(dict.fromkeys(real_path(folder) for folder in folders))


def _has_config(folder: Path) -> bool:
    """Whether a config.yaml is there: a bad one (a link loop, a folder) is load_problem's to
    refuse, with its reason."""
    return os.path.lexists(folder / CONFIG_NAME)


def plan_jobs(
    problem_paths: tuple[Path, ...],
    checkpoint: str,
    submission_template: str,
    output_dir: Path,
    include_prior_tests: bool | None,
    select: tuple[str, ...] = (),
    repeat: int = 1,
    confine_submissions_to: Path | None = None,
    load: Callable[[Path], Problem] = load_problem,
    test_timeout_s: float | None = None,
) -> Plan:
    """`select`: only these `<problem>/<checkpoint>` of the problems and checkpoints named (a
    shard of `scbench-ci plan`); `repeat`: each checkpoint that many times;
    `confine_submissions_to`: a folder every job's submission folder must be in (the action's
    workspace); `load`: how a problem is loaded (`problem.load.KeptProblems`'s, in a session);
    `test_timeout_s`: each test's timeout (None: each checkpoint's)."""
    problems, errors = _load_problems(problem_folders(problem_paths), load)
    jobs: list[Job] = []
    for problem in problems:
        try:
            selected = problem.select(checkpoint)
        except ProblemError as error:
            errors.append(error)
            continue
        for chosen in selected:
            include = resolved_include_prior_tests(chosen, include_prior_tests)
            folder = f"{problem.root.name}/{chosen.name}"
            if select and folder not in select:
                continue
            submission = real_path(Path(fill_template(submission_template, problem, chosen)))
            errors += _missing_tests(problem, chosen, include)
            timeout = resolved_test_timeout(chosen, test_timeout_s)
            job = Job(problem, chosen, include, submission, folder, test_timeout_s=timeout)
            jobs += repeats(job, repeat)
    known = {job.key for job in jobs}
    errors += [
        UsageError(
            f"--select: {key!r} is not a checkpoint of the problems given (PROBLEM/CHECKPOINT)"
        )
        for key in dict.fromkeys(select)
        if key not in known
    ]
    errors += _output_conflicts(jobs, real_path(output_dir))
    errors += _missing_single_submission(submission_template)
    if errors:
        _raise_all(errors)
    if confine_submissions_to is not None:
        _confine(jobs, submission_template, confine_submissions_to)
    return Plan(problems=tuple(problems), jobs=tuple(jobs))


def plan_targets(
    targets: tuple[Target, ...],
    output_dir: Path,
    include_prior_tests: bool | None,
    repeat: int = 1,
    load: Callable[[Path], Problem] = load_problem,
    test_timeout_s: float | None = None,
) -> Plan:
    """A job for each target, refused as `plan_jobs` refuses its problems and checkpoints; the
    jobs problem by problem (in the order the targets first name them), each problem's
    checkpoints in their order. A checkpoint given twice for one problem is refused: the output
    folder and results.json keep one result per checkpoint of a problem."""
    folders = tuple(dict.fromkeys(real_path(Path(target.problem)) for target in targets))
    problems, errors = _load_problems(folders, load)
    by_folder = {problem.root: problem for problem in problems}
    chosen: dict[tuple[Path, str], Path] = {}
    for number, target in enumerate(targets):
        problem = by_folder.get(real_path(Path(target.problem)))
        if problem is None:
            continue
        try:
            problem.checkpoint(target.checkpoint)
        except ProblemError as error:
            errors.append(error)
            continue
        key = (problem.root, target.checkpoint)
        if key in chosen:
            errors.append(
                UsageError(
                    f"targets[{number}]: {problem.root.name}/{target.checkpoint} is already a "
                    "target: a run keeps one result per checkpoint of a problem; evaluate the "
                    "other submission in a run of its own"
                )
            )
            continue
        chosen[key] = real_path(Path(target.submission))
    jobs: list[Job] = []
    for problem in problems:
        for checkpoint in problem.checkpoints:
            submission = chosen.get((problem.root, checkpoint.name))
            if submission is None:
                continue
            include = resolved_include_prior_tests(checkpoint, include_prior_tests)
            errors += _missing_tests(problem, checkpoint, include)
            folder = f"{problem.root.name}/{checkpoint.name}"
            timeout = resolved_test_timeout(checkpoint, test_timeout_s)
            job = Job(problem, checkpoint, include, submission, folder, test_timeout_s=timeout)
            jobs += repeats(job, repeat)
    errors += _output_conflicts(jobs, output_dir)
    if errors:
        _raise_all(errors)
    return Plan(problems=tuple(problems), jobs=tuple(jobs))


def _missing_single_submission(submission_template: str) -> list[ScbenchError]:
    """One submission folder for every job, and it is not there: a typo of the run, not a failure
    of each evaluation (a templated folder that is missing is that evaluation's `missing`)."""
    if PROBLEM_PLACEHOLDER in submission_template or CHECKPOINT_PLACEHOLDER in submission_template:
        return []
    if os.path.lexists(submission_template):
        return []
    return [UsageError(f"submission {submission_template!r}: no such folder")]


def _confine(jobs: list[Job], submission_template: str, folder: Path) -> None:
    """Each job's own folder: `solutions/checkpoint_1` may be a symlink out. The message names
    the action's input, the one caller that confines."""
    for job in jobs:
        if not job.submission.is_relative_to(folder):
            given = PurePath(fill_template(submission_template, job.problem, job.checkpoint))
            shown = given.relative_to(folder) if given.is_relative_to(folder) else given
            raise UsageError(f"input submission: {str(shown)!r} leaves the workspace {folder}")


def _load_problems(
    folders: tuple[Path, ...], load: Callable[[Path], Problem]
) -> tuple[list[Problem], list[ScbenchError]]:
    problems: list[Problem] = []
    errors: list[ScbenchError] = []
    names: dict[str, Path] = {}
    config_names: dict[str, Path] = {}
    for folder in folders:
        try:
            problem = load(folder)
        except ScbenchError as error:
            errors.append(error)
            continue
        if folder.name in names:
            errors.append(
                UsageError(
                    f"--problem: {folder} and {names[folder.name]} have the same folder name, "
                    "and so would share an output folder"
                )
            )
            continue
        if problem.name in config_names:
            errors.append(
                ProblemError(
                    folder / CONFIG_NAME,
                    "name",
                    f"{problem.name!r} is also the name of {config_names[problem.name]}: "
                    "SCBench keys a run's results by problem name",
                )
            )
            continue
        names[folder.name] = folder
        config_names[problem.name] = folder
        problems.append(problem)
    return problems, errors


def repeats(job: Job, times: int) -> list[Job]:
    """The job run `times` times: each run in its own `run-<n>` in the job's folder when more
    than one."""
    if times == 1:
        return [job]
    return [
        replace(job, artifacts=f"{job.artifacts}/run-{run}", run=run, runs=times)
        for run in range(1, times + 1)
    ]


def fill_template(template: str, problem: Problem, checkpoint: Checkpoint) -> str:
    """A `--submission` value with `{problem}` and `{checkpoint}` replaced."""
    return template.replace(PROBLEM_PLACEHOLDER, problem.root.name).replace(
        CHECKPOINT_PLACEHOLDER, checkpoint.name
    )


def _missing_tests(
    problem: Problem, checkpoint: Checkpoint, include_prior: bool
) -> list[ScbenchError]:
    return [
        ProblemError(
            problem.tests_dir / tested.test_file,
            None,
            f"missing (the tests of checkpoint {tested.name!r})",
        )
        for tested in tested_checkpoints(problem, checkpoint, include_prior)
        if not (problem.tests_dir / tested.test_file).is_file()
    ]


def _output_conflicts(jobs: list[Job], output_dir: Path) -> list[ScbenchError]:
    return [
        UsageError(
            f"--output: {output_dir} would write over the submission {job.submission} ({job.label})"
        )
        for job in jobs
        if output_dir == job.submission or job.submission.is_relative_to(output_dir)
    ]


def _raise_all(errors: list[ScbenchError]) -> None:
    """The one error as it is, or one error that lists them all."""
    by_text = {str(error): error for error in errors}
    if len(by_text) == 1:
        raise errors[0]
    unique = list(by_text)
    shown = unique[:MAX_LISTED_ERRORS]
    more = len(unique) - len(shown)
    items = [f"  - {error}" for error in shown] + ([f"  … and {more} more"] if more else [])
    raise UsageErrors(f"{len(unique)} problems with the run:", items)


def estimated_durations(jobs: Sequence[Job], durations: Mapping[str, float]) -> dict[str, float]:
    """Each job's duration by `Job.key`, as `durations` (a baseline's) knows it; one it does not
    know is estimated at the median of those it knows."""
    known = [durations[job.key] for job in jobs if job.key in durations]
    fallback = statistics.median(known) if known else DEFAULT_SECONDS
    return {job.key: durations.get(job.key, fallback) for job in jobs}


def start_order(jobs: Sequence[Job], durations: Mapping[str, float]) -> list[int]:
    """The jobs' positions in the order to start them: the longest first, so that a run does not
    end waiting on one late long job; in their order when no duration is known."""
    if not durations:
        return list(range(len(jobs)))
    estimate = estimated_durations(jobs, durations)
    return sorted(range(len(jobs)), key=lambda index: -estimate[jobs[index].key])
