"""The run a step compares with: a results.json in the workspace, or the newest artifact of that
name of the workflow's runs on a branch (`artifact:<name>`)."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.action.artifact_download import download_baseline
from scbench_ci.action.inputs import ARTIFACT_BASELINE
from scbench_ci.action.publish import WorkflowStep
from scbench_ci.commands.channels import BaselineSource
from scbench_ci.results.baseline import Baseline, load_baseline
from scbench_ci.results.file import ResultsError
from scbench_ci.trust.files import scratch_folder


def baseline_source(step: WorkflowStep) -> BaselineSource:
    """A warning and None when an artifact cannot be had, or the baseline file is not there
    (yet): a first run has nothing to compare with."""

    def fetched() -> Baseline | None:
        with scratch_folder("scbench-baseline-") as scratch:
            return _fetched(step, scratch)

    return fetched


def _fetched(step: WorkflowStep, scratch: Path) -> Baseline | None:
    inputs = step.inputs
    if inputs.baseline is None:
        return None
    if inputs.baseline.startswith(ARTIFACT_BASELINE):
        name = inputs.baseline.removeprefix(ARTIFACT_BASELINE).strip()
        download = download_baseline(
            name, inputs.baseline_branch, step.env, inputs.github_token, scratch
        )
        if download.results is None:
            step.warn(f"no baseline to compare with: {download.warning}")
            return None
        try:
            baseline = load_baseline(download.results, "input baseline", source=download.source)
        except ResultsError as error:  # an artifact's content is not this run's to fix either
            step.warn(f"no baseline to compare with: {download.source} cannot be used: {error}")
            return None
        step.say(f"Baseline: {download.source}")
        return baseline
    path = inputs.workspace / inputs.baseline
    if not path.exists():
        step.warn(f"no baseline to compare with: {inputs.baseline} does not exist")
        return None
    return load_baseline(path, "input baseline", source=inputs.baseline)
