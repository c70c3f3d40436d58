"""The cache volumes a test built for a key of its own, removed after it: no later run can use
them."""

import time

import docker
from docker.errors import APIError, NotFound

from scbench_ci.executors.docker.cache import KEY_LABEL

IN_USE_WAIT_S = 60.0
"""How long a volume another test is reading (the shared-cache attack mounts every cache volume
for a few seconds) may keep the removal waiting."""


def remove_cache_volumes(client: docker.DockerClient, key: str) -> None:
    """Every cache volume of the key, marker and data; one in use is removed once it is not."""
    deadline = time.monotonic() + IN_USE_WAIT_S
    for volume in client.volumes.list(filters={"label": f"{KEY_LABEL}={key}"}):
        while True:
            try:
                volume.remove(force=True)
                break
            except NotFound:
                break
            except APIError as error:
                if error.status_code != 409 or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
