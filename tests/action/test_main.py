"""The action end to end: its image built from the Dockerfile, run as GitHub's runner runs a Docker
container action (testing/runner.py, from actions/runner's source), against the test artifact
service. Every case runs twice: without the `entrypoint` input and with it set."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from datetime import timedelta
from pathlib import Path

import docker
import pytest
import yaml

from scbench_ci.action import main as action
from testing.action_run import ACTION_YML, MANIFEST, RETENTION_LIMIT_DAYS, ActionHost
from testing.examples import EXPECTED
from testing.runner import ActionManifest
from tests.outputs.github.test_artifacts import assert_expires_in, blob_zip

WORDSTAT_CP2_COUNTS = {
    group.lower(): (passed, total)
    for group, (passed, _, _, total) in EXPECTED[
        ("wordstat", "checkpoint_2", "solutions/checkpoint_2")
    ][1].items()
}
"""The reference solution's counts by group (passed, total), as the examples' tests expect them."""
ENTRYPOINT = "python3 wordstat.py"
"""The issue's example: a command that is not the default (`uv run wordstat.py`)."""
SHORTEST = {"checkpoint": "checkpoint_1"}
SHORTEST_SUBMISSION = "wordstat/solutions/checkpoint_1"
"""For the tests of what happens after the evaluation (the artifact's upload): wordstat's
checkpoint_1, 15 tests where checkpoint_2 has 30 (8 CPU-seconds an evaluation, not 12)."""


@pytest.fixture(params=[None, ENTRYPOINT], ids=["no-entrypoint-input", "entrypoint-input"])
def entrypoint(request: pytest.FixtureRequest) -> dict[str, str]:
    """The `entrypoint` input, unset or set: every end-to-end case runs both ways."""
    return {} if request.param is None else {"entrypoint": request.param}


def _option(argv: list[str], name: str) -> str | None:
    values = [argv[i + 1] for i, item in enumerate(argv[:-1]) if item == name]
    assert len(values) <= 1, values
    return values[0] if values else None


