"""The suite's Ray cluster (testing/ray_cluster.py): real nodes, real Docker."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest
import ray
from docker.errors import NotFound
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL, this_host
from testing.images import TEST_IMAGE
from testing.ray_cluster import (
    CONTAINER_LABEL,
    LocalRayCluster,
    NodeKind,
    alive_node_ids,
    bridge_gateway,
    connected,
    interface_address,
    local_ray_cluster,
    resource,
    session_members,
)

DEAD_NODE_TIMEOUT_S = 60.0


class _Networks:
    def __init__(self, attrs: dict[str, object]) -> None:
        self.attrs = attrs

    def get(self, name: str) -> _Networks:
        assert name == "bridge"
        return self


class _Daemon:
    def __init__(self, bridge: dict[str, object]) -> None:
        self.networks = _Networks(bridge)


def test_the_bridge_gateway_is_the_bridge_interface_s_address(
    docker_client: docker.DockerClient,
) -> None:
    bridge = docker_client.networks.get("bridge").attrs
    interface = bridge.get("Options", {}).get("com.docker.network.bridge.name", "docker0")
    assert bridge_gateway(docker_client) == interface_address(interface)


def test_a_daemon_that_lists_no_gateway_has_it_read_from_the_interface() -> None:
    """Debian's Docker 20.10 lists only the bridge's subnet in its IPAM config."""
    subnet_only = {
        "IPAM": {"Config": [{"Subnet": "127.0.0.0/8"}]},
        "Options": {"com.docker.network.bridge.name": "lo"},
    }
    assert bridge_gateway(_Daemon(subnet_only)) == "127.0.0.1"  # type: ignore[arg-type]
    listed = {"IPAM": {"Config": [{"Subnet": "10.9.0.0/16", "Gateway": "10.9.0.1"}]}}
    assert bridge_gateway(_Daemon(listed)) == "10.9.0.1"  # type: ignore[arg-type]


@ray.remote(num_cpus=1)
def _node_view(probe: str) -> dict[str, object]:
    """What a task sees where it runs."""
    import docker as node_docker

    return {
        "hostname": socket.gethostname(),
        "sees_probe": Path(probe).exists(),
        "docker": node_docker.from_env().ping(),
        "python": sys.version,
        "ray": ray.__version__,
    }


def _view_from(kind: NodeKind, probe: Path) -> dict[str, object]:
    pinned = _node_view.options(resources={resource(kind): 1})
    return ray.get(pinned.remote(str(probe)), timeout=60)


def test_the_cluster_has_a_head_and_two_workers_alive(ray_cluster: LocalRayCluster) -> None:
    cluster = ray_cluster.cluster
    with connected(cluster):
        assert alive_node_ids() == {node.node_id for node in cluster.nodes}
    assert [node.kind for node in cluster.nodes] == ["head", "host", "container"]


def test_the_container_node_has_its_own_filesystem_and_docker_access(
    ray_cluster: LocalRayCluster, tmp_path: Path
) -> None:
    probe = tmp_path / "on-the-host"
    probe.write_text("")
    with connected(ray_cluster.cluster):
        view = _view_from("container", probe)
    assert view == {
        "hostname": ray_cluster.cluster.node("container").hostname,
        "sees_probe": False,
        "docker": True,
        "python": sys.version,
        "ray": ray.__version__,
    }


def test_the_host_worker_shares_the_hosts_filesystem(
    ray_cluster: LocalRayCluster, tmp_path: Path
) -> None:
    probe = tmp_path / "on-the-host"
    probe.write_text("")
    with connected(ray_cluster.cluster):
        view = _view_from("host", probe)
    assert (view["hostname"], view["sees_probe"]) == (this_host(), True)


# Bounds how soon the head marks a node dead (its health checks on a busy CPU miss).
@pytest.mark.serial
def test_a_killed_node_is_dead_its_task_retried_on_the_host_and_nothing_is_left(
    docker_client: docker.DockerClient,
) -> None:
    """A cluster of its own: it loses a node, then is torn down."""
    token = secrets.token_hex(4)
    # Made by "another host's" process: the cleanup after the kill must leave it.
    labels = {RUN_LABEL: token, OWNER_LABEL: f"elsewhere-{token}/1"}
    decoy = docker_client.containers.run(TEST_IMAGE, ["sleep", "300"], labels=labels, detach=True)
    try:
        with local_ray_cluster(docker_client) as nodes:
            cluster = nodes.cluster
            node = cluster.node("container")
            with connected(cluster):
                ref = _started_on(node.node_id, token)
                _wait_for_start(docker_client, node.hostname, token)
                nodes.kill(node)
                killed = time.monotonic()
                while node.node_id in alive_node_ids():
                    assert time.monotonic() - killed < DEAD_NODE_TIMEOUT_S, "still alive"
                    time.sleep(0.2)
                print(f"the killed node was dead after {time.monotonic() - killed:.1f} s")
                assert ray.get(ref, timeout=60) == this_host()
        _assert_nothing_left(docker_client, nodes)
        decoy.reload()
        assert decoy.status == "running"
    finally:
        decoy.remove(force=True)


@ray.remote(num_cpus=1, max_retries=1)
def _leave_a_container_then_wait(image: str, token: str) -> str:
    """On the container node: leave a container labelled as the Docker executor labels its own
    (owner `<hostname>/<pid>`), then wait to be killed; on a retry elsewhere, return at once."""
    import os

    import docker as node_docker

    from scbench_ci.executors.docker.container import RUN_LABEL as run
    from scbench_ci.executors.processes import OWNER_LABEL as owner

    hostname = socket.gethostname()
    if hostname.startswith("scbench-raynode-"):
        node_docker.from_env().containers.run(
            image,
            ["sleep", "300"],
            name=f"{hostname}-left-{token}",
            labels={run: token, owner: f"{hostname}/{os.getpid()}"},
            detach=True,
        )
        time.sleep(300)
    return hostname


def _started_on(node_id: str, token: str) -> ray.ObjectRef[str]:
    # Soft: once the node is dead, the retry may run elsewhere (the host worker: the head has
    # no CPUs).
    strategy = NodeAffinitySchedulingStrategy(node_id, soft=True)
    task = _leave_a_container_then_wait.options(scheduling_strategy=strategy)
    return task.remote(TEST_IMAGE, token)


def _wait_for_start(client: docker.DockerClient, hostname: str, token: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(NotFound):
            client.containers.get(f"{hostname}-left-{token}")
            return
        time.sleep(0.2)
    raise AssertionError("the task did not start on the container node")


def _assert_nothing_left(client: docker.DockerClient, nodes: LocalRayCluster) -> None:
    for node in nodes.cluster.nodes:
        if isinstance(node.pid_or_container, int):
            assert session_members(node.pid_or_container) == set(), node.kind
    label = f"{CONTAINER_LABEL}={nodes.cluster_id}"
    assert client.containers.list(all=True, ignore_removed=True, filters={"label": label}) == []
    hostname = nodes.cluster.node("container").hostname
    left = client.containers.list(all=True, ignore_removed=True, filters={"label": OWNER_LABEL})
    assert [c.name for c in left if c.labels[OWNER_LABEL].startswith(f"{hostname}/")] == []


def test_a_node_that_does_not_come_up_fails_naming_it_with_its_log(
    docker_client: docker.DockerClient,
) -> None:
    nodes = LocalRayCluster(docker_client, cpus=-1)  # ray start refuses it: the workers exit
    try:
        with pytest.raises(pytest.fail.Exception) as failure:
            nodes.start()
    finally:
        nodes.stop()
    message = str(failure.value)
    # Both workers refuse -1 CPUs; whichever exits first is the one named.
    assert re.match(r"the Ray (host|container) node exited:\n", message), message[:300]
    assert "Resource quantities must be nonnegative" in message, message[-1000:]
    label = f"{CONTAINER_LABEL}={nodes.cluster_id}"
    assert (
        docker_client.containers.list(all=True, ignore_removed=True, filters={"label": label}) == []
    )


def test_a_driver_without_the_cluster_s_token_is_refused(ray_cluster: LocalRayCluster) -> None:
    """An evaluation container on the same bridge reaches the head; without the token it can
    neither join nor send a task."""
    outsider = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    attempt = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ray, sys; ray.init(address=sys.argv[1]); "
            "print(ray.get(ray.remote(lambda: 'ran').remote()))",
            ray_cluster.cluster.address,
        ],
        capture_output=True,
        text=True,
        env={**outsider, "RAY_USAGE_STATS_ENABLED": "0"},
        timeout=120,
    )
    assert attempt.returncode != 0
    assert "ran" not in attempt.stdout
    assert "authentication" in (attempt.stdout + attempt.stderr).lower()
