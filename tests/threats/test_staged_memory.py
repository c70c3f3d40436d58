"""Everything a submission brings counts toward `--memory`: what it holds on the daemon, watched
from outside while it runs (testing/held_memory.py), stays within the limit plus MARGIN.

Its files are unpacked by the Docker daemon into the run's in-memory folders, where the daemon's
cgroup, not the container's, is charged for them: before, under `--memory 300m`, a submission of
1,200 MiB of files held 2,000 MiB there (the workspace and the quality measure's copy, each cut at
the 1 GiB staging cap) while the container's cgroup counted 36 MiB. Now what they take is taken
off the container's limit, and a workspace that leaves too little is refused before it is copied.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import docker
import pytest

from testing.cli import cli_argv
from testing.held_memory import MIB, Held, evaluate_watched
from testing.problems import ProblemFolder

MEMORY_MIB = 300
MARGIN_MIB = 16
"""What a run may hold beyond its limit: the kernel's own memory for its entries beyond the
estimate's 1 KiB each, the daemon's buffers in transit."""
TESTS = """
import subprocess


def test_runs_the_submission(entrypoint_argv):
    assert subprocess.run(entrypoint_argv).returncode == 0
"""
WRITES = """
chunk = b"x" * (8 * 1024 * 1024)
with open("written.bin", "wb") as file:
    for _ in range(150):
        file.write(chunk)
print("wrote 1,200 MiB")
"""


@pytest.fixture
def problem(tmp_path: Path) -> ProblemFolder:
    folder = ProblemFolder(
        tmp_path / "demo",
        {"name": "demo", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
    )
    folder.write("tests/test_checkpoint_1.py", TESTS)
    return folder


def watched(
    client: docker.DockerClient, problem: ProblemFolder, submission: Path, image: str
) -> tuple[dict[str, Any], Held]:
    output = submission.parent / f"out-{submission.name}"
    argv = [
        *cli_argv("evaluate"),
        "--problem", str(problem.root), "--checkpoint", "checkpoint_1",
        "--submission", str(submission), "--output", str(output),
        "--image", image, "--memory", f"{MEMORY_MIB}m", "--jobs", "1", "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "XDG_CACHE_HOME": str(submission.parent / "cache")}
    run, held = evaluate_watched(client, argv, env)
    assert run.returncode == 1 or "passed" in run.stdout, run.stdout + run.stderr
    results = json.loads((output / "results.json").read_text())
    return results["problems"][0]["checkpoints"][0], held


def brought(folder: Path, mib: int) -> Path:
    folder.mkdir()
    (folder / "main.py").write_text("print('ok')\n")
    for number in range(-(-mib // 200)):
        with (folder / f"data{number}.bin").open("wb") as file:
            file.truncate(min(200, mib - 200 * number) * MIB)
    return folder


def test_files_a_submission_brings_are_held_within_its_memory_limit(
    docker_client: docker.DockerClient, test_image: str, problem: ProblemFolder, tmp_path: Path
) -> None:
    too_many, held = watched(
        docker_client, problem, brought(tmp_path / "too_many", 1200), test_image
    )
    assert too_many["failure"]["kind"] == "resources", too_many
    assert "more than the memory limit (300m) leaves for them" in too_many["failure"]["message"]
    assert held.folders < MARGIN_MIB * MIB, held
    # Files that fit: the folders hold them, and the limit is what is left.
    fitting, held = watched(docker_client, problem, brought(tmp_path / "fitting", 60), test_image)
    assert fitting["failure"] is None and fitting["passed"], fitting
    assert held.folders >= 120 * MIB, held  # 60 MiB for the tests, 60 for the quality measure
    assert held.limit is not None and held.limit + held.folders <= (MEMORY_MIB + MARGIN_MIB) * MIB


def test_files_a_submission_writes_are_held_within_its_memory_limit(
    docker_client: docker.DockerClient, test_image: str, problem: ProblemFolder, tmp_path: Path
) -> None:
    submission = tmp_path / "writes"
    submission.mkdir()
    (submission / "main.py").write_text(WRITES)
    writes, held = watched(docker_client, problem, submission, test_image)
    assert writes["failure"]["kind"] == "resources", writes
    assert "the memory limit (300m) was reached" in writes["failure"]["message"]
    # What it wrote is in its folders, and counted by its cgroup: each within the limit.
    assert held.folders <= (MEMORY_MIB + MARGIN_MIB) * MIB, held
    assert held.cgroup <= (MEMORY_MIB + MARGIN_MIB) * MIB, held