def test_a_passing_submission(
    action_host: ActionHost,
    entrypoint: dict[str, str],
) -> None:
    run = action_host.run({"image": action_host.test_image, **entrypoint})
    assert run.exit_code == 0, run.log
    # The runner starts the program action.yml names, whatever the `entrypoint` input holds.
    assert _option(run.argv, "--entrypoint") == "/opt/venv/bin/python"
    assert run.argv[-1] == "/opt/scbench-ci/entrypoint.py"
    assert run.environment["INPUT_ENTRYPOINT"] == entrypoint.get("entrypoint", "")
    assert run.environment["INPUT_PASS_POLICY"] == "core-cases"  # action.yml's default
    assert _option(run.argv, "--workdir") == "/github/workspace"
    assert {
        name: run.environment[name] for name in ("HOME", "GITHUB_WORKSPACE", "RUNNER_TEMP")
    } == {
        "HOME": "/github/home",
        "GITHUB_WORKSPACE": "/github/workspace",
        "RUNNER_TEMP": "/github/runner_temp",
    }
    assert run.environment["GITHUB_OUTPUT"].startswith("/github/file_commands/set_output_")
    outputs = run.outputs
    assert outputs["passed"] == "true"
    assert outputs["infrastructure_failure"] == "false"
    assert outputs["results_path"] == ".scbench/results.json"
    for group, (passed, total) in WORDSTAT_CP2_COUNTS.items():
        assert (outputs[f"{group}_passed"], outputs[f"{group}_total"]) == (str(passed), str(total))
    assert outputs["pass_rate"] == "0.9333"
    # Every output but `plan`'s matrix.
    declared = yaml.safe_load(ACTION_YML.read_text())["outputs"]
    assert sorted(outputs) == sorted(set(declared) - {"matrix"})
    (artifact,) = action_host.artifact_service.artifacts.values()
    assert artifact.name == "scbench-wordstat-checkpoint_2-submission"
    assert outputs["artifact_id"] == str(artifact.id)
    assert outputs["artifact_url"] == (
        f"https://github.com/scbench/demo/actions/runs/4242/artifacts/{artifact.id}"
    )
    assert outputs["artifact_digest"] == artifact.digest
    assert re.fullmatch("[0-9a-f]{64}", artifact.digest)
    assert (artifact.version, artifact.mime_type, artifact.expires_at) == (
        7,
        "application/zip",
        None,
    )
    assert sorted(blob_zip(action_host.artifact_service, artifact).namelist()) == [
        "checkpoint_results.jsonl",
        "results.json",
        "summary.md",
        "wordstat/checkpoint_2/ctrf-report.json",
        "wordstat/checkpoint_2/evaluation.json",
        # SCBench's own files beside evaluation.json, so its `eval` reads the run as current.
        "wordstat/checkpoint_2/evaluation/report.json",
        "wordstat/checkpoint_2/evaluation/stderr.txt",
        "wordstat/checkpoint_2/evaluation/stdout.txt",
        "wordstat/checkpoint_2/inventory.json",  # SCBench 1.0's inventory, as the runner took it
        "wordstat/checkpoint_2/pytest-report.json",
        "wordstat/checkpoint_2/pytest.log",
        "wordstat/checkpoint_2/quality.log",
        "wordstat/checkpoint_2/result.json",
        "wordstat/checkpoint_2/result.sig",  # what --skip-existing may reuse, signed
        "wordstat/checkpoint_2/setup.log",  # the test runner's installation
    ]
    assert "## ✅ PASSED" in run.summary
    assert outputs["artifact_url"] in run.summary
    assert (run.workspace / ".scbench/results.json").is_file()  # later steps can use it
    assert "::group::scbench-ci: evaluation" in run.log
    assert re.search(r"^::stop-commands::[0-9a-f]{32}$", run.log, re.M)
    # The one failing test: the deliberate setup error, in Functionality.
    (annotation,) = re.findall(r"^::error .*$", run.log, re.M)
    assert annotation.startswith(
        "::error title=checkpoint_2 · Functionality · "
        "tests/test_checkpoint_2.py%3A%3Atest_top_matches_frequency_table,"
        "file=problems/wordstat/tests/test_checkpoint_2.py,line="
    )
    assert (
        "ghs_secret"
        not in (run.workspace / ".scbench/wordstat/checkpoint_2/pytest.log").read_text()
    )


def test_a_failing_submission(
    action_host: ActionHost,
    entrypoint: dict[str, str],
) -> None:
    run = action_host.run(
        {"image": action_host.test_image, **entrypoint},
        submission="wordstat/submissions/broken",
    )
    assert run.exit_code == 1, run.log
    assert run.outputs["passed"] == "false"
    assert (run.outputs["core_passed"], run.outputs["core_total"]) == ("0", "8")
    assert "## ❌ FAILED" in run.summary
    assert "<details>" in run.summary
    # Annotations come after the stopped-commands section, so the runner reads them.
    token = re.search(r"^::stop-commands::([0-9a-f]{32})$", run.log, re.M)
    assert token is not None
    after = run.log.split(f"::{token.group(1)}::", 1)[1]
    errors = re.findall(r"^::error (.*?)::(.*)$", after, re.M)
    assert len(errors) == 10  # 22 failing tests, at most 10 annotations
    for properties, _ in errors:
        assert re.search(
            r"file=problems/wordstat/tests/test_checkpoint_[12]\.py,line=\d+", properties
        ), properties
    assert run.outputs["artifact_id"]


