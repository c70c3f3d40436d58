"""The CLI in a GitHub Actions `run:` step writes the job summary and the annotations as the
action does; outside a workflow, or with `--no-workflow-report`, nothing."""

from __future__ import annotations

import io
from pathlib import Path

from scbench_ci.cli.main import parse_arguments
from scbench_ci.cli.workflow_step import report_to_workflow
from scbench_ci.job.reports import Status
from scbench_ci.results.model import RunResult
from testing.results import make_checkpoint, make_run, make_test

WHERE = ("evaluate", "--problem", "p", "--checkpoint", "checkpoint_1", "--submission", "s")


def _failing_run() -> RunResult:
    return make_run(make_checkpoint(make_test("t", Status.FAILED), make_test("u", Status.PASSED)))


def test_in_a_workflow_step_the_summary_and_the_annotations_are_written(tmp_path: Path) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    stdout = io.StringIO()
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    run = _failing_run()
    report_to_workflow(
        run,
        fail_on="policy",
        details="failed",
        reports_folder=Path(".scbench"),
        env=env,
        stdout=stdout,
    )
    written = summary.read_text()
    assert written.startswith("earlier step\n")
    assert "## ❌ FAILED" in written
    assert "<code>tests/test_checkpoint_1.py::t</code> Core, failed: t broke" in written
    errors = [line for line in stdout.getvalue().splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and "t broke" in errors[0]


def test_outside_a_workflow_nothing_is_written(tmp_path: Path) -> None:
    summary = tmp_path / "step_summary.md"
    stdout = io.StringIO()
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    report_to_workflow(
        _failing_run(),
        fail_on="policy",
        details="failed",
        reports_folder=Path(".scbench"),
        env=env,
        stdout=stdout,
    )
    assert not summary.exists() and stdout.getvalue() == ""


def test_the_report_is_on_unless_switched_off() -> None:
    assert parse_arguments(list(WHERE)).workflow_report is True
    assert parse_arguments([*WHERE, "--no-workflow-report"]).workflow_report is False
