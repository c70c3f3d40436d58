"""The action's inputs, read as the runner passes them to a container action (INPUT_<NAME>)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.errors import UsageError
from scbench_ci.evaluation import CHECKPOINT_PLACEHOLDER
from scbench_ci.policy import DEFAULT_POLICY, POLICY_NAMES
from scbench_ci.problem import CHECKPOINT_NAME_RULE, is_checkpoint_name, load_problem, real_path
from scbench_ci.workspace import REPORTS_DIR

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class ActionInputs:
    workspace: Path
    problem: Path
    checkpoint: str
    submission: str
    """Absolute; may hold `{checkpoint}`."""
    include_prior_tests: bool | None
    entrypoint: str | None
    environment: Path | None
    image: str | None
    test_network: bool
    timeout_s: float | None
    session_timeout_s: float
    pass_policy: str
    fail_on_policy: bool
    pytest_args: tuple[str, ...]
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


def read_inputs(env: Mapping[str, str], default_session_timeout_s: float) -> ActionInputs:
    workspace = real_path(workspace_of(env))

    def text(name: str) -> str | None:
        return input_value(env, name) or None

    def required(name: str) -> str:
        value = text(name)
        if value is None:
            raise UsageError(f"input {name}: is required")
        return value

    def path(name: str, value: str) -> Path:
        return _inside(workspace, name, value)

    checkpoint = required("checkpoint")
    if checkpoint != "all" and not is_checkpoint_name(checkpoint):
        raise UsageError(
            f"input checkpoint: {checkpoint!r} is not a checkpoint name ({CHECKPOINT_NAME_RULE})"
        )
    problem = path("problem", required("problem"))
    submission = text("submission") or "."
    if CHECKPOINT_PLACEHOLDER not in submission:
        _inside(workspace, "submission", submission)
    _check_output_folder(workspace / REPORTS_DIR)
    policy = text("pass_policy") or DEFAULT_POLICY
    if policy not in POLICY_NAMES:
        raise UsageError(
            f"input pass_policy: unknown policy {policy!r} (one of {', '.join(POLICY_NAMES)})"
        )
    environment = text("environment")
    pytest_args = text("pytest_args")
    inputs = ActionInputs(
        workspace=workspace,
        problem=problem,
        checkpoint=checkpoint,
        submission=str(workspace / submission),
        include_prior_tests=_boolean(env, "include_prior_tests", None),
        entrypoint=text("entrypoint"),
        environment=path("environment", environment) if environment else None,
        image=text("image"),
        test_network=bool(_boolean(env, "test_network", False)),
        timeout_s=_seconds(env, "timeout"),
        session_timeout_s=_seconds(env, "session_timeout") or default_session_timeout_s,
        pass_policy=policy,
        fail_on_policy=bool(_boolean(env, "fail_on_policy", True)),
        pytest_args=tuple(_split(pytest_args)) if pytest_args else (),
        job_summary=bool(_boolean(env, "job_summary", True)),
        annotations=bool(_boolean(env, "annotations", True)),
        upload_artifact=bool(_boolean(env, "upload_artifact", True)),
        artifact_name=text("artifact_name"),
        retention_days=_whole_number(env, "retention_days"),
    )
    # Last, as it reads the problem: a bad input of any kind is one error before any output.
    evaluated = load_problem(problem).select(checkpoint)
    if CHECKPOINT_PLACEHOLDER in submission:
        # Each checkpoint's own folder: `solutions/checkpoint_1` may be a symlink out.
        for each in evaluated:
            _inside(workspace, "submission", submission.replace(CHECKPOINT_PLACEHOLDER, each.name))
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
    for entry in sorted(output.iterdir()):
        if entry.is_symlink():
            raise UsageError(f"{entry}: a symlink in the output folder; remove it")


def _inside(workspace: Path, name: str, value: str) -> Path:
    resolved = real_path(workspace / value)
    if not resolved.is_relative_to(workspace):
        raise UsageError(f"input {name}: {value!r} leaves the workspace {workspace}")
    return resolved


def _boolean(env: Mapping[str, str], name: str, default: bool | None) -> bool | None:
    value = input_value(env, name).lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(f"input {name}: {value!r} is not a boolean (use true or false)")


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    value = input_value(env, name)
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise UsageError(f"input {name}: {value!r} is not a number of seconds") from None
    if seconds <= 0:
        raise UsageError(f"input {name}: must be more than 0 seconds, got {value!r}")
    return seconds


def _whole_number(env: Mapping[str, str], name: str) -> int | None:
    value = input_value(env, name)
    if not value:
        return None
    if not value.isdigit():
        raise UsageError(f"input {name}: {value!r} is not a whole number")
    return int(value)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as error:
        raise UsageError(f"input pytest_args: {error}") from None