def test_a_problem_repository_side_by_side(
    action_host: ActionHost,
) -> None:
    """`problem` a folder of problems, `submission` a template, two jobs: one results.json."""
    run = action_host.run(
        {
            "image": action_host.test_image,
            "problem": "problems",
            "checkpoint": "all",
            "submission": "problems/{problem}/solutions/{checkpoint}",
            "jobs": "2",
        },
        problems=("kvserver", "wordstat"),
    )
    assert run.exit_code == 0, run.log
    assert run.outputs["passed"] == "true"
    # kvserver: Core 3 + 3; wordstat: Core 8 + 8 + 8 (its xfailed test is Functionality).
    assert (run.outputs["core_passed"], run.outputs["core_total"]) == ("30", "30")
    finished = re.findall(r"^\[(\d)/5\] (\w+) / (checkpoint_\d): passed", run.log, re.M)
    assert len(finished) == 5
    results = json.loads((run.workspace / ".scbench/results.json").read_text())
    assert results["jobs"] == 2
    assert [p["name"] for p in results["problems"]] == ["kvserver", "wordstat"]
    assert "## ✅ PASSED: 2 problems, 5 checkpoints" in run.summary
    assert "| wordstat | ✅ | ✅ | ✅ |" in run.summary
    (artifact,) = action_host.artifact_service.artifacts.values()
    assert artifact.name == "scbench-problems-all-problems-problem-solutions-checkpoint"
    names = blob_zip(action_host.artifact_service, artifact).namelist()
    assert "kvserver/checkpoint_2/evaluation.json" in names
    assert "wordstat/checkpoint_3/pytest.log" in names
    assert "checkpoint_results.jsonl" in names


def test_fail_on_policy_false_and_no_upload(
    action_host: ActionHost,
    entrypoint: dict[str, str],
) -> None:
    run = action_host.run(
        {
            "image": action_host.test_image,
            "fail_on_policy": "false",
            "upload_artifact": "false",
            "job_summary": "false",
            "annotations": "false",
            **entrypoint,
        },
        upload=False,
        submission="wordstat/submissions/broken",
    )
    assert run.exit_code == 0, run.log
    assert run.outputs["passed"] == "false"
    assert (run.outputs["artifact_id"], run.outputs["artifact_digest"]) == ("", "")
    assert run.summary == ""
    assert "::error" not in run.log


def test_an_upload_failure_is_a_warning(
    action_host: ActionHost,
    entrypoint: dict[str, str],
) -> None:
    run = action_host.run(
        {"image": action_host.test_image, "artifact_name": "bad:name", **entrypoint, **SHORTEST},
        submission=SHORTEST_SUBMISSION,
    )
    assert run.exit_code == 0, run.log
    assert re.search(
        r"^::warning title=scbench-ci::artifact not uploaded: .*bad:name", run.log, re.M
    )
    assert run.outputs["passed"] == "true"
    assert run.outputs["artifact_id"] == ""
    assert "## ✅ PASSED" in run.summary


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"problem": "../../etc"}, "input problem: '../../etc' leaves the workspace"),
        ({"checkpoint": "checkpoint_9"}, "no checkpoint 'checkpoint_9'"),
    ],
)
def test_bad_inputs_fail_the_step_with_one_error(
    action_host: ActionHost,
    inputs: dict[str, str],
    message: str,
    entrypoint: dict[str, str],
) -> None:
    run = action_host.run({**inputs, **entrypoint}, upload=False)
    assert run.exit_code == 2, run.log
    (error,) = re.findall(r"^::error title=scbench-ci::(.*)$", run.log, re.M)
    assert message in error
    assert "Traceback" not in run.log
    assert not (run.workspace / ".scbench").exists()
    assert (run.outputs["passed"], run.outputs["infrastructure_failure"]) == ("false", "false")


@pytest.mark.parametrize(
    ("retention_days", "expected_days", "warned"),
    [
        ("0", None, False),  # the repository's default
        ("1", 1, False),
        ("90", RETENTION_LIMIT_DAYS, True),
        ("400", RETENTION_LIMIT_DAYS, True),  # above 90: only the repository's limit applies
    ],
)
def test_retention_days_as_the_toolkit_takes_them(
    action_host: ActionHost,
    entrypoint: dict[str, str],
    retention_days: str,
    expected_days: int | None,
    warned: bool,
) -> None:
    run = action_host.run(
        {
            "image": action_host.test_image,
            "retention_days": retention_days,
            **entrypoint,
            **SHORTEST,
        },
        submission=SHORTEST_SUBMISSION,
    )
    assert run.exit_code == 0, run.log
    (artifact,) = action_host.artifact_service.artifacts.values()
    assert run.outputs["artifact_id"] == str(artifact.id)
    if expected_days is None:
        assert artifact.expires_at is None
    else:
        assert_expires_in(artifact, timedelta(days=expected_days))
    warnings = re.findall(r"^::warning title=scbench-ci::(.*)$", run.log, re.M)
    assert warnings == (
        [
            f"retention days cannot be more than the repository's limit of {RETENTION_LIMIT_DAYS}"
            f"; using {RETENTION_LIMIT_DAYS} instead of {retention_days}"
        ]
        if warned
        else []
    )


