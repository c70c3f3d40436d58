"""The containers and volumes of a run and of its cache builds: made confined and labelled with
the run and its owner, and removed by name with everything they ran."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException
from docker.models.containers import Container
from docker.types import Mount

from scbench_ci.executors import processes
from scbench_ci.executors.docker.container_layout import (
    CONTAINER_PATH,
    IDLE_USER,
    RUN_DIR,
    RUNNER_GID,
    RUNNER_UID,
    WORKSPACE_DIR,
)
from scbench_ci.foundation.signals import Terminated
from scbench_ci.foundation.version import __version__

RUN_LABEL = "dev.scbench-ci.run"
VERSION_LABEL = "dev.scbench-ci.version"
WORKSPACE_VOLUME_SUFFIX = "-workspace"
TMP_VOLUME_SUFFIX = "-tmp"


def run_name(run_id: str) -> str:
    """The name of the run's container and of its volume."""
    return f"scbench-ci-{run_id}"


def build_name(build_id: str) -> str:
    """The name of a throwaway container that builds or measures something for the runs."""
    return f"scbench-ci-build-{build_id}"


def labels(run_id: str) -> dict[str, str]:
    """Every container, volume and network of a run (or a build) carries its run, its owner and
    the owner's machine."""
    return {
        RUN_LABEL: run_id,
        VERSION_LABEL: __version__,
        processes.OWNER_LABEL: processes.owner(),
        processes.MACHINE_LABEL: processes.machine_id(),
    }


@contextlib.contextmanager
def helper_container(client: docker.DockerClient, name: str, **options: Any) -> Iterator[Container]:
    """A throwaway container of ours (a probe, a builder), created for the block and removed with
    all it ran when the block ends, however it ends: a Ctrl-C or SIGTERM while it is created too
    (the daemon may finish a creation the client gave up on: its removal is tried again until the
    name is found, for a moment)."""
    signalled = False
    try:
        yield client.containers.create(name=name, **options)
    except (KeyboardInterrupt, Terminated):
        signalled = True
        raise
    finally:
        remove_named(client, name, (), after_signal=signalled)


_CREATION_WAIT_S = 2.0
_REMOVAL_WAIT_S = 10.0
_NOT_FOUND, _CONFLICT = 404, 409


def remove_named(
    client: docker.DockerClient, container: str, volumes: Sequence[str], *, after_signal: bool
) -> None:
    """Remove the container `container`, then the volumes `volumes`, by name (a missing one is
    fine). The first Ctrl-C or SIGTERM while they are removed cuts nothing short (signals.py
    ignores the later ones): what it stopped is done again, and it is raised after. After a
    signal (`after_signal`, or one that comes now), what is not found is looked for again for
    a moment: the daemon may still be finishing a creation the client gave up on. A signal that
    cuts a removal short leaves the daemon removing: asked again, it answers that the removal is
    under way (and a volume of the container's, that it is in use) until it ends, so both are
    asked again until then, for a while."""
    steps: list[Callable[[], object]] = [
        partial(client.api.remove_container, container, force=True, v=True),
        *(partial(client.api.remove_volume, volume, force=True) for volume in volumes),
    ]
    waits = {_NOT_FOUND: time.monotonic() + (_CREATION_WAIT_S if after_signal else 0.0)}
    interrupted: BaseException | None = None
    for step in steps:
        while True:
            try:
                try:
                    step()
                    break
                except APIError as error:
                    if error.status_code == _CONFLICT:
                        # It was made (and the volumes before it): once not found, it is removed.
                        waits[_NOT_FOUND] = 0.0
                    if time.monotonic() >= waits.get(error.status_code or 0, 0.0):
                        break  # missing is fine; anything else is left to `scbench-ci cleanup`
                    time.sleep(0.1)
            except (KeyboardInterrupt, Terminated) as signal:
                interrupted = interrupted or signal
                now = time.monotonic()
                waits = {_NOT_FOUND: now + _CREATION_WAIT_S, _CONFLICT: now + _REMOVAL_WAIT_S}
            except (DockerException, requests.RequestException):
                break  # left to `scbench-ci cleanup`, by its labels
    if interrupted is not None:
        raise interrupted


def confinement(memory: str, cpus: float, pids_limit: int) -> dict[str, Any]:
    """The limits and privileges of every container: the run's and the builders'."""
    return {
        "user": IDLE_USER,
        "init": True,
        "working_dir": "/",
        "mem_limit": memory,
        "memswap_limit": memory,
        "nano_cpus": round(cpus * 1e9),
        "pids_limit": pids_limit,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,
    }


@dataclass(frozen=True)
class Containers:
    """Makes and removes the containers of one run (its own and its builders'): on this daemon,
    from this image, confined alike; `folder_limits` gives the size (and files) of their
    folders."""

    client: docker.DockerClient
    image: str
    confinement: Mapping[str, Any]
    folder_limits: Callable[[], str]
    path: str = CONTAINER_PATH
    """The PATH setup and the tests get: a login shell's in the image, as in SCBench's."""
    network: str | None = None
    """The network online containers join (the run's own, network.py, or the environment
    file's); None: Docker's default."""
    blocked: tuple[str, ...] = ()
    """What online containers on `network` cannot reach (network.routed); none: no routes."""

    def create(
        self, name: str, run_id: str, mounts: list[Mount], limits: str, **options: Any
    ) -> Container:
        """A container that idles until it is used (a run's, or a builder's), labelled with the
        run and its owner, confined as every container is; `limits` are its folders'."""
        created: dict[str, Any] = {
            "entrypoint": ["sleep", "infinity"],
            "name": name,
            "labels": labels(run_id),
            # A run's /tmp is a volume of its own (files can be put there); a builder's is not.
            "tmpfs": {}
            if any(m["Target"] == "/tmp" for m in mounts)
            else {"/tmp": f"{limits},exec"},
            "mounts": mounts,
            **self.confinement,
            **options,
        }
        return self.client.containers.create(self.image, **created)

    def create_volumes(
        self, name: str, run_id: str, limits: str, workdir: str = WORKSPACE_DIR
    ) -> list[Mount]:
        """The run's volumes, in memory: the evaluator's folders at /scbench; the workspace at
        `workdir`, the runner's and sticky (the tests user adds entries, but cannot rename the
        runner's); /tmp."""
        for volume, owner in (
            (name, "mode=0755"),
            (name + WORKSPACE_VOLUME_SUFFIX, f"mode=1777,uid={RUNNER_UID},gid={RUNNER_GID}"),
            (name + TMP_VOLUME_SUFFIX, "mode=1777"),
        ):
            self.client.volumes.create(
                volume,
                driver="local",
                driver_opts={
                    "type": "tmpfs",
                    "device": "tmpfs",
                    "o": f"{limits},{owner},nosuid,nodev",
                },
                labels=labels(run_id),
            )
        return [
            Mount(RUN_DIR, name, type="volume"),
            Mount(workdir, name + WORKSPACE_VOLUME_SUFFIX, type="volume"),
            Mount("/tmp", name + TMP_VOLUME_SUFFIX, type="volume"),
        ]

    def remove(self, name: str, *, volumes: bool, after_signal: bool = False) -> None:
        """The container `name` and, when asked, its volumes (by name, in case creating them was
        cut short); `after_signal`: creating it may have been cut short by a signal, and the
        daemon may still finish it (helper_container)."""
        own = (name, name + WORKSPACE_VOLUME_SUFFIX, name + TMP_VOLUME_SUFFIX) if volumes else ()
        remove_named(self.client, name, own, after_signal=after_signal)
