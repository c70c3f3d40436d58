"""How much memory a run of `scbench-ci evaluate` holds on the Docker daemon while it runs, watched
from outside: its container's cgroup (what `--memory` limits) and its in-memory folders (tmpfs
volumes: the workspace, /tmp, the evaluator's folders), sampled every SAMPLE_S.

What the daemon unpacks into those folders (the staged workspace) is charged to the daemon's
cgroup, not the container's; what the container writes there is charged to the container. So a
run holds at most its cgroup's usage plus its folders' (`bound`: what the container wrote there
is counted twice).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import docker
import requests
from docker.errors import APIError

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL, owner

SAMPLE_S = 0.2
MIB = 1024**2


@dataclass
class Held:
    cgroup: int = 0
    """The most the run's container's cgroup counted (memory.usage, page cache included)."""
    folders: int = 0
    """The most its in-memory folders held together."""
    limit: int | None = None
    """The lowest memory limit its container had."""
    samples: int = 0
    runs: set[str] = field(default_factory=set)

    @property
    def bound(self) -> int:
        """The most the run can have held: its cgroup's most plus its folders' most."""
        return self.cgroup + self.folders

    def __str__(self) -> str:
        return (
            f"cgroup at most {self.cgroup / MIB:.0f} MiB, in-memory folders at most "
            f"{self.folders / MIB:.0f} MiB, memory limit at least {(self.limit or 0) / MIB:.0f} "
            f"MiB ({self.samples} samples of {len(self.runs)} container(s))"
        )


def evaluate_watched(
    client: docker.DockerClient, argv: Sequence[str], env: dict[str, str], timeout: float = 600
) -> tuple[subprocess.CompletedProcess[str], Held]:
    """Run the CLI (`argv`) and watch what the containers it makes hold until it ends."""
    held = Held()
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        done = threading.Event()
        watcher = threading.Thread(target=_watch, args=(client, process.pid, held, done))
        watcher.start()
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        finally:
            done.set()
            watcher.join()
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr), held


def _watch(client: docker.DockerClient, pid: int, held: Held, done: threading.Event) -> None:
    label = f"{OWNER_LABEL}={owner(pid)}"
    while not done.is_set():
        for container in _runs(client, label):
            with contextlib.suppress(docker.errors.DockerException, requests.RequestException):
                _sample(container, held)
        time.sleep(SAMPLE_S)


def _runs(client: docker.DockerClient, label: str) -> Iterator[docker.models.containers.Container]:
    with contextlib.suppress(APIError):
        for container in client.containers.list(
            ignore_removed=True, filters={"label": [RUN_LABEL, label]}
        ):
            if not container.name.startswith("scbench-ci-build-"):
                yield container


def _sample(container: docker.models.containers.Container, held: Held) -> None:
    stats = container.stats(stream=False, one_shot=True)
    usage = int(stats.get("memory_stats", {}).get("usage") or 0)
    code, output = container.exec_run(
        ["df", "-P", "-k", "/workspace", "/scbench", "/tmp"], user="65534:65534"
    )
    if code != 0:
        return
    lines = output.decode(errors="replace").splitlines()[1:]
    folders = sum(int(line.split()[2]) * 1024 for line in lines if len(line.split()) > 2)
    container.reload()
    limit = int(container.attrs["HostConfig"].get("Memory") or 0)
    held.samples += 1
    held.runs.add(str(container.id))
    held.cgroup = max(held.cgroup, usage)
    held.folders = max(held.folders, folders)
    held.limit = min(held.limit or limit, limit)
