"""A real Ray cluster on this machine for the tests of `--engine ray`: a head, a worker on this
host, and a worker in a container of its own (its own filesystem, the host's Docker daemon through
its socket), as the issue asks.

The head binds the docker0 bridge's address so the container node reaches it, and has no CPUs: a
task lands on a worker, so a test can say where it ran. Each node carries a resource named after
its kind (`resource(kind)`) and its hostname is recorded: the Docker executor labels what it makes
`<hostname>/<pid>`, which is how `kill` and the teardown find what a node's processes left.

Every node is started so that its processes are known (its own session on this host, a labelled
container), with the cluster's own temporary folder and ports, and stopped by those: never `ray
stop`, which stops every Ray of the machine. Nothing phones home (usage stats are off in every
process). Failing to start fails the tests, never skips them.

The fixture `ray_cluster` (tests/conftest.py loads this module as a plugin) gives each test module
its own cluster; `connected(cluster)` makes the test process its driver.
"""

# ruff: noqa: E402 (Ray is imported once its authentication is in the environment)

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import docker
import pytest

# Every cluster the suite starts, and this process as their driver, use Ray's token
# authentication, with a token of this test session's: an evaluation container, which reaches the
# head on the bridge, cannot join or send a task. Set before Ray is imported, which reads it then.
AUTHENTICATION = {
    "RAY_AUTH_MODE": "token",
    "RAY_AUTH_TOKEN": os.environ.get("RAY_AUTH_TOKEN") or secrets.token_hex(32),
}
os.environ.update(AUTHENTICATION)

import ray
from docker.errors import DockerException, NotFound
from docker.models.containers import Container

from scbench_ci.executors.docker.cleanup import remove_leftovers
from scbench_ci.executors.processes import OWNER_LABEL, this_host
from testing.ports import free_port, free_ports
from testing.ray_node_image import node_image

NodeKind = Literal["head", "host", "container"]

CONTAINER_LABEL = "dev.scbench-ci.ray-node"
"""Names the cluster (its random id) that started a node container: the teardown removes those."""
NO_USAGE_STATS = {"RAY_USAGE_STATS_ENABLED": "0"}
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 10.0
DEFAULT_CPUS = 2
OBJECT_STORE_BYTES = 256 * 1024 * 1024
SIOCGIFADDR = 0x8915
"""Small on purpose: jobs ship workspaces of kilobytes, and two test sessions share the memory."""
CONTAINER_SHM = "512m"
"""Docker's default /dev/shm (64 MB) is below the object store: Ray would fall back to /tmp."""
_LOG_TAIL_CHARS = 3000
HEALTH_CHECKS = {
    "health_check_period_ms": 1000,
    "health_check_timeout_ms": 1000,
    "health_check_failure_threshold": 3,
}
"""The head marks a silent node dead after a few seconds (with Ray's defaults, 20-30 s here: a
killed container's address drops packets, so each check waits out its timeout)."""


@dataclass(frozen=True)
class RayNode:
    kind: NodeKind
    hostname: str
    node_id: str
    pid_or_container: int | str
    """The pid of its `ray start` (its session and process group), or its container's id."""


@dataclass(frozen=True)
class RayCluster:
    address: str
    """`<ip>:<port>` of the head's GCS: `ray.init(address=...)`."""
    nodes: tuple[RayNode, ...]
    env: Mapping[str, str]
    """What a driver needs in its environment: the cluster's token, no usage stats."""

    def node(self, kind: NodeKind) -> RayNode:
        return next(node for node in self.nodes if node.kind == kind)


def resource(kind: NodeKind) -> str:
    """The custom resource only that node has (a task asking for a little of it runs there)."""
    return f"scbench-node-{kind}"


def bridge_gateway(client: docker.DockerClient) -> str:
    """docker0's address on this host: where a container on the default bridge reaches it.

    Some daemons list it in the bridge network's IPAM config (`Gateway`); others (Debian's 20.10)
    list only the subnet, and then the address is read from the bridge's own interface."""
    attrs = client.networks.get("bridge").attrs
    for entry in attrs["IPAM"]["Config"] or ():
        if entry.get("Gateway"):
            return str(entry["Gateway"])
    interface = attrs.get("Options", {}).get("com.docker.network.bridge.name", "docker0")
    return interface_address(interface)


def interface_address(interface: str) -> str:
    """The IPv4 address of a network interface of this host (SIOCGIFADDR)."""
    request = struct.pack("256s", interface.encode()[:15])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, request)
    return socket.inet_ntoa(answer[20:24])


@contextlib.contextmanager
def connected(cluster: RayCluster) -> Iterator[None]:
    """This process as the cluster's driver, for the block (no usage stats from it either)."""
    with environment(cluster.env):
        ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.WARNING)
        try:
            yield
        finally:
            ray.shutdown()


