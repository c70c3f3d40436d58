"""`command: publish`: a `workflow_run` workflow publishes the run that triggered it.

The run's artifact (`artifact_name`) is downloaded and extracted as a baseline artifact is, its
results.json and pull_request.json read through the strict reader, the pull request checked
against the event (`outputs/github/workflow_run.py`), and the run published as a step publishes
its own: job summary, outputs, annotations, the comment on that pull request and the Check Run
on its head commit. Nothing of the pull request runs: no checkout, no evaluation. The step's exit
code is 0 once it has published.

The artifact is a claim, never a verdict: for a pull request, GitHub runs the pull request's own
copy of the triggering workflow, so a pull request can upload any consistent results.json for its
true head. What it says is shown as reported by that workflow and not verified by this
repository, and the Check Run is neutral whatever it says (docs/workflows.md says how a trusted
workflow evaluates a pull request itself).
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from scbench_ci.action.artifact_download import download_run_artifact
from scbench_ci.action.publish import PublishTarget, WorkflowStep
from scbench_ci.commands.channels import Outcome
from scbench_ci.foundation.errors import ExitCode, UsageError
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.github.annotations import check_annotations, run_annotations
from scbench_ci.outputs.github.event import triggering_run
from scbench_ci.outputs.github.workflow_run import verified_pull_request
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.results.file import load_pull_request, load_results, write_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.pull_request import PULL_REQUEST_FILE, PullRequestRef
from scbench_ci.trust.files import scratch_folder


def publish_triggering_run(step: WorkflowStep) -> ExitCode:
    inputs, env = step.inputs, step.env
    run = triggering_run(env)
    if run is None:
        event = env.get("GITHUB_EVENT_NAME") or "unknown"
        raise UsageError(
            f"input command: publish runs in a workflow started by `on: workflow_run`, "
            f"not by {event!r} (its event has no workflow_run)"
        )
    name = inputs.artifact_name or ""
    with scratch_folder("scbench-publish-") as scratch:
        download = download_run_artifact(name, run.id, env, inputs.github_token, scratch)
        if download.results is None:
            raise UsageError(f"input artifact_name: cannot publish: {download.warning}")
        result = load_results(download.results)
        claimed = _claimed(download.results.parent / PULL_REQUEST_FILE)
    step.say(f"Publishing {download.source}")
    if claimed is None:
        target = PublishTarget(None, run.head_sha)
    else:
        verified = verified_pull_request(claimed, run, env, inputs.github_token)
        target = PublishTarget(verified.number, verified.head_sha)
    fail_on = inputs.options.fail_on
    outcome = Outcome(
        result, write_results(result, inputs.options.output_dir), exit_code(result, fail_on)
    )
    if _is_check(result):
        render = partial(render_check_summary, fail_on=fail_on)
        step.publish(outcome, name, render, check_annotations, target, reported_by=run.id)
    else:
        step.publish(
            outcome,
            name,
            summary_renderer(inputs.options),
            run_annotations,
            target,
            reported_by=run.id,
        )
    return ExitCode.PASSED


def _claimed(path: Path) -> PullRequestRef | None:
    """The artifact's pull_request.json, if it has one (a run for a pull request)."""
    return load_pull_request(path) if os.path.lexists(path) else None


def _is_check(result: RunResult) -> bool:
    return any(problem.check is not None for problem in result.problems)