def test_every_input_set(
    action_host: ActionHost,
) -> None:
    """Each input of action.yml given in `with:`, none of them empty."""
    inputs = {
        "command": "evaluate",
        "problem": "problems/wordstat",
        "checkpoint": "checkpoint_2",
        "select": "wordstat/checkpoint_2",
        "submission": "submission",
        "same_submission": "true",
        "include_prior_tests": "true",
        "entrypoint": ENTRYPOINT,
        "environment": "ci/python.yaml",
        "image": action_host.test_image,
        "memory": "3g",
        "cpus": "1.5",
        "pids_limit": "512",
        "disk": "1g",
        "cache": "false",
        "cache_size": "20g",
        "test_network": "true",
        "timeout": "25",
        "session_timeout": "900",
        "pass_policy": "any-case",
        "fail_on_policy": "false",
        "scbench": "1.0",
        "fail_on": "policy",
        "details": "all",
        "history": "30",
        "baseline": "ci/first-run-has-no-baseline.json",
        "baseline_branch": "main",
        "reruns": "1",
        "repeat": "1",
        "flaky_passes": "true",
        "pytest_args": "-k 'not test_top_matches_frequency_table'",
        "quality": "true",
        "jobs": "1",
        "skip_existing": "true",
        "results": "only/read/by/merge",
        "shards": "2",
        "test_shards": "1",
        "changed_since": "origin/main",
        "oracle_policy": "all-cases",
        "comment": "false",
        "check_run": "false",
        "github_token": "ghs_not-used",
        "job_summary": "true",
        "annotations": "false",
        "upload_artifact": "true",
        "artifact_name": "wordstat-every-input",
        "retention_days": "14",
    }
    assert sorted(inputs) == sorted(MANIFEST.inputs)
    assert all(inputs.values())
    environment = "environment:\n  env:\n    SCBENCH_EVERY_INPUT: 'yes'\n"
    run = action_host.run(
        inputs,
        files={"ci/python.yaml": environment},
    )
    assert run.exit_code == 0, run.log
    assert _option(run.argv, "--entrypoint") == "/opt/venv/bin/python"
    outputs = run.outputs
    assert (outputs["passed"], outputs["infrastructure_failure"]) == ("true", "false")
    assert (outputs["regressions"], outputs["fixed"], outputs["flaky"]) == ("", "", "0")
    assert (
        "::warning title=scbench-ci::no baseline to compare with: "
        "ci/first-run-has-no-baseline.json does not exist"
    ) in run.log
    # -k deselected the one failing test.
    assert (outputs["functionality_passed"], outputs["functionality_total"]) == ("2", "2")
    # Without an inventory (the -k), SCBench 1.0 leaves the skipped one out of the total.
    assert (outputs["regression_passed"], outputs["regression_total"]) == ("15", "15")
    (artifact,) = action_host.artifact_service.artifacts.values()
    assert artifact.name == "wordstat-every-input"
    assert (outputs["artifact_id"], outputs["artifact_digest"]) == (
        str(artifact.id),
        artifact.digest,
    )
    assert_expires_in(artifact, timedelta(days=14))
    assert "::error" not in run.log  # annotations: false
    # fail_on_policy: false is --fail-on never: the headline says the policy's outcome.
    assert (
        "## ✅ 1 of 1 checkpoint passes the policy (not failing the run: --fail-on never)"
        in run.summary
    )


