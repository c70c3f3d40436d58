"""The GitHub Action: its inputs read into a command's options, the command's core run (in
sibling containers), then what the step publishes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from functools import partial
from typing import TextIO

from scbench_ci.action.baseline import baseline_source
from scbench_ci.action.inputs import (
    CHECK_ARTIFACT,
    MERGED_ARTIFACT,
    merge_options,
    plan_options,
    read_inputs,
    workspace_of,
)
from scbench_ci.action.publish import (
    PublishTarget,
    WorkflowStep,
    default_artifact_name,
    write_step_outputs,
)
from scbench_ci.action.triggering_run import publish_triggering_run
from scbench_ci.commands.channels import Outcome
from scbench_ci.commands.check import run_check
from scbench_ci.commands.error_handler import TERMINATED, Ending, handle_errors
from scbench_ci.commands.evaluate import run_evaluate
from scbench_ci.commands.merge import run_merge
from scbench_ci.commands.plan import run_plan
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.foundation.layout import REPORTS_DIR
from scbench_ci.outputs.check_console import render_check_report
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.github.annotations import check_annotations, run_annotations
from scbench_ci.outputs.github.check_run import CheckRun
from scbench_ci.outputs.github.workflow import workflow_command
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.results.model import RunResult
from scbench_ci.trust.markdown import fenced, literal, text


def main(env: Mapping[str, str] = os.environ, stdout: TextIO = sys.stdout) -> int:
    steps: list[WorkflowStep] = []
    """The step, once its inputs are read."""

    def report(ending: Ending) -> None:
        message = "the evaluation was cancelled" if ending.cancelled else ending.message
        stdout.write(workflow_command("error", message, title="scbench-ci") + "\n")
        if not ending.cancelled:
            infrastructure = ending.exit_code == ExitCode.INFRASTRUCTURE
            outputs = {"passed": "false", "infrastructure_failure": str(infrastructure).lower()}
            write_step_outputs(env, outputs)
            if steps and steps[0].inputs.check_run:
                _failed_check_run(steps[0], message)

    def run() -> int:
        steps.append(WorkflowStep(read_inputs(env), env, stdout))
        return _run(steps[0])

    # Cancelled, the step ends as SIGTERM ends it, whichever signal came.
    crash_folder = workspace_of(env) / REPORTS_DIR
    return handle_errors(run, report, crash_folder, interrupted=TERMINATED)


def _failed_check_run(step: WorkflowStep, message: str) -> None:
    """The step ended before it published: its Check Run fails, with the reason (which may
    quote an input: escaped, its lines kept in a code block)."""
    title = literal("❌ FAILED: the step could not finish")
    name = step.inputs.artifact_name or f"scbench-ci {step.inputs.command}"
    head_sha = PublishTarget.of_event(step.env).head_sha or ""
    step.check_run(CheckRun(name, head_sha, "failure", title, text(message), fenced(message), ()))


def _plan(step: WorkflowStep) -> int:
    matrix = run_plan(plan_options(step.inputs), baseline=baseline_source(step))
    text = json.dumps(matrix, separators=(",", ":"))
    step.say(f"matrix: {text}")
    write_step_outputs(step.env, {"matrix": text})
    return ExitCode.PASSED


def _check(step: WorkflowStep) -> int:
    inputs = step.inputs
    artifact_name = inputs.artifact_name or CHECK_ARTIFACT
    outcome = run_check(
        inputs.check,
        echo=step.log_group("scbench-ci: check"),
        warn=step.warn,
        artifact_name=artifact_name,
    )
    fail_on = inputs.options.fail_on
    render = partial(render_check_summary, fail_on=fail_on)
    step.publish(outcome, artifact_name, render, check_annotations)
    shown = step.shown(outcome.results_path)
    step.stdout.write(render_check_report(outcome.result, shown, fail_on=fail_on))
    return outcome.exit_code


def _merge(step: WorkflowStep) -> int:
    artifact_name = step.inputs.artifact_name or MERGED_ARTIFACT
    outcome = run_merge(merge_options(step.inputs, artifact_name), baseline=baseline_source(step))
    return _published(step, outcome, artifact_name)


def _evaluate(step: WorkflowStep) -> int:
    inputs = step.inputs

    def named(result: RunResult) -> str:
        return inputs.artifact_name or default_artifact_name(result, inputs)

    outcome = run_evaluate(
        inputs.options,
        echo=step.log_group("scbench-ci: evaluation"),
        warn=step.warn,
        baseline=baseline_source(step),
        artifact_name=named,
    )
    return _published(step, outcome, named(outcome.result))


def _published(step: WorkflowStep, outcome: Outcome, artifact_name: str) -> int:
    """A run's results published as the step's inputs say, and its report in the log."""
    options = step.inputs.options
    step.publish(outcome, artifact_name, summary_renderer(options), run_annotations)
    shown = step.shown(outcome.results_path)
    step.stdout.write(render_report(outcome.result, shown, fail_on=options.fail_on))
    return outcome.exit_code


COMMANDS: dict[str, Callable[[WorkflowStep], int]] = {
    "evaluate": _evaluate,
    "plan": _plan,
    "merge": _merge,
    "check": _check,
    "publish": publish_triggering_run,
}
"""What a step does, by its `command` input (the CLI's is `cli/main.py`'s COMMANDS)."""


def _run(step: WorkflowStep) -> int:
    return COMMANDS[step.inputs.command](step)
