"""What a step publishes once its core has run: the job summary, the outputs, the annotations, and
the default artifact name; without the artifact service or the REST API (those run end to end in
test_main.py and test_commands.py)."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

from scbench_ci.action.inputs import read_inputs
from scbench_ci.action.publish import Step, default_artifact_name
from scbench_ci.commands.channels import Outcome
from scbench_ci.errors import ExitCode
from scbench_ci.outputs.github.annotations import error_annotations, run_annotations
from scbench_ci.outputs.summary import render_summary
from testing.results import make_checkpoint, make_run


def _outputs(path: Path) -> dict[str, str]:
    found = re.findall(r"^(\w+)<<(\S+)\n(.*?)\n\2$", path.read_text(), re.M | re.S)
    return {name: value for name, _, value in found}


def _step(tmp_path: Path, **inputs: str) -> Step:
    env = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "outputs"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "INPUT_PROBLEM": "problems/demo",
        "INPUT_CHECKPOINT": "checkpoint_1",
        "INPUT_UPLOAD_ARTIFACT": "false",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    for name in ("outputs", "summary"):
        (tmp_path / name).touch()
    return Step(read_inputs(env), env, io.StringIO())


def test_the_summary_the_outputs_and_the_annotations(tmp_path: Path) -> None:
    step = _step(tmp_path)
    run = make_run(make_checkpoint())
    results = tmp_path / ".scbench" / "results.json"
    step.publish(
        Outcome(run, results, ExitCode.PASSED), "scbench-demo", render_summary, run_annotations
    )
    # Not uploaded: the summary points to the .scbench/ folder, relative to the workspace.
    summary = (tmp_path / "summary").read_text()
    assert summary == render_summary(run, reports_folder=Path(".scbench"))
    assert "Reports, logs and results.json: the `.scbench/` folder." in summary
    outputs = _outputs(tmp_path / "outputs")
    assert outputs["results_path"] == ".scbench/results.json"
    assert (outputs["passed"], outputs["artifact_id"]) == (str(run.passed).lower(), "")
    assert step.stdout.getvalue() == "".join(
        f"{line}\n" for line in error_annotations(run, tmp_path)
    )


def test_nothing_to_check_passes(tmp_path: Path) -> None:
    step = _step(tmp_path, annotations="false", job_summary="false")
    run = replace(make_run(), problems=())
    step.publish(
        Outcome(run, None, ExitCode.PASSED), "scbench-check", render_summary, run_annotations
    )
    assert _outputs(tmp_path / "outputs") == {"passed": "true", "infrastructure_failure": "false"}
    assert (tmp_path / "summary").read_text() == ""
    assert step.stdout.getvalue() == ""


def test_the_default_artifact_name(tmp_path: Path) -> None:
    inputs = _step(tmp_path, submission="solutions/{checkpoint}").inputs
    name = default_artifact_name(make_run(make_checkpoint()), inputs)
    assert name == "scbench-demo-checkpoint_1-solutions-checkpoint"
