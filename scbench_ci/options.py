"""Each command's options, one type per command.

Each front end builds them once: the CLI from its flags (`cli/`), the action from its inputs
(`action/inputs.py`). The cores (`commands/`) take them, and the pipeline reads them as they are,
so the CLI and the action cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from scbench_ci.engines.admission import AUTO, JobCount
from scbench_ci.errors import UsageError
from scbench_ci.executors.choice import DEFAULT_EXECUTOR
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.option_values import BadValue, whole_number
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON
from scbench_ci.outputs.summary_view import DEFAULT_DETAILS
from scbench_ci.plan import CHECKPOINT_PLACEHOLDER, PROBLEM_PLACEHOLDER, Target, problem_folders
from scbench_ci.problem.model import CHECKPOINT_NAME_RULE, is_checkpoint_name
from scbench_ci.results.history import DEFAULT_WINDOW, MAX_COMMIT_CHARS
from scbench_ci.results.policy import DEFAULT_POLICY

DEFAULT_SESSION_TIMEOUT_S = 1800.0
DEFAULT_JOBS: JobCount = AUTO
ENGINES = ("local", "ray")
Engine = Literal["local", "ray"]
DEFAULT_RAY_ADDRESS = "auto"
"""Ray's own default: the cluster this machine is a node of (RAY_ADDRESS when set)."""
DEFAULT_CHECK_REPEAT = 2
DEFAULT_ORACLE_POLICY = "all-cases"
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_COMMIT = re.compile(f"[0-9a-f]{{4,{MAX_COMMIT_CHARS}}}")


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


def submission_template(option: str, value: str) -> str:
    """A `--submission` value whose placeholders are all known: a typo (`{problems}`) would
    otherwise name a folder that does not exist, and every job would be `missing`."""
    known = (PROBLEM_PLACEHOLDER, CHECKPOINT_PLACEHOLDER)
    unknown = [found for found in _PLACEHOLDER.findall(value) if found not in known]
    if unknown:
        raise BadValue(
            option,
            f"{value!r}: unknown placeholder {unknown[0]} (the known ones: {', '.join(known)})",
        )
    return value


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
    executor: str = DEFAULT_EXECUTOR
    """`docker` or `local` (`executors.executor_name`)."""
    docker: DockerSettings = field(default_factory=DockerSettings)
    include_prior_tests: bool | None = None
    entrypoint: str | None = None
    environment: Path | None = None
    test_timeout_s: float | None = None
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    policy: str = DEFAULT_POLICY
    fail_on: str = DEFAULT_FAIL_ON
    details: str = DEFAULT_DETAILS
    """Which checkpoints get a section of their own in the summary (summary_view.DETAILS)."""
    history: int = DEFAULT_WINDOW
    """How many runs results.json's history keeps, this one included; 0: none."""
    commit: str | None = None
    """The commit evaluated, for the history (`commit_of`)."""
    pytest_args: tuple[str, ...] = ()
    jobs: JobCount = DEFAULT_JOBS
    """Evaluations side by side: a fixed count, or as many as the machine's load admits."""
    engine: Engine = "local"
    """Where the runs take place: this machine, or a Ray cluster's nodes (`placement.py`)."""
    ray_address: str = DEFAULT_RAY_ADDRESS
    skip_existing: bool = False
    reruns: int = 0
    """Rerun a failing test up to this many times in its session; one that then passes is
    flaky."""
    repeat: int = 1
    """Run each checkpoint whole this many times; a test whose outcome differs is flaky."""
    flaky_passes: bool = False
    """Count flaky tests as passed for the policy (else as failed)."""
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

    def executor_settings(self, executor: str) -> dict[str, object]:
        """How the tests are run by `executor`, the one that runs them: what makes two runs of
        the same files comparable."""
        return {"executor": executor, **self.docker.fingerprinted()}


_RAY_ADDRESS = re.compile(r"(ray://)?[A-Za-z0-9._\-\[\]:]{1,200}:[0-9]{1,5}")


def ray_address(option: str, value: str) -> str:
    """`auto`, or HOST:PORT of a Ray cluster's head (ray://HOST:PORT through Ray Client)."""
    if value != DEFAULT_RAY_ADDRESS and not _RAY_ADDRESS.fullmatch(value):
        raise BadValue(option, f"{value[:200]!r} is not auto or HOST:PORT of a Ray cluster's head")
    return value


def job_count(option: str, value: str) -> JobCount:
    """`auto`, or a whole number of at least 1."""
    return AUTO if value == AUTO else whole_number(option, value, least=1)


def checkpoint_choice(option: str, value: str) -> str:
    """A checkpoint's name, or `all`."""
    if value != "all" and not is_checkpoint_name(value):
        raise BadValue(option, f"{value!r} is not a checkpoint name ({CHECKPOINT_NAME_RULE})")
    return value


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
    fail_on: str = DEFAULT_FAIL_ON
    details: str = DEFAULT_DETAILS
    artifact_name: str | None = None
    """The artifact the output folder is uploaded as, which summary.md names (None: it names
    the folder)."""
    history: int = DEFAULT_WINDOW
    commit: str | None = None


@dataclass(frozen=True)
class PlanOptions:
    """`plan`: the matrix of the jobs an evaluation of these options would run."""

    problems: tuple[Path, ...]
    checkpoint: str = "all"
    submission: str = "."
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
    fail_on: str = DEFAULT_FAIL_ON
    """The run's `--fail-on`, which the headline follows."""
    details: str = DEFAULT_DETAILS


@dataclass(frozen=True)
class HistoryOptions:
    """`history`."""

    results: Path


@dataclass(frozen=True)
class CleanupOptions:
    """`cleanup`."""

    volumes: bool = False
    """Also the cached environments the runs share."""
    owner: str | None = None
    """Only what this `HOST/PID` made, running or not."""
    everything: bool = False
    """Every run's, those in progress too."""
