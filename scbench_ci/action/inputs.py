"""The action's inputs, read as the runner passes them to a container action (INPUT_<NAME>)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.layout import REPORTS_DIR
from scbench_ci.foundation.option_values import Option
from scbench_ci.foundation.paths import real_path
from scbench_ci.options import (
    CheckOptions,
    EvaluationOptions,
    MergeOptions,
    PlanOptions,
    carried_over,
    check_shared_submission,
    commit_of,
    fields_of,
    is_template,
)
from scbench_ci.options.declared import (
    ACTION_EXECUTOR,
    ACTION_INPUTS,
    ANNOTATIONS,
    ARTIFACT_NAME,
    BASELINE,
    BASELINE_BRANCH,
    CHECK_REPEAT,
    CHECK_RUN,
    CHECKPOINT,
    COMMAND,
    COMMENT,
    ENVIRONMENT,
    EVERY_CHECKPOINT,
    FAIL_ON,
    FAIL_ON_POLICY,
    GITHUB_TOKEN,
    JOB_SUMMARY,
    ORACLE_POLICY,
    PROBLEM,
    RESULTS,
    RETENTION_DAYS,
    SAME_SUBMISSION,
    SHARDS,
    SUBMISSION,
    UNEXPANDED_TOKEN,
    UPLOAD_ARTIFACT,
)
from scbench_ci.results.baseline import results_files

WITHOUT_PROBLEMS = ("merge", "publish")
"""The commands that read results, not problems."""
MERGED_ARTIFACT = "scbench-merged"
CHECK_ARTIFACT = "scbench-check"
ARTIFACT_BASELINE = "artifact:"

DEFAULTS: dict[str, str] = {
    option.input: option.input_text for option in ACTION_INPUTS if option.input is not None
}
"""Every input the action reads, with its default as action.yml declares it (a test holds them
to each other). The runner passes action.yml's defaults; these apply where it does not, as in a
step that runs the image itself (`uses: docker://...`). An empty input means its default."""


@dataclass(frozen=True)
class ActionInputs:
    workspace: Path
    command: str
    options: EvaluationOptions
    """What to evaluate and how: the same options the CLI's flags make; `merge`'s and `plan`'s
    options are made of it (`merge_options`, `plan_options`)."""
    check: CheckOptions
    """`check`'s: the evaluation's options with its oracle runs' policy and repeat, and its own
    (`changed_since`), from the same declarations as the CLI's `check`."""
    baseline: str | None
    """A path in the workspace, or `artifact:<name>`."""
    baseline_branch: str | None
    results: tuple[Path, ...]
    shards: int | None
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


