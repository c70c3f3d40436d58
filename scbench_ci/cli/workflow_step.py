"""The CLI in a GitHub Actions step (`run: scbench-ci evaluate ...`): what the action publishes
that a plain step can, the job summary and the annotations, written as the action writes them.
Not in a workflow, or with `--no-workflow-report`, nothing."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from scbench_ci.outputs.github.annotations import run_annotations, workflow_commands
from scbench_ci.outputs.github.workflow import append_summary
from scbench_ci.outputs.summary import render_summary
from scbench_ci.results.model import RunResult


def report_to_workflow(
    result: RunResult,
    *,
    fail_on: str,
    details: str,
    reports_folder: Path,
    env: Mapping[str, str] = os.environ,
    stdout: TextIO = sys.stdout,
) -> None:
    """The job summary appended to GITHUB_STEP_SUMMARY and the annotations as workflow commands,
    when this process runs in a workflow step."""
    if env.get("GITHUB_ACTIONS") != "true":
        return
    summary_file = env.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        markdown = render_summary(
            result, fail_on=fail_on, details=details, reports_folder=reports_folder
        )
        append_summary(Path(summary_file), markdown)
    workspace = Path(env.get("GITHUB_WORKSPACE") or Path.cwd())
    for line in workflow_commands(run_annotations(result, workspace)):
        stdout.write(line + "\n")
