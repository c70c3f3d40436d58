"""Each command's options, one type per command; how each option is given, its default and its
parser are declared once in `declared.py`.

Each front end builds them once: the CLI from its flags (`cli/`), the action from its inputs
(`action/inputs.py`), the API from its keywords (`api.py`). The cores (`commands/`) take them, and
the pipeline reads them as they are, so the front ends cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from scbench_ci.engines.admission import JobCount
from scbench_ci.executors.choice import ExecutorSettings, backend, each_executors_settings
from scbench_ci.executors.settings import Setting
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.option_values import Option
from scbench_ci.job.plan import CHECKPOINT_PLACEHOLDER, PROBLEM_PLACEHOLDER, Target, problem_folders
from scbench_ci.options.declared import (
    DETAILS,
    ENGINE,
    EVERY_CHECKPOINT,
    EXECUTOR,
    FAIL_ON,
    HISTORY,
    JOBS,
    POLICY,
    QUALITY,
    RAY_ADDRESS,
    REPEAT,
    RERUNS,
    SCBENCH,
    SESSION_TIMEOUT,
    SUBMISSION,
    TEST_SHARDS,
    checkpoint_choice,
    job_count,
    ray_address,
    submission_template,
)
from scbench_ci.results.history_model import MAX_COMMIT_CHARS

__all__ = [
    "CheckOptions",
    "CleanupOptions",
    "EvaluationOptions",
    "HistoryOptions",
    "MergeOptions",
    "PlanOptions",
    "SummaryOptions",
    "carried_over",
    "check_shared_submission",
    "checkpoint_choice",
    "commit_of",
    "fields_of",
    "is_template",
    "job_count",
    "ray_address",
    "submission_template",
]

Engine = Literal["local", "ray"]
_Options = TypeVar("_Options")
_COMMIT = re.compile(f"[0-9a-f]{{4,{MAX_COMMIT_CHARS}}}")


def fields_of(
    options_type: type, declared: Iterable[Option], value: Callable[[Option], Any]
) -> dict[str, Any]:
    """The fields of `options_type` that the `declared` options set, each one's value as the
    front end gives it (`value`): how every front end fills a command's options. The
    executors' settings are each executor's one value (`each_executors_settings`); an option that
    is no field of the type (the CLI's `--quiet`) is the front end's to read."""
    names = {one.name for one in dataclasses.fields(options_type)}
    fields: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for option in declared:
        if isinstance(option, Setting):
            settings[option.name] = value(option)
        elif option.field_name in names:
            fields[option.field_name] = value(option)
    if settings and "settings_by_executor" in names:
        fields["settings_by_executor"] = each_executors_settings(settings)
    return fields


def carried_over(options_type: type[_Options], source: object, **given: Any) -> _Options:
    """Another command's options for the same run: `given`, and every other field of
    `options_type` that `source` (one command's options, read and checked) also has, with its
    value; as the action fills `plan`'s and `merge`'s from the evaluation's inputs."""
    names = (one.name for one in dataclasses.fields(options_type))  # type: ignore[arg-type]
    shared = {name: getattr(source, name) for name in names if hasattr(source, name)}
    return options_type(**(shared | given))


def commit_of(env: Mapping[str, str]) -> str | None:
    """The commit a run evaluates, which its history records: `GITHUB_SHA`, when it is set."""
    sha = env.get("GITHUB_SHA", "")
    if not sha:
        return None
    if not _COMMIT.fullmatch(sha):
        raise UsageError(f"GITHUB_SHA: {sha[:80]!r} is not a commit hash (lowercase hex)")
    return sha


def is_template(submission: str) -> bool:
    """Whether the submission names a folder per job (`{problem}`, `{checkpoint}` in it)."""
    return PROBLEM_PLACEHOLDER in submission or CHECKPOINT_PLACEHOLDER in submission


def check_shared_submission(
    template: str, problem_paths: tuple[Path, ...], *, option: str, allow: str
) -> None:
    """A UsageError when several problems would be evaluated against one submission folder (a
    template without `{problem}`); `allow` says how to ask for that (`give --same-submission`)."""
    if PROBLEM_PLACEHOLDER in template:
        return
    count = len(problem_folders(problem_paths))
    if count > 1:
        raise UsageError(
            f"{option}: {template!r} has no {PROBLEM_PLACEHOLDER}, so each of the {count} "
            f"problems would be evaluated against the same folder; put {PROBLEM_PLACEHOLDER} in "
            f"it, or {allow} if that is meant"
        )


@dataclass(frozen=True)
class EvaluationOptions:
    """`evaluate`: what is evaluated and how; and how `check` makes its runs."""

    problems: tuple[Path, ...]
    """Problem folders, or folders of problem folders."""
    checkpoint: str
    """A checkpoint name, or `all`."""
    submission: str
    """A folder; PROBLEM_PLACEHOLDER and CHECKPOINT_PLACEHOLDER in it are replaced by each
    job's problem's folder name and checkpoint's name (`plan.fill_template`)."""
    output_dir: Path
    executor: str = EXECUTOR.default
    """A backend's name (`executors/choice.py`)."""
    settings_by_executor: Mapping[str, ExecutorSettings] = field(
        default_factory=each_executors_settings
    )
    """Each backend's settings, by its name, as their options give them."""
    include_prior_tests: bool | None = None
    entrypoint: str | None = None
    environment: Path | None = None
    test_timeout_s: float | None = None
    session_timeout_s: float = SESSION_TIMEOUT.default
    policy: str = POLICY.default
    fail_on: str = FAIL_ON.default
    details: str = DETAILS.default
    """Which checkpoints get a section of their own in the summary (results.details.DETAILS)."""
    history: int = HISTORY.default
    """How many runs results.json's history keeps, this one included; 0: none."""
    commit: str | None = None
    """The commit evaluated, for the history (`commit_of`)."""
    pytest_args: tuple[str, ...] = ()
    jobs: JobCount = JOBS.default
    """Evaluations side by side at most (`--jobs`): a fixed count, or as many as the machine's
    load admits."""
    test_shards: JobCount = TEST_SHARDS.default
    """Runs each checkpoint's tests are split over (`--shards`, `shards.py`): a fixed count, or
    as many as the cores no other evaluation holds."""
    engine: Engine = ENGINE.default
    """Where the runs take place: this machine, or a Ray cluster's nodes (`placement.py`)."""
    ray_address: str = RAY_ADDRESS.default
    skip_existing: bool = False
    reruns: int = RERUNS.default
    """Rerun a failing test up to this many times in its session; one that then passes is
    flaky."""
    repeat: int = REPEAT.default
    """Run each checkpoint whole this many times; a test whose outcome differs is flaky."""
    flaky_passes: bool = False
    """Count flaky tests as passed for the policy (else as failed)."""
    quality: bool = QUALITY.default
    """Measure each checkpoint's code quality (scb-check) after its tests."""
    scbench: str = SCBENCH.default
    """Whose rules decide: the name of an SCBench runner (`scbench_runner.RUNNERS`)."""
    select: tuple[str, ...] = ()
    """Only these `<problem>/<checkpoint>`: a shard of `scbench-ci plan`."""
    own_output: bool = False
    """The output folder is the caller's own even inside a submission or a problem under
    review (the action's `.scbench/` in its workspace); else it is refused there. Nothing in it
    is trusted either way."""
    confine_submissions_to: Path | None = None
    """Every job's submission folder must be inside this folder (the action's workspace)."""
    targets: tuple[Target, ...] = ()
    """Explicit jobs (the Python API's), evaluated instead of problems x checkpoint x
    submission, which are then not read (`plan.plan_targets`)."""

    @property
    def executor_settings(self) -> ExecutorSettings:
        """The settings of the executor that runs the tests."""
        return self.settings_by_executor[backend(self.executor).name]


@dataclass(frozen=True)
class CheckOptions:
    """`check`."""

    runs: EvaluationOptions
    """The problems and how their runs are made (output folder, jobs, the executor's settings,
    timeouts, what fails the check); its policy is the oracle policy, its repeat the number of
    oracle runs of each checkpoint. Its checkpoint and submission are not read."""
    changed_since: str | None = None
    """Only the problems with files changed since this git ref."""


@dataclass(frozen=True)
class MergeOptions:
    """`merge`."""

    results: tuple[Path, ...]
    """The shards' results.json files."""
    output_dir: Path
    fail_on: str = FAIL_ON.default
    details: str = DETAILS.default
    artifact_name: str | None = None
    """The artifact the output folder is uploaded as, which summary.md names (None: it names
    the folder)."""
    history: int = HISTORY.default
    commit: str | None = None


@dataclass(frozen=True)
class PlanOptions:
    """`plan`: the matrix of the jobs an evaluation of these options would run."""

    problems: tuple[Path, ...]
    checkpoint: str = EVERY_CHECKPOINT.default
    submission: str = SUBMISSION.default
    output_dir: Path = Path(".scbench")
    include_prior_tests: bool | None = None
    select: tuple[str, ...] = ()
    shards: int | None = None
    """N matrix jobs of balanced length; None: one per checkpoint."""
    confine_submissions_to: Path | None = None
    """As EvaluationOptions'."""


@dataclass(frozen=True)
class SummaryOptions:
    """`summary`."""

    results: Path
    artifact_url: str | None = None
    artifact_name: str | None = None
    output: Path | None = None
    """A file; None: the markdown is only returned."""
    fail_on: str = FAIL_ON.default
    """The run's `--fail-on`, which the headline follows."""
    details: str = DETAILS.default


@dataclass(frozen=True)
class HistoryOptions:
    """`history`."""

    results: Path


@dataclass(frozen=True)
class CleanupOptions:
    """`cleanup`."""

    yes: bool = False
    """Remove what is found (else it is only listed)."""
    volumes: bool = False
    """Also the cached environments the runs share that no run used for `unused_for_s`."""
    unused_for_s: float = 3600.0
    owner: str | None = None
    """Only what this `HOST/PID` made, running or not."""
    everything: bool = False
    """Every run's, those in progress too."""
