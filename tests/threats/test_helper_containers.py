"""Every helper container (the free-disk probe, the image's versions probe, a cache builder, a run's
container made ahead) is removed whenever a Ctrl-C lands: a process that makes one after another
is interrupted at moments spread over their making, running and removal, and nothing it owns is
left on the daemon. Before, the free-disk probe (`containers.run(remove=True)`) left its container
whenever the signal came while it ran.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.processes import OWNER_LABEL, owner
from testing.subprocesses import ended_with_the_block

HELPERS = {
    "free-disk probe": """
from scbench_ci.executors.docker import disk
from scbench_ci.executors.docker.container import confinement
disk.os.path.isdir = lambda path: False  # as from a container that talks to the host's daemon
while True:
    disk._free_disk_space(client, IMAGE, confinement("256m", 1.0, 64))
""",
    "versions probe": """
from scbench_ci.executors.docker import image_versions
image_id = client.images.get(IMAGE).id
while True:
    image_versions._probe(client, image_id, "/usr/local/bin:/usr/bin:/bin")
""",
    "cache builder": """
from scbench_ci.executors.docker.cache_build import _builder
from scbench_ci.executors.docker.container import Containers, confinement
containers = Containers(client, IMAGE, confinement("256m", 1.0, 64), lambda: "size=16m")
while True:
    with _builder(containers, [], run_dir=True, offline=True) as container:
        container.start()
""",
    # As the engine runs it: on a signal it cancels the executor and closes it (engines/pool.py),
    # which removes what of this process's a signal cut off from its own removal (a container
    # `prepare` returned just before the signal, which the caller never got to name).
    "run container made ahead": """
from scbench_ci.executors.docker.cache_use import Caches
from scbench_ci.executors.docker.container import Containers, confinement
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.container_layout import SCBENCH_PLACE
from scbench_ci.executors.docker.pool import Shape, prepare
from scbench_ci.executors.docker.settings import DockerSettings
executor = DockerExecutor(DockerSettings(image=IMAGE))
containers = Containers(client, IMAGE, confinement("256m", 1.0, 64), lambda: "size=16m")
shape = Shape(IMAGE, "", "/usr/bin:/bin", Caches(), "none", SCBENCH_PLACE, False)
try:
    while True:
        containers.remove(prepare(containers, shape).name, volumes=True)
except BaseException:
    executor.cancel()
    executor.close()
    raise
""",
}
PRELUDE = """
import sys
import docker
from scbench_ci.foundation.signals import stops_raised
IMAGE = sys.argv[1]
client = docker.from_env()
print("ready", flush=True)
"""
DELAYS_S = (0.05, 0.2, 0.4, 0.8, 1.2)


def script(helper: str) -> str:
    """The helper's code in a process that takes signals as the CLI does."""
    return PRELUDE + "with stops_raised():\n" + textwrap.indent(helper, "    ")


@pytest.mark.parametrize("helper", list(HELPERS))
def test_a_helper_container_is_removed_whenever_a_signal_lands(
    helper: str, docker_client: docker.DockerClient, test_image: str, tmp_path: Path
) -> None:
    left = {}
    for delay in DELAYS_S:
        process = subprocess.Popen(
            [sys.executable, "-c", script(HELPERS[helper]), test_image],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        )
        with ended_with_the_block(process):
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n", process.communicate()
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=60)
        assert "signals.Interrupted" in stderr, stderr
        time.sleep(0.5)  # a creation the daemon was finishing
        label = {"label": f"{OWNER_LABEL}={owner(process.pid)}"}
        found = [
            c.name
            for c in docker_client.containers.list(all=True, ignore_removed=True, filters=label)
        ]
        found += [str(v.name) for v in docker_client.volumes.list(filters=label)]
        if found:
            left[delay] = found
    _remove(docker_client, left)
    assert left == {}, f"{helper}: left after a Ctrl-C (by delay, seconds): {left}"


def _remove(client: docker.DockerClient, left: dict[float, list[str]]) -> None:
    """What the code under test left, removed so that the suite leaves nothing."""
    for names in left.values():
        for name in names:
            for remove in (client.api.remove_container, client.api.remove_volume):
                with contextlib.suppress(docker.errors.APIError):
                    remove(name, force=True)
