"""The GitHub Action: inputs -> evaluation in sibling containers -> summary, outputs, artifact."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TextIO

from scbench_ci.action.inputs import ARTIFACT_BASELINE, ActionInputs, read_inputs, workspace_of
from scbench_ci.check.run import DEFAULT_REPEAT, check_request, run_check
from scbench_ci.crash import crash_message, write_crash_log
from scbench_ci.errors import ExitCode, ScbenchError
from scbench_ci.evaluation import evaluate
from scbench_ci.executors import REVIEW_CACHE_SCOPE
from scbench_ci.executors.base import REPORTS_DIR
from scbench_ci.matrix import baseline_durations, checkpoint_matrix, shard_matrix
from scbench_ci.merge import merged_output
from scbench_ci.outputs.check_console import render_check_report
from scbench_ci.outputs.check_files import check_exit_code, write_check_files
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.github.annotations import error_annotations, finding_annotations
from scbench_ci.outputs.github.artifact_service import ArtifactUploadError
from scbench_ci.outputs.github.artifacts import FORBIDDEN_IN_NAME, UploadedArtifact, upload_artifact
from scbench_ci.outputs.github.baseline_artifact import download_baseline
from scbench_ci.outputs.github.pr_comment import (
    COMMENT_LIMIT,
    comment_tag,
    pull_request_number,
    upsert_comment,
)
from scbench_ci.outputs.github.workflow import (
    append_summary,
    command,
    commands_stopped,
    group,
    write_outputs,
)
from scbench_ci.outputs.summary import render_summary, write_summary
from scbench_ci.plan import plan_jobs
from scbench_ci.results.baseline import Baseline, compared, load_baseline, results_files
from scbench_ci.results.file import ResultsError, write_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.policy import GroupCounts
from scbench_ci.signals import Terminated, raise_on_sigterm
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.terminal import inert


def main(env: Mapping[str, str] = os.environ, stdout: TextIO = sys.stdout) -> int:
    raise_on_sigterm()
    try:
        return _run(env, stdout)
    except ScbenchError as error:
        stdout.write(command("error", str(error), title="scbench-ci") + "\n")
        infrastructure = error.exit_code == ExitCode.INFRASTRUCTURE
        _write_outputs(
            env, {"passed": "false", "infrastructure_failure": str(infrastructure).lower()}
        )
        return int(error.exit_code)
    except (Terminated, KeyboardInterrupt):
        stdout.write(command("error", "the evaluation was cancelled", title="scbench-ci") + "\n")
        return 143
    except Exception as error:  # the catch-all: a crash is never read as a failing verdict
        log = write_crash_log(error, workspace_of(env) / REPORTS_DIR)
        stdout.write(command("error", crash_message(error, log), title="scbench-ci") + "\n")
        _write_outputs(env, {"passed": "false", "infrastructure_failure": "true"})
        return int(ExitCode.INFRASTRUCTURE)


def _run(env: Mapping[str, str], stdout: TextIO) -> int:
    inputs = read_inputs(env)
    if inputs.command == "plan":
        return _plan(inputs, env, stdout)
    if inputs.command == "check":
        return _check(inputs, env, stdout)
    with scratch_folder("scbench-baseline-") as scratch:
        baseline = _baseline(inputs, env, stdout, scratch)
    output_dir = inputs.options.output_dir
    if inputs.command == "merge":
        artifact_name = inputs.artifact_name or "scbench-merged"
        files = [file for path in inputs.results for file in results_files(path, "input results")]
        result, results_path = merged_output(
            files, output_dir, lambda run: compared(run, baseline), artifact_name
        )
    else:
        request = inputs.options.request()
        executor = inputs.options.make_executor(warn=lambda notice: _warn(stdout, notice))
        with group("scbench-ci: evaluation", stdout), commands_stopped(stdout):
            result = evaluate(request, executor, echo=stdout)
        result = compared(result, baseline)
        results_path = write_results(result, output_dir)
        artifact_name = inputs.artifact_name or default_artifact_name(result, inputs)
        write_summary(result, output_dir, artifact_name=artifact_name)
    _publish(
        Published(result, results_path, artifact_name, render_summary, error_annotations),
        inputs,
        env,
        stdout,
    )
    stdout.write(render_report(result, results_path.relative_to(inputs.workspace)))
    return exit_code(result, inputs.fail_on)


@dataclass(frozen=True)
class Published:
    """What a step publishes, and how: its summary and its annotations."""

    result: RunResult
    results_path: Path | None
    """None: a check that `changed_since` left nothing to check."""
    artifact_name: str
    render: Callable[..., str]
    annotate: Callable[[RunResult, Path], list[str]]


def _publish(what: Published, inputs: ActionInputs, env: Mapping[str, str], stdout: TextIO) -> None:
    """The artifact, the job summary, the pull request comment, the outputs, the annotations."""
    result = what.result
    artifact = _upload(inputs, what.artifact_name, inputs.options.output_dir, env, stdout)
    summary = partial(
        what.render,
        result,
        # Not uploaded: the summary points to the .scbench/ folder instead.
        artifact_name=what.artifact_name if inputs.upload_artifact else None,
        artifact_url=artifact.url if artifact else None,
    )
    if inputs.job_summary and env.get("GITHUB_STEP_SUMMARY"):
        append_summary(Path(env["GITHUB_STEP_SUMMARY"]), summary())
    if inputs.comment:
        # Degraded to fit a comment as the job summary is to fit its 1 MiB, not cut.
        _comment(inputs, env, stdout, summary(max_bytes=COMMENT_BYTES), what.artifact_name)
    if what.results_path is None:
        _write_outputs(env, {"passed": "true", "infrastructure_failure": "false"})
    else:
        relative = what.results_path.relative_to(inputs.workspace)
        _write_outputs(env, step_outputs(result, relative, artifact))
    if inputs.annotations:
        for line in what.annotate(result, inputs.workspace):
            stdout.write(line + "\n")


def _plan(inputs: ActionInputs, env: Mapping[str, str], stdout: TextIO) -> int:
    with scratch_folder("scbench-baseline-") as scratch:
        baseline = _baseline(inputs, env, stdout, scratch)
    plan = plan_jobs(
        inputs.options.problems,
        inputs.options.checkpoint,
        inputs.options.submission,
        inputs.options.output_dir,
        inputs.options.include_prior_tests,
        select=inputs.options.select,
    )
    if inputs.shards is None:
        matrix = checkpoint_matrix(plan.jobs)
    else:
        matrix = shard_matrix(plan.jobs, inputs.shards, baseline_durations(baseline))
    text = json.dumps(matrix, separators=(",", ":"))
    stdout.write(inert(f"matrix: {text}") + "\n")
    _write_outputs(env, {"matrix": text})
    return ExitCode.PASSED


def _check(inputs: ActionInputs, env: Mapping[str, str], stdout: TextIO) -> int:
    repeat = inputs.options.repeat if inputs.repeat_given else DEFAULT_REPEAT
    request = check_request(
        inputs.options,
        oracle_policy=inputs.oracle_policy,
        repeat=repeat,
        changed_since=inputs.changed_since,
    )
    executor = inputs.options.make_executor(
        warn=lambda notice: _warn(stdout, notice), cache_scope=REVIEW_CACHE_SCOPE
    )
    with group("scbench-ci: check", stdout), commands_stopped(stdout):
        result = run_check(request, executor, echo=stdout)
    output_dir = inputs.options.output_dir
    artifact_name = inputs.artifact_name or "scbench-check"
    results_path = write_check_files(result, output_dir, artifact_name=artifact_name)
    _publish(
        Published(result, results_path, artifact_name, render_check_summary, finding_annotations),
        inputs,
        env,
        stdout,
    )
    shown = results_path.relative_to(inputs.workspace) if results_path else None
    stdout.write(render_check_report(result, shown))
    return check_exit_code(result, inputs.fail_on)


def _baseline(
    inputs: ActionInputs, env: Mapping[str, str], stdout: TextIO, scratch: Path
) -> Baseline | None:
    """The run to compare with; a warning and None when an artifact cannot be had, or the
    baseline file is not there (yet): a first run has nothing to compare with."""
    if inputs.baseline is None:
        return None
    if inputs.baseline.startswith(ARTIFACT_BASELINE):
        name = inputs.baseline.removeprefix(ARTIFACT_BASELINE).strip()
        download = download_baseline(
            name, inputs.baseline_branch, env, inputs.github_token, scratch
        )
        if download.results is None:
            _warn(stdout, f"no baseline to compare with: {download.warning}")
            return None
        try:
            baseline = load_baseline(download.results, "input baseline", source=download.source)
        except ResultsError as error:  # an artifact's content is not this run's to fix either
            _warn(stdout, f"no baseline to compare with: {download.source} cannot be used: {error}")
            return None
        stdout.write(inert(f"Baseline: {download.source}") + "\n")
        return baseline
    path = inputs.workspace / inputs.baseline
    if not path.exists():
        _warn(stdout, f"no baseline to compare with: {inputs.baseline} does not exist")
        return None
    return load_baseline(path, "input baseline", source=inputs.baseline)


COMMENT_BYTES = COMMENT_LIMIT - 1024
"""The summary's size in a comment: GitHub's limit (in characters, each at most a byte of UTF-8
here), less room for the tag."""


def _comment(
    inputs: ActionInputs,
    env: Mapping[str, str],
    stdout: TextIO,
    summary: str,
    artifact_name: str,
) -> None:
    if pull_request_number(env) is None:
        # Nothing is wrong: one workflow often runs on pushes and pull requests alike.
        event = env.get("GITHUB_EVENT_NAME") or "unknown"
        stdout.write(
            inert(f"No pull request comment: this run (event {event}) is not for a pull request")
            + "\n"
        )
        return
    tag = comment_tag(env, artifact_name)
    outcome = upsert_comment(summary, tag, env, inputs.github_token)
    if outcome.warning:
        _warn(stdout, f"no pull request comment: {outcome.warning}")
    elif outcome.url:
        stdout.write(inert(f"Pull request comment {outcome.action}: {outcome.url}") + "\n")


def _warn(stdout: TextIO, text: str) -> None:
    stdout.write(command("warning", text, title="scbench-ci") + "\n")


def default_artifact_name(result: RunResult, inputs: ActionInputs) -> str:
    """`scbench-<problem>-<checkpoint>[-<submission>]`: artifact names are unique per workflow
    run, so jobs that evaluate several submissions of one checkpoint need the submission in it.
    With several problems, `<problem>` is the folder given as the input."""
    if len(result.problems) == 1:
        problem = result.problems[0].name
    else:
        problem = "-".join(
            os.path.relpath(folder, inputs.workspace) for folder in inputs.options.problems
        )
    name = f"scbench-{problem}-{inputs.options.checkpoint}"
    submission = os.path.relpath(inputs.options.submission, inputs.workspace)
    if submission != ".":
        name += f"-{submission}"
    # Braces too: a `{checkpoint}` placeholder reads badly in a name.
    refused = re.escape("".join(FORBIDDEN_IN_NAME) + "{}")
    return re.sub(f"[{refused}]+", "-", name).strip("-")


def _upload(
    inputs: ActionInputs, name: str, folder: Path, env: Mapping[str, str], stdout: TextIO
) -> UploadedArtifact | None:
    if not inputs.upload_artifact:
        return None
    try:
        artifact = upload_artifact(name, folder, retention_days=inputs.retention_days, env=env)
    except ArtifactUploadError as error:
        # The verdict, outputs and summary stand without the artifact.
        stdout.write(
            command("warning", f"artifact not uploaded: {error}", title="scbench-ci") + "\n"
        )
        return None
    for warning in artifact.warnings:
        stdout.write(command("warning", warning, title="scbench-ci") + "\n")
    stdout.write(inert(f"Uploaded artifact {name} ({artifact.size} bytes): {artifact.url}") + "\n")
    return artifact


def step_outputs(
    result: RunResult, results_path: Path, artifact: UploadedArtifact | None
) -> dict[str, str]:
    totals = result.group_totals()
    overall = sum(totals.values(), GroupCounts())
    comparison = result.comparison
    outputs = {
        "passed": str(result.passed).lower(),
        "regressions": str(len(comparison.regressions)) if comparison else "",
        "fixed": str(len(comparison.fixed)) if comparison else "",
        "flaky": str(overall.flaky),
        "results_path": str(results_path),
        "artifact_id": str(artifact.id) if artifact else "",
        "artifact_url": artifact.url if artifact else "",
        "artifact_digest": artifact.digest if artifact else "",
        "infrastructure_failure": str(result.infrastructure_failure).lower(),
        "pass_rate": str(overall.pass_rate or 0),
    }
    for group_name, counts in totals.items():
        outputs[f"{group_name.value.lower()}_passed"] = str(counts.passed)
        outputs[f"{group_name.value.lower()}_total"] = str(counts.total)
    return outputs


def _write_outputs(env: Mapping[str, str], outputs: dict[str, str]) -> None:
    if env.get("GITHUB_OUTPUT"):
        write_outputs(Path(env["GITHUB_OUTPUT"]), outputs)
