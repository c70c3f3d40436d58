"""`scbench-ci cleanup`: remove the containers scbench-ci runs left behind (found by label)."""

from __future__ import annotations

import argparse
import contextlib

import docker
from docker.errors import NotFound

from scbench_ci.errors import ExitCode
from scbench_ci.executors.docker import CACHE_VOLUME, RUN_LABEL, connect, docker_errors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--volumes",
        action="store_true",
        help=f"also remove the uv cache volume ({CACHE_VOLUME}) the runs share",
    )


def run(args: argparse.Namespace) -> int:
    with docker_errors(), contextlib.closing(connect()) as client:
        removed = _remove_containers(client)
        print(f"{removed} container(s) removed")
        _remove_run_volumes(client)
        if args.volumes:
            _remove_cache_volume(client)
    return ExitCode.PASSED


def _remove_containers(client: docker.DockerClient) -> int:
    removed = 0
    for container in client.containers.list(all=True, filters={"label": RUN_LABEL}):
        with contextlib.suppress(NotFound):  # a run that ended meanwhile removed its own
            container.remove(force=True, v=True)
            print(f"removed container {container.name} ({container.short_id})")
            removed += 1
    return removed


def _remove_run_volumes(client: docker.DockerClient) -> None:
    """The in-memory volumes of runs that were killed before they could remove their own."""
    for volume in client.volumes.list(filters={"label": RUN_LABEL}):
        with contextlib.suppress(NotFound):
            volume.remove(force=True)
            print(f"removed volume {volume.name}")


def _remove_cache_volume(client: docker.DockerClient) -> None:
    try:
        client.volumes.get(CACHE_VOLUME).remove()
    except NotFound:
        print(f"no volume {CACHE_VOLUME}")
    else:
        print(f"removed volume {CACHE_VOLUME}")
