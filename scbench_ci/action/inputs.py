"""The action's inputs, read as the runner passes them to a container action (INPUT_<NAME>)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.errors import UsageError
from scbench_ci.executors.base import REPORTS_DIR
from scbench_ci.executors.docker.executor import (
    DEFAULT_CPUS,
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    DEFAULT_PIDS_LIMIT,
    checked_disk,
    checked_size,
)
from scbench_ci.options import DEFAULT_SESSION_TIMEOUT_S, EvaluationOptions
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, FAIL_ON
from scbench_ci.plan import CHECKPOINT_PLACEHOLDER, PROBLEM_PLACEHOLDER, fill_template, plan_jobs
from scbench_ci.problem.model import CHECKPOINT_NAME_RULE, is_checkpoint_name, real_path
from scbench_ci.results.policy import DEFAULT_POLICY, POLICY_NAMES

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}

COMMANDS = ("evaluate", "plan", "merge", "check")
ARTIFACT_BASELINE = "artifact:"
UNEXPANDED_TOKEN = "${{ github.token }}"

DEFAULTS: dict[str, str | None] = {
    "command": "evaluate",
    "problem": "",
    "checkpoint": "",
    "select": "",
    "submission": ".",
    "include_prior_tests": "",
    "entrypoint": "",
    "environment": "",
    "image": "",
    "memory": DEFAULT_MEMORY,
    "cpus": f"{DEFAULT_CPUS:g}",
    "pids_limit": str(DEFAULT_PIDS_LIMIT),
    "disk": DEFAULT_DISK,
    "cache": "true",
    "test_network": "false",
    "timeout": "",
    "session_timeout": f"{DEFAULT_SESSION_TIMEOUT_S:g}",
    "pass_policy": DEFAULT_POLICY,
    "fail_on_policy": "true",
    "fail_on": DEFAULT_FAIL_ON,
    "baseline": "",
    "baseline_branch": "",
    "reruns": "0",
    "repeat": "",
    "flaky_passes": "false",
    "pytest_args": "",
    "jobs": "",
    "skip_existing": "false",
    "results": "",
    "shards": "",
    "changed_since": "",
    "oracle_policy": "all-cases",
    "comment": "false",
    "github_token": UNEXPANDED_TOKEN,
    "job_summary": "true",
    "annotations": "true",
    "upload_artifact": "true",
    "artifact_name": "",
    "retention_days": "",
}
"""Every input the action reads, with its default (None: required), as action.yml declares them.
The runner passes action.yml's defaults; these apply where it does not, as in a step that runs the
image itself (`uses: docker://...`). An empty input means its default."""


@dataclass(frozen=True)
class ActionInputs:
    workspace: Path
    command: str
    options: EvaluationOptions
    """What to evaluate and how: the same options the CLI's flags make (for `merge`, only its
    output folder counts)."""
    fail_on: str
    baseline: str | None
    """A path in the workspace, or `artifact:<name>`."""
    baseline_branch: str | None
    results: tuple[Path, ...]
    shards: int | None
    changed_since: str | None
    oracle_policy: str
    repeat_given: bool
    """Whether `repeat` was given (`check` repeats twice when it was not)."""
    comment: bool
    github_token: str
    job_summary: bool
    annotations: bool
    upload_artifact: bool
    artifact_name: str | None
    retention_days: int | None


def input_value(env: Mapping[str, str], name: str) -> str:
    """`core.getInput`: upper-cased, spaces to underscores, hyphens kept, trimmed."""
    return env.get(f"INPUT_{name.replace(' ', '_').upper()}", "").strip()


def workspace_of(env: Mapping[str, str]) -> Path:
    """The workspace the runner mounts into the action's container."""
    return Path(env.get("GITHUB_WORKSPACE") or "/github/workspace")


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    workspace = real_path(workspace_of(env))

    def value(name: str) -> str:
        given = input_value(env, name) or DEFAULTS[name]
        if given is None:
            raise UsageError(f"input {name}: is required")
        return given

    def text(name: str) -> str | None:
        return value(name) or None

    def path(name: str, relative: str) -> Path:
        return _inside(workspace, name, relative)

    command = value("command")
    if command not in COMMANDS:
        raise UsageError(f"input command: {command!r} is not one of {', '.join(COMMANDS)}")
    checkpoint = value("checkpoint") or ("all" if command in ("plan", "check") else "")
    if command != "merge" and not checkpoint:
        raise UsageError(f"input checkpoint: is required (command {command})")
    if checkpoint and checkpoint != "all" and not is_checkpoint_name(checkpoint):
        raise UsageError(
            f"input checkpoint: {checkpoint!r} is not a checkpoint name ({CHECKPOINT_NAME_RULE})"
        )
    problems = tuple(
        path("problem", line.strip()) for line in value("problem").splitlines() if line.strip()
    )
    if command != "merge" and not problems:
        raise UsageError(f"input problem: is required (command {command})")
    results = tuple(
        path("results", line.strip()) for line in value("results").splitlines() if line.strip()
    )
    if command == "merge" and not results:
        raise UsageError("input results: is required (command merge)")
    fail_on = value("fail_on")
    if fail_on not in FAIL_ON:
        raise UsageError(f"input fail_on: {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    if not _boolean("fail_on_policy", value("fail_on_policy")):
        fail_on = "never"
    baseline = text("baseline")
    if baseline is not None and not baseline.startswith(ARTIFACT_BASELINE):
        path("baseline", baseline)
    elif baseline is not None and not baseline.removeprefix(ARTIFACT_BASELINE).strip():
        raise UsageError("input baseline: `artifact:` needs an artifact name after it")
    shards = text("shards")
    repeat = text("repeat")
    oracle_policy = value("oracle_policy")
    if oracle_policy not in POLICY_NAMES:
        known = ", ".join(POLICY_NAMES)
        raise UsageError(f"input oracle_policy: unknown policy {oracle_policy!r} (one of {known})")
    token = value("github_token")
    submission = value("submission")
    if PROBLEM_PLACEHOLDER not in submission and CHECKPOINT_PLACEHOLDER not in submission:
        _inside(workspace, "submission", submission)
    _check_output_folder(workspace / REPORTS_DIR)
    policy = value("pass_policy")
    if policy not in POLICY_NAMES:
        raise UsageError(
            f"input pass_policy: unknown policy {policy!r} (one of {', '.join(POLICY_NAMES)})"
        )
    environment = text("environment")
    include_prior_tests = text("include_prior_tests")
    timeout = text("timeout")
    jobs = text("jobs")
    options = EvaluationOptions(
        problems=problems,
        checkpoint=checkpoint,
        submission=str(workspace / submission),
        output_dir=workspace / REPORTS_DIR,
        executor="docker",
        include_prior_tests=(
            _boolean("include_prior_tests", include_prior_tests) if include_prior_tests else None
        ),
        entrypoint=text("entrypoint"),
        environment=path("environment", environment) if environment else None,
        image=text("image"),
        memory=checked_size("input memory", value("memory")),
        cpus=_positive("cpus", value("cpus"), "a number of CPUs"),
        pids_limit=_whole_number("pids_limit", value("pids_limit"), least=1),
        disk=checked_disk("input disk", value("disk")),
        test_network=_boolean("test_network", value("test_network")),
        use_cache=_boolean("cache", value("cache")),
        test_timeout_s=_positive("timeout", timeout, "a number of seconds") if timeout else None,
        session_timeout_s=_positive(
            "session_timeout", value("session_timeout"), "a number of seconds"
        ),
        policy=policy,
        pytest_args=tuple(_split(value("pytest_args"))),
        jobs=_whole_number("jobs", jobs, least=1) if jobs else None,
        skip_existing=_boolean("skip_existing", value("skip_existing")),
        reruns=_whole_number("reruns", value("reruns")),
        repeat=_whole_number("repeat", repeat, least=1) if repeat else 1,
        flaky_passes=_boolean("flaky_passes", value("flaky_passes")),
        select=tuple(value("select").split()),
        # `.scbench/` in the workspace is the action's own, though the default submission `.`
        # holds it: never staged, never trusted (see SECURITY.md).
        own_output=True,
    )
    retention_days = text("retention_days")
    inputs = ActionInputs(
        workspace=workspace,
        command=command,
        options=options,
        fail_on=fail_on,
        baseline=baseline,
        baseline_branch=text("baseline_branch"),
        results=results,
        shards=_whole_number("shards", shards, least=1) if shards else None,
        changed_since=text("changed_since"),
        oracle_policy=oracle_policy,
        repeat_given=repeat is not None,
        comment=_boolean("comment", value("comment")),
        # Not expanded: the image was run as a step of its own (`uses: docker://...`).
        github_token="" if token == UNEXPANDED_TOKEN else token,
        job_summary=_boolean("job_summary", value("job_summary")),
        annotations=_boolean("annotations", value("annotations")),
        upload_artifact=_boolean("upload_artifact", value("upload_artifact")),
        artifact_name=text("artifact_name"),
        retention_days=(
            _whole_number("retention_days", retention_days) if retention_days else None
        ),
    )
    if command in ("merge", "check"):
        # `check` reports a problem that does not load as its finding, not as bad input.
        return inputs
    # Last, as it reads the problems: a bad input of any kind is one error before any output.
    plan = plan_jobs(
        options.problems,
        checkpoint,
        options.submission,
        options.output_dir,
        options.include_prior_tests,
        select=options.select,
    )
    for job in plan.jobs:
        # Each job's own folder: `solutions/checkpoint_1` may be a symlink out.
        _inside(workspace, "submission", fill_template(submission, job.problem, job.checkpoint))
    return inputs


def _check_output_folder(output: Path) -> None:
    """The action writes `.scbench/` and uploads it: written or read through a symlink, it could
    be any folder of the runner."""
    if output.is_symlink():
        raise UsageError(f"{output}: the output folder is a symlink; remove it")
    if not output.exists():
        return
    if not output.is_dir():
        raise UsageError(f"{output}: the output folder is not a folder; remove it")
    for folder, names, files in os.walk(output):
        for name in sorted([*names, *files]):
            entry = Path(folder) / name
            if entry.is_symlink():
                raise UsageError(f"{entry}: a symlink in the output folder; remove it")


def _inside(workspace: Path, name: str, value: str) -> Path:
    resolved = real_path(workspace / value)
    if not resolved.is_relative_to(workspace):
        raise UsageError(f"input {name}: {value!r} leaves the workspace {workspace}")
    return resolved


def _boolean(name: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise UsageError(f"input {name}: {value!r} is not a boolean (use true or false)")


def _positive(name: str, value: str, what: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"input {name}: {value!r} is not {what}") from None
    if not number > 0:  # NaN too
        raise UsageError(f"input {name}: must be more than 0, got {value!r}")
    return number


def _whole_number(name: str, value: str, least: int = 0) -> int:
    if not (value.isascii() and value.isdigit()):
        raise UsageError(f"input {name}: {value!r} is not a whole number")
    if int(value) < least:
        raise UsageError(f"input {name}: must be at least {least}, got {value!r}")
    return int(value)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as error:
        raise UsageError(f"input pytest_args: {error}") from None