@contextlib.contextmanager
def environment(variables: Mapping[str, str]) -> Iterator[None]:
    """`variables` in this process's environment for the block (and its children's)."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def alive_node_ids() -> set[str]:
    """The nodes Ray has alive, seen from the connected driver."""
    return {node["NodeID"] for node in _listed_nodes() if node["Alive"]}


def _listed_nodes() -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    return listed


@dataclass
class LocalRayCluster:
    """Starts, kills and stops the nodes of one cluster; `cluster` says what runs."""

    client: docker.DockerClient
    cpus: int = DEFAULT_CPUS
    say: Callable[[str], None] = print
    kinds: tuple[NodeKind, ...] = ("head", "host", "container")
    """The nodes started: the tests' three, or a head and the host worker (the benchmark)."""
    cluster: RayCluster = field(init=False)
    cluster_id: str = field(init=False, default_factory=lambda: secrets.token_hex(4))
    env: dict[str, str] = field(init=False)
    """Every node's and driver's: the token, no usage stats."""
    _temp_dir: Path = field(init=False)
    _processes: dict[NodeKind, subprocess.Popen[bytes]] = field(init=False, default_factory=dict)
    _container: Container | None = field(init=False, default=None)
    _owners: set[str] = field(init=False, default_factory=set)
    """Owner labels of the Docker executor in killed nodes: what they left is removed."""

    def __post_init__(self) -> None:
        # Short: Ray's sockets live below it, and a socket path has at most 107 bytes.
        self._temp_dir = Path(tempfile.mkdtemp(prefix=f"scbray-{self.cluster_id}-", dir="/tmp"))
        self.env = {**NO_USAGE_STATS, **AUTHENTICATION}

    def start(self) -> RayCluster:
        image = node_image(self.client, self.say) if "container" in self.kinds else None
        started = time.monotonic()
        ip = bridge_gateway(self.client)
        address = f"{ip}:{free_port(ip)}"
        self._start_process("head", ["--head", f"--port={address.rpartition(':')[2]}"], ip)
        if not _listening(address, self._processes["head"]):
            self._failure("head", "did not listen")
        self._start_process("host", [f"--address={address}"], ip)
        if image is not None:
            self._start_container(image, address)
        self.cluster = RayCluster(address, self._wait_for_nodes(address), self.env)
        self.say(f"Ray cluster {self.cluster_id} up in {time.monotonic() - started:.1f} s")
        return self.cluster

    def kill(self, node: RayNode) -> None:
        """Kill a worker abruptly, as a machine that goes away: SIGKILL of every process of its
        session, or `docker kill` of its container."""
        if node.kind == "container":
            assert self._container is not None
            self._owners.update(self._container_owners(node.hostname))
            with contextlib.suppress(NotFound):
                self._container.kill()
            return
        process = self._processes[node.kind]
        self._owners.update(f"{node.hostname}/{pid}" for pid in session_members(process.pid))
        _stop_session(process)

    def stop(self) -> None:
        """Stop what this cluster started, and only that; then remove what the Docker executor in
        a killed node left (by its owner labels). Each step runs even if one before it failed."""
        with contextlib.ExitStack() as steps:
            steps.callback(shutil.rmtree, self._temp_dir, ignore_errors=True)
            steps.callback(self._remove_leftovers)
            steps.callback(self._remove_container)
            for process in self._processes.values():
                steps.callback(_stop_session, process)
            self._processes.clear()

    def _remove_container(self) -> None:
        if self._container is None:
            return
        self._owners.update(self._container_owners(self._container.name or ""))
        label = f"{CONTAINER_LABEL}={self.cluster_id}"
        for container in self.client.containers.list(
            all=True, ignore_removed=True, filters={"label": label}
        ):
            with contextlib.suppress(NotFound):
                container.remove(force=True)

    def _remove_leftovers(self) -> None:
        for owner in sorted(self._owners):
            remove_leftovers(
                owner=owner,
                everything=False,
                volumes=False,
                unused_for_s=0.0,
                remove=True,
                say=lambda _: None,
            )

    def _arguments(self, kind: NodeKind, cpus: int) -> list[str]:
        return [
            "--block",
            "--disable-usage-stats",
            f"--num-cpus={cpus}",
            f"--resources={json.dumps({resource(kind): 1000})}",
            f"--object-store-memory={OBJECT_STORE_BYTES}",
            # Workers bind ports the system picks: no range to collide with another cluster's.
            "--min-worker-port=0",
            "--max-worker-port=0",
        ]

    def _start_process(self, kind: NodeKind, arguments: list[str], ip: str) -> None:
        names = (
            "node-manager-port",
            "object-manager-port",
            "metrics-export-port",
            "runtime-env-agent-port",
            "dashboard-agent-listen-port",
            "dashboard-agent-grpc-port",
        )
        ports = [
            f"--{name}={port}" for name, port in zip(names, free_ports(ip, len(names)), strict=True)
        ]
        # The minimal Ray (the extra's) has neither the dashboard nor the client server.
        head = ["--include-dashboard=false"]
        argv = [
            str(Path(sys.executable).with_name("ray")),
            "start",
            *arguments,
            *self._arguments(kind, 0 if kind == "head" else self.cpus),
            f"--node-ip-address={ip}",
            *([f"--system-config={json.dumps(HEALTH_CHECKS)}"] if kind == "head" else []),
            f"--temp-dir={self._temp_dir}",
            *ports,
            *(head if kind == "head" else []),
        ]
        with (self._temp_dir / f"{kind}.log").open("wb") as log:
            self._processes[kind] = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,
            )

    def _start_container(self, image: str, address: str) -> None:
        hostname = f"scbench-raynode-{self.cluster_id}"
        start = " ".join(
            [
                "exec ray start",
                f"--address={address}",
                '--node-ip-address="$(hostname -i)"',
                *(f"'{argument}'" for argument in self._arguments("container", self.cpus)),
            ]
        )
        self._container = self.client.containers.run(
            image,
            ["sh", "-c", start],
            name=hostname,
            hostname=hostname,
            labels={CONTAINER_LABEL: self.cluster_id},
            network="bridge",
            volumes={"/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"}},
            shm_size=CONTAINER_SHM,
            environment=self.env,
            detach=True,
        )

    def _wait_for_nodes(self, address: str) -> tuple[RayNode, ...]:
        deadline = time.monotonic() + START_TIMEOUT_S
        kinds = self.kinds
        with connected(RayCluster(address, (), self.env)):
            while True:
                found = {
                    kind: node
                    for node in _listed_nodes()
                    if node["Alive"]
                    for kind in kinds
                    if resource(kind) in node["Resources"]
                }
                if len(found) == len(kinds):
                    return tuple(self._node(kind, found[kind]) for kind in kinds)
                for kind in kinds:
                    if not self._running(kind):
                        self._failure(kind, "exited")
                if time.monotonic() > deadline:
                    missing = next(kind for kind in kinds if kind not in found)
                    self._failure(missing, f"did not join in {START_TIMEOUT_S:.0f} s")
                time.sleep(0.2)

    def _running(self, kind: NodeKind) -> bool:
        if kind != "container":
            return self._processes[kind].poll() is None
        assert self._container is not None
        self._container.reload()
        return self._container.status in ("created", "running")

    def _node(self, kind: NodeKind, listed: Mapping[str, Any]) -> RayNode:
        if kind == "container":
            assert self._container is not None
            hostname = self._container.name or ""
            return RayNode(kind, hostname, listed["NodeID"], self._container.id or "")
        return RayNode(kind, this_host(), listed["NodeID"], self._processes[kind].pid)

    def _failure(self, kind: NodeKind, what: str) -> None:
        pytest.fail(f"the Ray {kind} node {what}:\n{self._log_tail(kind)}", pytrace=False)

    def _log_tail(self, kind: NodeKind) -> str:
        if kind == "container":
            if self._container is None:
                return "(no container)"
            with contextlib.suppress(DockerException):
                return self._container.logs().decode(errors="replace")[-_LOG_TAIL_CHARS:]
            return "(no log)"
        text = (self._temp_dir / f"{kind}.log").read_text(errors="replace")
        return text[-_LOG_TAIL_CHARS:]

    def _container_owners(self, hostname: str) -> set[str]:
        """Owners of what the Docker executor made from the node container (its hostname is
        the cluster's own, so nothing of another process matches)."""
        found = self.client.containers.list(
            all=True, ignore_removed=True, filters={"label": OWNER_LABEL}
        )
        values = {container.labels.get(OWNER_LABEL, "") for container in found}
        volumes = self.client.volumes.list(filters={"label": OWNER_LABEL})
        values |= {(volume.attrs.get("Labels") or {}).get(OWNER_LABEL, "") for volume in volumes}
        return {value for value in values if value.startswith(f"{hostname}/")}


