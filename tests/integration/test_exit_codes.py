"""Each exit code the README documents, read from the real CLI in the case the docs give for it
(issue #52: docs/cli.md and docs/api.md said that a submission folder that does not exist is a
`missing` failure, exit 1; the CLI said exit 2, `no such folder`: only a folder a `{checkpoint}`
template names is that evaluation's `missing`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import docker

from scbench_ci.executors.processes import owner
from testing.cli import cli_argv, run_cli
from testing.examples import SharedEvaluations
from testing.paths import EXAMPLES, REPO_ROOT
from testing.problems import ProblemFolder, waiting_problem
from testing.subprocesses import ended_with_the_block
from tests.integration.test_cancel import in_containers, wait_for_tests

README = (REPO_ROOT / "README.md").read_text()
CLI_DOCS = " ".join((REPO_ROOT / "docs" / "cli.md").read_text().split())
"""docs/cli.md, its lines joined as markdown joins them."""
WORDSTAT = EXAMPLES / "wordstat"
TESTED = {
    0: "test_0_the_policy_passes",
    1: "test_1_it_fails",
    2: "test_2_bad_usage_or_a_bad_problem",
    3: "test_3_an_infrastructure_failure",
    130: "test_130_and_143_stopped_by_a_signal",
    143: "test_130_and_143_stopped_by_a_signal",
}


def documented_codes() -> set[int]:
    """The codes of the README's table of exit codes."""
    table = README[README.index("## Exit codes") :].split("\n## ", 1)[0]
    return {
        int(code)
        for code in re.findall(r"`(\d+)`", "".join(re.findall(r"^\| (.*?) \|", table, re.M)))
    }


def test_every_documented_code_is_read_from_the_cli() -> None:
    assert documented_codes() == set(TESTED)
    assert all(name in globals() for name in TESTED.values())


def test_0_the_policy_passes(shared_evaluations: SharedEvaluations) -> None:
    run = shared_evaluations("wordstat", "checkpoint_1", "solutions/checkpoint_1").run
    assert run.returncode == 0, run.stdout + run.stderr


def test_1_it_fails(shared_evaluations: SharedEvaluations, tmp_path: Path) -> None:
    run = shared_evaluations("wordstat", "checkpoint_1", "submissions/broken").run
    assert run.returncode == 1, run.stdout + run.stderr
    # A folder a `{checkpoint}` template names that does not exist: that evaluation's failure.
    missing = run_cli(
        "evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1", "--quiet",
        "--submission", tmp_path / "runs" / "{checkpoint}", "--output", tmp_path / "out",
        "--executor", "local",
    )  # fmt: skip
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "  why it failed: missing: the submission folder " in missing.stdout
    assert (
        "one that a `{problem}` or `{checkpoint}` template names is that evaluation's failure "
        "(`missing`, exit 1)"
    ) in CLI_DOCS


def test_2_bad_usage_or_a_bad_problem(tmp_path: Path) -> None:
    absent = tmp_path / "nowhere"
    run = run_cli(
        "evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1",
        "--submission", absent, "--output", tmp_path / "out",
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr == f"scbench-ci: error: submission '{absent}': no such folder\n"
    assert "(exit 2, `submission '...': no such folder`)" in CLI_DOCS
    bad = ProblemFolder(tmp_path / "bad")
    bad.write("config.yaml", "checkpoints: [\n")
    run = run_cli(
        "evaluate", "--problem", bad.root, "--checkpoint", "checkpoint_1",
        "--submission", tmp_path, "--output", tmp_path / "out",
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.startswith(f"scbench-ci: error: {bad.root / 'config.yaml'}")
    assert len(run.stderr.splitlines()) == 1


def test_3_an_infrastructure_failure(tmp_path: Path) -> None:
    """No Docker daemon answers."""
    run = run_cli(
        "evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1",
        "--submission", WORDSTAT / "solutions" / "checkpoint_1", "--output", tmp_path / "out",
        "--executor", "docker",
        env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"},
    )  # fmt: skip
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.startswith("scbench-ci: error: ")


def test_130_and_143_stopped_by_a_signal(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient
) -> None:
    problem, _ = waiting_problem(tmp_path / "problem", 1, 600)
    submission = tmp_path / "submission"
    submission.mkdir()
    for stop, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        process = subprocess.Popen(
            [
                *cli_argv("evaluate", "--problem", problem.root),
                *("--checkpoint", "all", "--submission", str(submission), "--quiet"),
                *("--output", str(tmp_path / stop.name), "--executor", "docker"),
                *("--image", test_image, "--no-quality"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with ended_with_the_block(process):
            wait_for_tests(process, 1, in_containers(docker_client, owner(process.pid)))
            process.send_signal(stop)
            out, err = process.communicate(timeout=120)
        assert process.returncode == code, out + err
