"""The action's inputs, read as the runner passes them to a container action (INPUT_<NAME>)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from scbench_ci.errors import UsageError
from scbench_ci.executors.base import REPORTS_DIR
from scbench_ci.executors.docker.settings import DockerSettings, as_text, settings
from scbench_ci.option_values import boolean, seconds, whole_number
from scbench_ci.options import (
    DEFAULT_CHECK_REPEAT,
    DEFAULT_ORACLE_POLICY,
    DEFAULT_SESSION_TIMEOUT_S,
    CheckOptions,
    EvaluationOptions,
    MergeOptions,
    PlanOptions,
    check_shared_submission,
    checkpoint_choice,
    commit_of,
    is_template,
    job_count,
    submission_template,
)
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, FAIL_ON
from scbench_ci.outputs.summary_view import DEFAULT_DETAILS, DETAILS
from scbench_ci.problem.model import real_path
from scbench_ci.results.baseline import results_files
from scbench_ci.results.history import DEFAULT_WINDOW, MAX_WINDOW
from scbench_ci.results.policy import DEFAULT_POLICY, POLICY_NAMES

COMMANDS = ("evaluate", "plan", "merge", "check", "publish")
WITHOUT_PROBLEMS = ("merge", "publish")
"""The commands that read results, not problems."""
MERGED_ARTIFACT = "scbench-merged"
CHECK_ARTIFACT = "scbench-check"
ARTIFACT_BASELINE = "artifact:"
UNEXPANDED_TOKEN = "${{ github.token }}"
Parsed = TypeVar("Parsed")
_AT_LEAST_ONE = partial(whole_number, least=1)

DEFAULTS: dict[str, str | None] = {
    "command": "evaluate",
    "problem": "",
    "checkpoint": "",
    "select": "",
    "submission": ".",
    "same_submission": "false",
    "include_prior_tests": "",
    "entrypoint": "",
    "environment": "",
    **{setting.input: as_text(getattr(DockerSettings(), name)) for name, setting in settings()},
    "timeout": "",
    "session_timeout": f"{DEFAULT_SESSION_TIMEOUT_S:g}",
    "pass_policy": DEFAULT_POLICY,
    "fail_on_policy": "true",
    "fail_on": DEFAULT_FAIL_ON,
    "details": DEFAULT_DETAILS,
    "history": str(DEFAULT_WINDOW),
    "baseline": "",
    "baseline_branch": "",
    "reruns": "0",
    "repeat": "",
    "flaky_passes": "false",
    "pytest_args": "",
    "jobs": "auto",
    "skip_existing": "false",
    "results": "",
    "shards": "",
    "changed_since": "",
    "oracle_policy": DEFAULT_ORACLE_POLICY,
    "comment": "false",
    "check_run": "false",
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
    """What to evaluate and how: the same options the CLI's flags make; the other commands'
    options are made of it (`check_options`, `merge_options`, `plan_options`)."""
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
    check_run: bool
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
    """Every input read and checked, the problems not yet: the command's core reads them
    before anything runs, and refuses a submission folder that leaves the workspace."""
    workspace = real_path(workspace_of(env))

    def value(name: str) -> str:
        given = input_value(env, name) or DEFAULTS[name]
        if given is None:
            raise UsageError(f"input {name}: is required")
        return given

    def text(name: str) -> str | None:
        return value(name) or None

    def parsed(parse: Callable[[str, str], Parsed], name: str) -> Parsed:
        return parse(f"input {name}", value(name))

    def optional(parse: Callable[[str, str], Parsed], name: str) -> Parsed | None:
        """An input whose default is empty: None when it is."""
        return parse(f"input {name}", value(name)) if value(name) else None

    def path(name: str, relative: str) -> Path:
        return _inside(workspace, name, relative)

    command = value("command")
    if command not in COMMANDS:
        raise UsageError(f"input command: {command!r} is not one of {', '.join(COMMANDS)}")
    checkpoint = value("checkpoint") or ("all" if command in ("plan", "check") else "")
    if command not in WITHOUT_PROBLEMS and not checkpoint:
        raise UsageError(f"input checkpoint: is required (command {command})")
    if checkpoint:
        checkpoint_choice("input checkpoint", checkpoint)
    problems = tuple(
        path("problem", line.strip()) for line in value("problem").splitlines() if line.strip()
    )
    if command not in WITHOUT_PROBLEMS and not problems:
        raise UsageError(f"input problem: is required (command {command})")
    results = tuple(
        path("results", line.strip()) for line in value("results").splitlines() if line.strip()
    )
    if command == "merge" and not results:
        raise UsageError("input results: is required (command merge)")
    if command == "publish" and not text("artifact_name"):
        raise UsageError(
            "input artifact_name: is required (command publish: the artifact of the "
            "triggering run to publish)"
        )
    fail_on = value("fail_on")
    if fail_on not in FAIL_ON:
        raise UsageError(f"input fail_on: {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    if not parsed(boolean, "fail_on_policy"):
        fail_on = "never"
    details = value("details")
    if details not in DETAILS:
        raise UsageError(f"input details: {details!r} is not one of {', '.join(DETAILS)}")
    baseline = text("baseline")
    if baseline is not None and not baseline.startswith(ARTIFACT_BASELINE):
        path("baseline", baseline)
    elif baseline is not None and not baseline.removeprefix(ARTIFACT_BASELINE).strip():
        raise UsageError("input baseline: `artifact:` needs an artifact name after it")
    oracle_policy = value("oracle_policy")
    if oracle_policy not in POLICY_NAMES:
        known = ", ".join(POLICY_NAMES)
        raise UsageError(f"input oracle_policy: unknown policy {oracle_policy!r} (one of {known})")
    token = value("github_token")
    submission = parsed(submission_template, "submission")
    # `plan`'s matrix names no folder (and the runner passes `submission`'s default, `.`, to
    # every step): only the evaluations it fans out to read a submission, and check it there.
    if command == "evaluate" and not parsed(boolean, "same_submission"):
        check_shared_submission(
            submission, problems, option="input submission", allow="set same_submission: true"
        )
    if not is_template(submission):
        _inside(workspace, "submission", submission)
    _check_output_folder(workspace / REPORTS_DIR)
    policy = value("pass_policy")
    if policy not in POLICY_NAMES:
        raise UsageError(
            f"input pass_policy: unknown policy {policy!r} (one of {', '.join(POLICY_NAMES)})"
        )
    environment = text("environment")
    docker = DockerSettings(
        **{name: parsed(setting.parse, setting.input) for name, setting in settings()}
    )
    options = EvaluationOptions(
        problems=problems,
        checkpoint=checkpoint,
        submission=str(workspace / submission),
        output_dir=workspace / REPORTS_DIR,
        executor="docker",
        docker=docker,
        include_prior_tests=optional(boolean, "include_prior_tests"),
        entrypoint=text("entrypoint"),
        environment=path("environment", environment) if environment else None,
        test_timeout_s=optional(seconds, "timeout"),
        session_timeout_s=parsed(seconds, "session_timeout"),
        policy=policy,
        fail_on=fail_on,
        details=details,
        history=parsed(partial(whole_number, most=MAX_WINDOW), "history"),
        commit=commit_of(env),
        pytest_args=tuple(_split(value("pytest_args"))),
        jobs=parsed(job_count, "jobs"),
        skip_existing=parsed(boolean, "skip_existing"),
        reruns=parsed(whole_number, "reruns"),
        repeat=optional(_AT_LEAST_ONE, "repeat") or 1,
        flaky_passes=parsed(boolean, "flaky_passes"),
        select=tuple(value("select").split()),
        # `.scbench/` in the workspace is the action's own, though the default submission `.`
        # holds it: never staged, never trusted (see SECURITY.md).
        own_output=True,
        confine_submissions_to=workspace,
    )
    return ActionInputs(
        workspace=workspace,
        command=command,
        options=options,
        baseline=baseline,
        baseline_branch=text("baseline_branch"),
        results=results,
        shards=optional(_AT_LEAST_ONE, "shards"),
        changed_since=text("changed_since"),
        oracle_policy=oracle_policy,
        repeat_given=text("repeat") is not None,
        comment=parsed(boolean, "comment"),
        check_run=parsed(boolean, "check_run"),
        # Not expanded: the image was run as a step of its own (`uses: docker://...`).
        github_token="" if token == UNEXPANDED_TOKEN else token,
        job_summary=parsed(boolean, "job_summary"),
        annotations=parsed(boolean, "annotations"),
        # `publish` uploads nothing: its results are the triggering run's artifact.
        upload_artifact=parsed(boolean, "upload_artifact") and command != "publish",
        artifact_name=text("artifact_name"),
        retention_days=optional(whole_number, "retention_days"),
    )


def check_options(inputs: ActionInputs) -> CheckOptions:
    """The evaluation's options with the oracle policy, and two oracle runs unless `repeat`
    says otherwise."""
    repeat = inputs.options.repeat if inputs.repeat_given else DEFAULT_CHECK_REPEAT
    runs = replace(inputs.options, checkpoint="all", policy=inputs.oracle_policy, repeat=repeat)
    return CheckOptions(runs, changed_since=inputs.changed_since)


def merge_options(inputs: ActionInputs, artifact_name: str) -> MergeOptions:
    files = tuple(file for path in inputs.results for file in results_files(path, "input results"))
    return MergeOptions(
        files,
        inputs.options.output_dir,
        fail_on=inputs.options.fail_on,
        details=inputs.options.details,
        artifact_name=artifact_name,
        history=inputs.options.history,
        commit=inputs.options.commit,
    )


def plan_options(inputs: ActionInputs) -> PlanOptions:
    options = inputs.options
    return PlanOptions(
        options.problems,
        options.checkpoint,
        options.submission,
        options.output_dir,
        options.include_prior_tests,
        select=options.select,
        shards=inputs.shards,
        confine_submissions_to=options.confine_submissions_to,
    )


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


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as error:
        raise UsageError(f"input pytest_args: {error}") from None
