"""A worker node of the Ray cluster killed in the middle of a run (`--engine ray`): Ray runs its
tasks again on the node that is left, and every checkpoint is judged once, by a run that ended.
A module of its own: the test kills a node of its module's cluster."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import docker

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL
from testing.cli import cli_argv
from testing.problems import waiting_problem
from testing.ray_cluster import LocalRayCluster


def test_a_node_killed_mid_run_leaves_every_checkpoint_judged_once(
    ray_cluster: LocalRayCluster,
    tmp_path: Path,
    submission: Path,
    test_image: str,
    docker_client: docker.DockerClient,
) -> None:
    problem, names = waiting_problem(tmp_path / "problem", checkpoints=4, seconds=20)
    output = tmp_path / "out"
    container_node = ray_cluster.cluster.node("container")
    process = subprocess.Popen(
        [
            *cli_argv("evaluate", "--problem", problem.root),
            *("--checkpoint", "all", "--submission", str(submission), "--output", str(output)),
            *("--engine", "ray", "--ray-address", ray_cluster.cluster.address),
            *("--executor", "docker", "--cpus", "1", "--image", test_image),
            "--no-include-prior-tests",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Two runs in the container node's tests (one CPU each of its two), then it goes.
        deadline = time.monotonic() + 120
        while len(_runs_of(docker_client, container_node.hostname)) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the container node started no runs"
            time.sleep(0.5)
        time.sleep(5)
        ray_cluster.kill(container_node)
        out, err = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0, out + err
    results = json.loads((output / "results.json").read_text())
    checkpoints = results["problems"][0]["checkpoints"]
    assert [c["name"] for c in checkpoints] == names
    assert all(c["passed"] and c["failure"] is None for c in checkpoints)
    assert [[t["status"] for t in c["tests"]] for c in checkpoints] == [["passed"]] * 4
    # Every task's result came from the node that is left: each checkpoint ran to its end there.
    assert "Ray: 4 task(s) on 1 node(s)" in out, out


def _runs_of(client: docker.DockerClient, hostname: str) -> list[str]:
    """The evaluation containers a node's processes made (their owner is `<hostname>/<pid>`)."""
    found = client.containers.list(ignore_removed=True, filters={"label": RUN_LABEL})
    return [
        container.name or ""
        for container in found
        if container.labels.get(OWNER_LABEL, "").startswith(f"{hostname}/")
    ]
