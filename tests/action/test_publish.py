"""What a step publishes once its core has run: the job summary, the outputs, the annotations, the
Check Run (against the REST double) and the default artifact name; without the artifact service
(that runs end to end in test_main.py and test_commands.py)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from scbench_ci.action.inputs import read_inputs
from scbench_ci.action.publish import WorkflowStep, default_artifact_name
from scbench_ci.commands.channels import Outcome
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.job.reports import Status
from scbench_ci.outputs.exit_status import run_headline
from scbench_ci.outputs.github.annotations import (
    MAX_ANNOTATIONS,
    error_annotations,
    run_annotations,
)
from scbench_ci.outputs.summary import render_summary
from scbench_ci.results.file import load_pull_request, write_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.pull_request import PullRequestRef
from testing.rest_double import READ_TOKEN, WRITE_TOKEN, RestDouble
from testing.results import make_checkpoint, make_run, make_test


def _outputs(path: Path) -> dict[str, str]:
    found = re.findall(r"^(\w+)<<(\S+)\n(.*?)\n\2$", path.read_text(), re.M | re.S)
    return {name: value for name, _, value in found}


def _step(tmp_path: Path, **inputs: str) -> WorkflowStep:
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
    return WorkflowStep(read_inputs(env), env, io.StringIO())


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


def _double_step(tmp_path: Path, double: RestDouble, event: Mapping[str, object]) -> WorkflowStep:
    (tmp_path / "event.json").write_text(json.dumps(event))
    env = double.environment(
        GITHUB_WORKSPACE=str(tmp_path),
        GITHUB_EVENT_PATH=str(tmp_path / "event.json"),
        GITHUB_SHA="e" * 40,
        INPUT_PROBLEM="problems/demo",
        INPUT_CHECKPOINT="checkpoint_1",
        INPUT_UPLOAD_ARTIFACT="false",
        INPUT_JOB_SUMMARY="false",
        INPUT_CHECK_RUN="true",
        INPUT_GITHUB_TOKEN=WRITE_TOKEN,
    )
    return WorkflowStep(read_inputs(env), env, io.StringIO())


def _failing_run(count: int, workspace: Path) -> RunResult:
    run = make_run(make_checkpoint(*(make_test(f"t{n}", Status.FAILED) for n in range(count))))
    (problem,) = run.problems
    placed = replace(problem, path=str(workspace / "problems/demo"))
    return replace(run, problems=(placed,))


def test_on_a_pull_request_the_check_run_is_on_its_head_and_the_artifact_names_it(
    tmp_path: Path,
) -> None:
    head = "ab" * 20
    event = {"pull_request": {"number": 7, "head": {"sha": head}}}
    with RestDouble() as double:
        step = _double_step(tmp_path, double, event)
        run = _failing_run(55, tmp_path)
        results = write_results(run, tmp_path / ".scbench")
        step.publish(
            Outcome(run, results, ExitCode.FAILED), "scbench-demo", render_summary, run_annotations
        )
        (check,) = double.check_runs_on(head)
    assert (check.name, check.conclusion, len(check.annotations)) == ("scbench-demo", "failure", 55)
    assert check.title == run_headline(run, "policy").heading
    assert check.text == render_summary(run, reports_folder=Path(".scbench"), max_bytes=65_535)
    # The step's own annotations are as before: 10 errors.
    assert step.stdout.getvalue().count("::error ") == MAX_ANNOTATIONS
    assert load_pull_request(tmp_path / ".scbench" / "pull_request.json") == PullRequestRef(7, head)


def test_on_a_push_the_check_run_is_on_github_sha_and_a_read_only_token_is_a_warning(
    tmp_path: Path,
) -> None:
    with RestDouble() as double:
        step = _double_step(tmp_path, double, {"ref": "refs/heads/main"})
        run = _failing_run(1, tmp_path)
        results = write_results(run, tmp_path / ".scbench")
        outcome = Outcome(run, results, ExitCode.FAILED)
        step.publish(outcome, "scbench-demo", render_summary, run_annotations)
        assert [check.conclusion for check in double.check_runs_on("e" * 40)] == ["failure"]
        assert not (tmp_path / ".scbench" / "pull_request.json").exists()
        read_only = replace(step, inputs=replace(step.inputs, github_token=READ_TOKEN))
        read_only.publish(outcome, "scbench-demo", render_summary, run_annotations)
        assert len(double.check_runs_on("e" * 40)) == 1
    log = read_only.stdout.getvalue()
    (warning,) = re.findall(r"^::warning title=scbench-ci::(.*)$", log, re.MULTILINE)
    assert warning.startswith("no Check Run: the token may not create check runs (the job needs ")
    assert "`permissions: checks: write`" in warning
    # The step's own annotation is there all the same.
    assert log.count("::error ") == 2  # one from each publish