class _Given:
    """The step's inputs, each read once, as its declaration says."""

    def __init__(self, env: Mapping[str, str], workspace: Path) -> None:
        self.workspace = workspace
        self._texts = {
            option.input: input_value(env, option.input) or option.input_text
            for option in ACTION_INPUTS
            if option.input is not None
        }

    def text(self, option: Option) -> str:
        assert option.input is not None, option.name
        return self._texts[option.input]

    def value(self, option: Option) -> Any:
        """Parsed by the option's parser; empty, the declared default."""
        text = self.text(option)
        return option.parse(f"input {option.input}", text) if text else option.default

    def paths(self, option: Option) -> tuple[Path, ...]:
        """One a line, each inside the workspace."""
        lines = (line.strip() for line in self.text(option).splitlines())
        return tuple(self.inside(option, line) for line in lines if line)

    def inside(self, option: Option, value: str) -> Path:
        resolved = real_path(self.workspace / value)
        if not resolved.is_relative_to(self.workspace):
            raise UsageError(
                f"input {option.input}: {value!r} leaves the workspace {self.workspace}"
            )
        return resolved

    def required(self, option: Option, command: str, why: str = "") -> None:
        if not self.text(option):
            raise UsageError(f"input {option.input}: is required (command {command}{why})")


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Every input read and checked, the problems not yet: the command's core reads them
    before anything runs, and refuses a submission folder that leaves the workspace."""
    workspace = real_path(workspace_of(env))
    given = _Given(env, workspace)
    command = given.value(COMMAND)
    _check_required(given, command)
    token = given.value(GITHUB_TOKEN)
    options = _evaluation_options(given, command, env)
    return ActionInputs(
        workspace=workspace,
        command=command,
        options=options,
        check=_check_options(given, options),
        baseline=_baseline(given),
        baseline_branch=given.value(BASELINE_BRANCH),
        results=given.paths(RESULTS),
        shards=given.value(SHARDS),
        comment=given.value(COMMENT),
        check_run=given.value(CHECK_RUN),
        # Not expanded: the image was run as a step of its own (`uses: docker://...`).
        github_token="" if token == UNEXPANDED_TOKEN else token,
        job_summary=given.value(JOB_SUMMARY),
        annotations=given.value(ANNOTATIONS),
        # `publish` uploads nothing: its results are the triggering run's artifact.
        upload_artifact=given.value(UPLOAD_ARTIFACT) and command != "publish",
        artifact_name=given.value(ARTIFACT_NAME),
        retention_days=given.value(RETENTION_DAYS),
    )


def _check_required(given: _Given, command: str) -> None:
    """What each command cannot do without."""
    if command == "evaluate":
        given.required(CHECKPOINT, command)
    if command not in WITHOUT_PROBLEMS:
        given.required(PROBLEM, command)
    if command == "merge":
        given.required(RESULTS, command)
    if command == "publish":
        given.required(ARTIFACT_NAME, command, ": the artifact of the triggering run to publish")


_READ_APART = (PROBLEM, CHECKPOINT, SUBMISSION, ENVIRONMENT, FAIL_ON, ORACLE_POLICY)
"""The inputs each read with the workspace or the command in mind, and the oracle runs' policy
(`check`'s, `_check_options`); every other input that sets a field of EvaluationOptions is read
as its declaration says."""
_CHECK_RUNS = (ORACLE_POLICY, CHECK_REPEAT)
"""What `check`'s runs take instead of the evaluation's, as the CLI's `check` declares them."""


def _evaluation_options(given: _Given, command: str, env: Mapping[str, str]) -> EvaluationOptions:
    workspace = given.workspace
    problems = given.paths(PROBLEM)
    # `.scbench/` in the workspace is the action's own, though the default submission `.` holds
    # it: never staged, never trusted (see SECURITY.md).
    _check_output_folder(workspace / REPORTS_DIR)
    environment = given.value(ENVIRONMENT)
    apart = {option.name for option in _READ_APART}
    plain = (option for option in ACTION_INPUTS if option.name not in apart)
    return EvaluationOptions(
        problems=problems,
        checkpoint=_checkpoint(given, command),
        submission=str(workspace / _submission(given, command, problems)),
        output_dir=workspace / REPORTS_DIR,
        executor=ACTION_EXECUTOR,
        environment=None if environment is None else given.inside(ENVIRONMENT, str(environment)),
        fail_on=given.value(FAIL_ON) if given.value(FAIL_ON_POLICY) else "never",
        commit=commit_of(env),
        own_output=True,
        confine_submissions_to=workspace,
        **fields_of(EvaluationOptions, plain, given.value),
    )


def _checkpoint(given: _Given, command: str) -> str:
    """`plan` and `check` take every checkpoint unless one is named."""
    if not given.text(CHECKPOINT):
        return EVERY_CHECKPOINT.default if command in ("plan", "check") else ""
    return str(given.value(CHECKPOINT))


def _submission(given: _Given, command: str, problems: tuple[Path, ...]) -> str:
    submission: str = given.value(SUBMISSION)
    # `plan`'s matrix names no folder (and the runner passes `submission`'s default, `.`, to
    # every step): only the evaluations it fans out to read a submission, and check it there.
    if command == "evaluate" and not given.value(SAME_SUBMISSION):
        check_shared_submission(
            submission, problems, option="input submission", allow="set same_submission: true"
        )
    if not is_template(submission):
        given.inside(SUBMISSION, submission)
    return submission


def _baseline(given: _Given) -> str | None:
    baseline: str | None = given.value(BASELINE)
    if baseline is None:
        return None
    if not baseline.startswith(ARTIFACT_BASELINE):
        given.inside(BASELINE, baseline)
    elif not baseline.removeprefix(ARTIFACT_BASELINE).strip():
        raise UsageError("input baseline: `artifact:` needs an artifact name after it")
    return baseline


def _check_options(given: _Given, options: EvaluationOptions) -> CheckOptions:
    runs = replace(
        options, checkpoint="all", **fields_of(EvaluationOptions, _CHECK_RUNS, given.value)
    )
    return CheckOptions(runs, **fields_of(CheckOptions, ACTION_INPUTS, given.value))


def merge_options(inputs: ActionInputs, artifact_name: str) -> MergeOptions:
    files = tuple(file for path in inputs.results for file in results_files(path, "input results"))
    return carried_over(MergeOptions, inputs.options, results=files, artifact_name=artifact_name)


def plan_options(inputs: ActionInputs) -> PlanOptions:
    return carried_over(PlanOptions, inputs.options, shards=inputs.shards)


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