def test_a_step_that_runs_the_image_itself_gets_the_same_defaults(
    action_host: ActionHost,
) -> None:
    """`uses: docker://<mirror>/evaluate:<version>`: no action.yml, so the runner passes only the
    step's own inputs and starts the image's ENTRYPOINT; the reader's defaults make the rest."""
    image_itself = ActionManifest(
        inputs={}, image=action_host.image, entrypoint=None, args=None, env=None
    )
    run = action_host.run(
        {"image": action_host.test_image, "upload_artifact": "false"},
        upload=False,
        manifest=image_itself,
    )
    assert run.exit_code == 0, run.log
    assert _option(run.argv, "--entrypoint") is None
    assert sorted(name for name in run.environment if name.startswith("INPUT_")) == [
        "INPUT_CHECKPOINT",
        "INPUT_IMAGE",
        "INPUT_PROBLEM",
        "INPUT_SUBMISSION",
        "INPUT_UPLOAD_ARTIFACT",
    ]
    assert (run.outputs["passed"], run.outputs["infrastructure_failure"]) == ("true", "false")
    for group, (passed, total) in WORDSTAT_CP2_COUNTS.items():
        assert (run.outputs[f"{group}_passed"], run.outputs[f"{group}_total"]) == (
            str(passed),
            str(total),
        )
    assert "## ✅ PASSED" in run.summary  # job_summary defaults to true
    # Nothing was uploaded: the summary points to the folder, not to an artifact.
    assert "the `.scbench/` folder" in run.summary and "workflow artifact" not in run.summary


def test_the_entrypoint_input_reaches_the_tests(
    action_host: ActionHost,
) -> None:
    """A command that cannot run the submission fails every test: the input is not ignored."""
    run = action_host.run(
        {
            "image": action_host.test_image,
            "entrypoint": "python3 missing.py",
            "upload_artifact": "false",
        },
        upload=False,
    )
    assert run.exit_code == 1, run.log
    assert (run.outputs["passed"], run.outputs["infrastructure_failure"]) == ("false", "false")
    assert (run.outputs["core_passed"], run.outputs["core_total"]) == ("0", "8")


def test_without_runs_entrypoint_the_runner_runs_the_entrypoint_input(
    action_host: ActionHost,
) -> None:
    """The issue, reproduced: an action.yml whose runs: names no entrypoint and no args lets the
    runner start `docker run --entrypoint "python3 wordstat.py"`, which cannot start."""
    before = dataclasses.replace(MANIFEST, entrypoint=None, args=None)
    run = action_host.run(
        {"image": action_host.test_image, "entrypoint": ENTRYPOINT},
        upload=False,
        manifest=before,
    )
    assert _option(run.argv, "--entrypoint") == ENTRYPOINT
    assert run.exit_code == 127, run.log
    assert (run.outputs, run.summary) == ({}, "")
    assert not (run.workspace / ".scbench").exists()


def test_the_image_runs_the_program_action_yml_names(
    docker_client: docker.DockerClient, action_image: str
) -> None:
    """`docker build` of the Dockerfile alone keeps working: its ENTRYPOINT is the same."""
    assert MANIFEST.entrypoint is not None and MANIFEST.args is not None
    config = docker_client.images.get(action_image).attrs["Config"]
    assert config["Entrypoint"] == [MANIFEST.entrypoint, *MANIFEST.args]


def test_an_unexpected_exception_is_exit_3_with_outputs_and_a_crash_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in scbench-ci never reads as a failing verdict: outputs say infrastructure."""

    def broken(env: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(action, "read_inputs", broken)
    outputs = tmp_path / "outputs"
    outputs.touch()
    stdout = io.StringIO()

    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_OUTPUT": str(outputs)}, stdout)

    assert code == 3
    log = tmp_path / ".scbench" / "crash.log"
    assert "RuntimeError: a bug" in log.read_text()
    assert stdout.getvalue().startswith("::error title=scbench-ci::internal error (RuntimeError: ")
    written = outputs.read_text()
    assert re.search(r"^passed<<(\S+)\nfalse\n\1$", written, re.MULTILINE)
    assert re.search(r"^infrastructure_failure<<(\S+)\ntrue\n\1$", written, re.MULTILINE)