@contextlib.contextmanager
def local_ray_cluster(
    client: docker.DockerClient,
    cpus: int = DEFAULT_CPUS,
    say: Callable[[str], None] = print,
    kinds: tuple[NodeKind, ...] = ("head", "host", "container"),
) -> Iterator[LocalRayCluster]:
    nodes = LocalRayCluster(client, cpus, say, kinds)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture(scope="module")
def ray_cluster(docker_client: docker.DockerClient) -> Iterator[LocalRayCluster]:
    """A cluster of its own for each test module (a test may kill one of its nodes)."""
    with local_ray_cluster(docker_client) as nodes, environment(nodes.env):
        yield nodes


def _listening(address: str, process: subprocess.Popen[bytes]) -> bool:
    """Whether `address` listens before `process` exits or START_TIMEOUT_S pass."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError):
            socket.create_connection((host, int(port)), timeout=1).close()
            return True
        time.sleep(0.2)
    return False


def session_members(session: int) -> set[int]:
    """The pids of this host's live processes in `session`: a node's processes stay in the
    session of its `ray start` (its workers each have a process group of their own)."""
    members = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            # The command name may hold spaces and ')'; the state and the session follow it.
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[3]) == session and fields[0] not in ("Z", "X"):
                members.add(int(entry.name))
    return members


def _kill_all(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _stop_session(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of a node's session, until none is left (one may be forking), then
    reap its `ray start`. Nothing of the node's state outlives it: it is in the cluster's
    temporary folder."""
    for _ in range(50):
        members = session_members(process.pid)
        if not members:
            break
        _kill_all(members)
        time.sleep(0.1)
    process.wait(timeout=STOP_TIMEOUT_S)
