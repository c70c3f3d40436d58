"""The action end to end: its image built from the Dockerfile, run exactly as GitHub's runner runs
a Docker container action, against the test artifact service (on loopback: host networking)."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from tests.conftest import EXAMPLES
from tests.github.test_artifacts import blob_zip
from tests.github.twirp_server import ArtifactService

WORDSTAT_CP2_COUNTS = {
    "core": (7, 7),
    "functionality": (2, 3),
    "error": (4, 4),
    "regression": (15, 16),
}


@dataclass
class ActionRun:
    exit_code: int
    log: str
    outputs: dict[str, str]
    summary: str
    workspace: Path


def _read_outputs(path: Path) -> dict[str, str]:
    text = path.read_text()
    blocks = re.findall(r"^([\w-]+)<<(ghadelimiter_[0-9a-f]+)\n(.*?)\n\2$", text, re.S | re.M)
    assert sum(len(f"{n}<<{d}\n{v}\n{d}\n") for n, d, v in blocks) == len(text), text
    return {name: value for name, _, value in blocks}


def run_action(
    docker_client: docker.DockerClient,
    image: str,
    runner: Path,
    inputs: dict[str, str],
    service: ArtifactService | None,
    submission: str = "wordstat/solutions/checkpoint_2",
) -> ActionRun:
    """`docker run` as the runner does it: the workspace, home, workflow and file-command folders
    and the Docker socket mounted; INPUT_*, GITHUB_* and ACTIONS_* in the environment."""
    workspace = runner / "workspace"
    shutil.copytree(EXAMPLES / "wordstat", workspace / "problems/wordstat")
    shutil.copytree(EXAMPLES / submission, workspace / "submission")
    file_commands = runner / "file_commands"
    for folder in ("home", "workflow", "file_commands"):
        (runner / folder).mkdir(parents=True)
    (runner / "workflow/event.json").write_text("{}")
    for name in ("set_output", "step_summary", "set_env", "add_path", "save_state"):
        (file_commands / name).touch()
    env = {
        "HOME": "/github/home",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_OUTPUT": "/github/file_commands/set_output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary",
        "GITHUB_ENV": "/github/file_commands/set_env",
        "GITHUB_PATH": "/github/file_commands/add_path",
        "GITHUB_STATE": "/github/file_commands/save_state",
        "GITHUB_TOKEN": "ghs_secret_that_must_not_reach_the_tests",
        "GITHUB_RETENTION_DAYS": "30",
        "INPUT_PROBLEM": "problems/wordstat",
        "INPUT_SUBMISSION": "submission",
        "INPUT_CHECKPOINT": "checkpoint_2",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        **(service.environment() if service else {}),
    }
    container = docker_client.containers.run(
        image,
        detach=True,
        working_dir="/github/workspace",
        environment=env,
        network_mode="host",
        volumes={
            "/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"},
            str(runner / "home"): {"bind": "/github/home", "mode": "rw"},
            str(runner / "workflow"): {"bind": "/github/workflow", "mode": "rw"},
            str(file_commands): {"bind": "/github/file_commands", "mode": "rw"},
            str(workspace): {"bind": "/github/workspace", "mode": "rw"},
        },
    )
    try:
        exit_code = container.wait(timeout=600)["StatusCode"]
        log = container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)
    return ActionRun(
        exit_code=exit_code,
        log=log,
        outputs=_read_outputs(file_commands / "set_output"),
        summary=(file_commands / "step_summary").read_text(),
        workspace=workspace,
    )


def test_a_passing_submission(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
    artifact_service: ArtifactService,
) -> None:
    run = run_action(docker_client, action_image, tmp_path, {"image": test_image}, artifact_service)
    assert run.exit_code == 0, run.log
    outputs = run.outputs
    assert outputs["passed"] == "true"
    assert outputs["infrastructure_failure"] == "false"
    assert outputs["results_path"] == ".scbench/results.json"
    for group, (passed, total) in WORDSTAT_CP2_COUNTS.items():
        assert (outputs[f"{group}_passed"], outputs[f"{group}_total"]) == (str(passed), str(total))
    assert outputs["pass_rate"] == "0.9333"
    (artifact,) = artifact_service.artifacts.values()
    assert artifact.name == "scbench-wordstat-checkpoint_2-submission"
    assert outputs["artifact_id"] == str(artifact.id)
    assert outputs["artifact_url"] == (
        f"https://github.com/scbench/demo/actions/runs/4242/artifacts/{artifact.id}"
    )
    assert sorted(blob_zip(artifact_service, artifact).namelist()) == [
        "ctrf-report.json",
        "pytest-report.json",
        "pytest.log",
        "results.json",
        "setup.log",  # the test runner's installation
        "summary.md",
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
    assert "ghs_secret" not in (run.workspace / ".scbench/pytest.log").read_text()


def test_a_failing_submission(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
    artifact_service: ArtifactService,
) -> None:
    run = run_action(
        docker_client,
        action_image,
        tmp_path,
        {"image": test_image},
        artifact_service,
        submission="wordstat/submissions/broken",
    )
    assert run.exit_code == 1, run.log
    assert run.outputs["passed"] == "false"
    assert (run.outputs["core_passed"], run.outputs["core_total"]) == ("0", "7")
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


def test_fail_on_policy_false_and_no_upload(
    docker_client: docker.DockerClient, action_image: str, test_image: str, tmp_path: Path
) -> None:
    run = run_action(
        docker_client,
        action_image,
        tmp_path,
        {
            "image": test_image,
            "fail_on_policy": "false",
            "upload_artifact": "false",
            "job_summary": "false",
            "annotations": "false",
        },
        None,
        submission="wordstat/submissions/broken",
    )
    assert run.exit_code == 0, run.log
    assert run.outputs["passed"] == "false"
    assert run.outputs["artifact_id"] == ""
    assert run.summary == ""
    assert "::error" not in run.log


def test_an_upload_failure_is_a_warning(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
    artifact_service: ArtifactService,
) -> None:
    run = run_action(
        docker_client,
        action_image,
        tmp_path,
        {"image": test_image, "artifact_name": "bad:name"},
        artifact_service,
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
    docker_client: docker.DockerClient,
    action_image: str,
    tmp_path: Path,
    inputs: dict[str, str],
    message: str,
) -> None:
    run = run_action(docker_client, action_image, tmp_path, inputs, None)
    assert run.exit_code == 2, run.log
    (error,) = re.findall(r"^::error title=scbench-ci::(.*)$", run.log, re.M)
    assert message in error
    assert "Traceback" not in run.log
    assert not (run.workspace / ".scbench").exists()
