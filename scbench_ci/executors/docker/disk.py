"""How large a run's folders are: the free space of the disk Docker keeps its data on (measured
once a minute at most), and the tmpfs options of a size."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import docker

from scbench_ci.executors.docker.container import build_name, helper_container, labels
from scbench_ci.foundation.errors import InfrastructureError

MIN_DISK_BYTES = 64 * 1024**2
_FREE_DISK_TTL_S = 60.0
INODES_PER_MIB = 128
MIN_INODES = 16384


def tmpfs_limits(size: int) -> str:
    """The size and the number of files of an in-memory folder of `size` bytes."""
    return f"size={size},nr_inodes={max(MIN_INODES, size // 1024**2 * INODES_PER_MIB)}"


class FreeDisk:
    """The free space of the disk Docker keeps its data on: from its folder when this machine
    is the daemon's, else as a container's root file system reports it (measured with the run's
    image); again once a minute at most."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._measured: tuple[float, int] | None = None

    def measure(
        self, client: docker.DockerClient, image: str, confinement: Mapping[str, Any]
    ) -> int:
        with self._lock:
            if self._measured is None or time.monotonic() - self._measured[0] > _FREE_DISK_TTL_S:
                self._measured = (time.monotonic(), _free_disk_space(client, image, confinement))
            return self._measured[1]


def _free_disk_space(
    client: docker.DockerClient, image: str, confinement: Mapping[str, Any]
) -> int:
    root = client.info().get("DockerRootDir")
    if isinstance(root, str) and os.path.isdir(root):
        status = os.statvfs(root)
        return max(status.f_bavail * status.f_frsize, MIN_DISK_BYTES)
    build_id = uuid.uuid4().hex
    with helper_container(
        client,
        build_name(build_id),
        image=image,
        command=["df", "-P", "-k", "/"],
        entrypoint=[],
        labels=labels(build_id),
        network_mode="none",
        **{**confinement, "init": False},
    ) as container:
        container.start()
        container.wait()
        output = container.logs(stdout=True, stderr=False)
    lines = bytes(output).decode(errors="replace").split("\n")
    fields = lines[1].split() if len(lines) > 1 else []
    if len(fields) < 4 or not fields[3].isdigit():
        raise InfrastructureError(f"the image {image} could not tell Docker's free disk space")
    return max(int(fields[3]) * 1024, MIN_DISK_BYTES)
