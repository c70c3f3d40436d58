"""The pre-flight: with no Docker daemon, or no image, a run is one line and exit 3 before any job,
never a result per job under a policy verdict; a run that reuses every job needs neither."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scbench_ci.action import main as action
from testing.cli import run_cli
from testing.paths import EXAMPLES

NO_DAEMON = "tcp://127.0.0.1:9"
"""Nothing listens on port 9."""
NO_SUCH_IMAGE = "scbench-ci-test/no-such-image:0"
"""Neither here nor pullable (no registry answers)."""
UNREACHABLE = (
    f"cannot reach the Docker daemon at DOCKER_HOST={NO_DAEMON}: start Docker (or point "
    "DOCKER_HOST at a running daemon), or pass --executor local to run the tests on this machine "
    "without isolation"
)
EVERY_EXAMPLE = sorted(path.name for path in EXAMPLES.iterdir() if path.is_dir())


def scbench(*args: str | Path, docker_host: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if docker_host is not None:
        env["DOCKER_HOST"] = docker_host
    return run_cli(*args, env=env)


def evaluate_examples(output: Path, *extra: str) -> list[str]:
    problems = [arg for name in EVERY_EXAMPLE for arg in ("--problem", str(EXAMPLES / name))]
    return [
        "evaluate",
        *problems,
        "--checkpoint",
        "all",
        "--submission",
        f"{EXAMPLES}/{{problem}}/solutions/{{checkpoint}}",
        "--executor",
        "docker",
        "--output",
        str(output),
        *extra,
    ]


def assert_one_error_line(run: subprocess.CompletedProcess[str], output: Path) -> str:
    """The run ended before any job: exit 3, one line on stderr, no verdict anywhere."""
    assert run.returncode == 3, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("scbench-ci: error: "), run.stderr
    for claim in ("Verdict", "log tail", "checkpoint"):
        assert claim not in run.stdout
    assert not (output / "results.json").exists()
    assert not (output / "summary.md").exists()
    return lines[0].removeprefix("scbench-ci: error: ")


@pytest.mark.parametrize("quiet", [("--quiet",), ()], ids=["quiet", "streamed"])
def test_no_daemon_is_one_line_before_any_job(tmp_path: Path, quiet: tuple[str, ...]) -> None:
    output = tmp_path / "out"
    run = scbench(*evaluate_examples(output, "--jobs", "2", *quiet), docker_host=NO_DAEMON)
    assert assert_one_error_line(run, output) == UNREACHABLE
    assert run.stdout == ""


def test_check_with_no_daemon_is_one_line(tmp_path: Path) -> None:
    output = tmp_path / "out"
    args = ("check", EXAMPLES / "marks", "--executor", "docker", "--output", output)
    run = scbench(*args, docker_host=NO_DAEMON)
    assert assert_one_error_line(run, output) == UNREACHABLE


# The daemon it reaches is the default one, through the CLI: no fixture marks it.
@pytest.mark.docker
def test_an_image_neither_here_nor_pullable_is_one_line(tmp_path: Path) -> None:
    output = tmp_path / "out"
    run = scbench(*evaluate_examples(output, "--jobs", "2", "--image", NO_SUCH_IMAGE))
    message = assert_one_error_line(run, output)
    assert message.startswith(f"could not pull {NO_SUCH_IMAGE}: ")
    assert message.endswith("; pull or build it yourself, or pass --image")
    # Pulled once, for the whole run.
    assert run.stdout.count(f"pulling {NO_SUCH_IMAGE}") == 1

    checked = tmp_path / "checked"
    args = ("check", EXAMPLES / "marks", "--image", NO_SUCH_IMAGE, "--quiet", "--output", checked)
    assert assert_one_error_line(scbench(*args), checked) == message


def test_skip_existing_with_nothing_to_reuse_still_checks_first(tmp_path: Path) -> None:
    output = tmp_path / "out"
    args = evaluate_examples(output, "--jobs", "2", "--quiet", "--skip-existing")
    run = scbench(*args, docker_host=NO_DAEMON)
    assert assert_one_error_line(run, output) == UNREACHABLE


def test_a_run_that_reuses_every_job_needs_no_daemon(tmp_path: Path, test_image: str) -> None:
    output = tmp_path / "out"
    args = (
        "evaluate",
        "--problem",
        EXAMPLES / "jsonlog",
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        EXAMPLES / "jsonlog/solutions/checkpoint_1",
        "--executor",
        "docker",
        "--image",
        test_image,
        "--skip-existing",
        "--quiet",
        "--output",
        output,
    )
    first = scbench(*args)
    assert first.returncode == 0, first.stdout + first.stderr

    again = scbench(*args, docker_host=NO_DAEMON)
    assert again.returncode == 0, again.stdout + again.stderr
    (checkpoint,) = json.loads((output / "results.json").read_text())["problems"][0]["checkpoints"]
    assert checkpoint["reused"] is True


def test_the_action_says_the_one_line_as_an_error_and_claims_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_DAEMON)
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLES / "marks", workspace / "marks")
    outputs = tmp_path / "outputs"
    summary = tmp_path / "summary"
    env = {
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_PROBLEM": "marks",
        "INPUT_CHECKPOINT": "all",
        "INPUT_SUBMISSION": "marks/solutions/{checkpoint}",
        "INPUT_JOBS": "2",
        "INPUT_UPLOAD_ARTIFACT": "false",
    }
    for command in ("evaluate", "check"):
        stdout = io.StringIO()
        assert action.main({**env, "INPUT_COMMAND": command}, stdout) == 3
        errors = [line for line in stdout.getvalue().splitlines() if line.startswith("::error")]
        assert errors == [f"::error title=scbench-ci::{UNREACHABLE}"]
        assert "Verdict" not in stdout.getvalue()
        assert not summary.exists()
        assert not (workspace / ".scbench" / "results.json").exists()
        assert "infrastructure_failure<<" in outputs.read_text()
