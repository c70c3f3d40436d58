"""Removing what runs left behind: their containers and volumes, found by label, and the cached
environments when asked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import docker
from docker.errors import NotFound
from docker.models.containers import Container
from docker.models.volumes import Volume

from scbench_ci.executors.docker.cache import remove_all
from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.docker.daemon import connect, docker_errors
from scbench_ci.executors.docker.labels import LEGACY_CACHE_VOLUME
from scbench_ci.executors.processes import OWNER_LABEL, parse_owner, running_since, this_host

_CLOCK_SLACK_S = 1.0
"""A process's start time is known to the clock tick, a container's creation to the daemon's
clock: an owner that started up to this much after its container was made is still its owner."""


def remove_leftovers(
    *, owner: str | None, everything: bool, volumes: bool, say: Callable[[str], None]
) -> None:
    """Each container and volume of a run names its owner, the scbench-ci process that made it
    (`<hostname>/<pid>`). By default, what a process of this host that still runs made is a run
    in progress and stays, and so does what a process of another host made (whether it still
    runs cannot be told from here); what has no owner (made by older versions) goes. `owner`
    removes one owner's, running or not; `everything` every run's; `volumes` the cached
    environments too."""
    labels = [RUN_LABEL] if owner is None else [RUN_LABEL, f"{OWNER_LABEL}={owner}"]
    keep = owner is None and not everything
    with docker_errors(), contextlib.closing(connect()) as client:
        removed = _remove_containers(client, labels, keep, say)
        say(f"{removed} container(s) removed")
        _remove_run_volumes(client, labels, keep, say)
        if volumes:
            _remove_cache_volume(client, say)


def _remove_containers(
    client: docker.DockerClient, labels: list[str], keep: bool, say: Callable[[str], None]
) -> int:
    removed = 0
    found: Iterable[Container] = client.containers.list(
        all=True, ignore_removed=True, filters={"label": labels}
    )
    for container in found:
        what = f"container {container.name} ({container.short_id})"
        reason = _in_progress(container.labels, container.attrs.get("Created")) if keep else None
        if reason is not None:
            say(f"kept {what}: {reason}")
            continue
        with contextlib.suppress(NotFound):  # a run that ended meanwhile removed its own
            container.remove(force=True, v=True)
            say(f"removed {what}")
            removed += 1
    return removed


def _remove_run_volumes(
    client: docker.DockerClient, labels: list[str], keep: bool, say: Callable[[str], None]
) -> None:
    """The in-memory volumes of runs that were killed before they could remove their own."""
    found: Iterable[Volume] = client.volumes.list(filters={"label": labels})
    for volume in found:
        attrs = volume.attrs
        reason = _in_progress(attrs.get("Labels") or {}, attrs.get("CreatedAt")) if keep else None
        if reason is not None:
            say(f"kept volume {volume.name}: {reason}")
            continue
        with contextlib.suppress(NotFound):
            volume.remove(force=True)
            say(f"removed volume {volume.name}")


def _in_progress(labels: Mapping[str, str], created: object) -> str | None:
    """Why a run's container or volume is kept by default (None: it is removed)."""
    value = labels.get(OWNER_LABEL, "")
    owner = parse_owner(value)
    if owner is None:
        return None  # made by a version that did not say whose it is
    host, pid = owner
    if host != this_host():
        return (
            f"made by {value}, of another host, whose run may still be in progress "
            f"(`scbench-ci cleanup --owner {value}` removes it)"
        )
    started = running_since(pid)
    if started is None or started > _timestamp(created) + _CLOCK_SLACK_S:
        return None  # its owner has ended (the pid may have been reused since)
    return f"its run is in progress (process {pid} of this host)"


def _timestamp(created: object) -> float:
    """The Docker API's creation time as seconds since the epoch; the far future when it cannot
    be read (the owner is then taken for alive while its pid is)."""
    try:
        return datetime.fromisoformat(str(created)).timestamp()
    except ValueError:
        return float("inf")


def _remove_cache_volume(client: docker.DockerClient, say: Callable[[str], None]) -> None:
    """Every cached environment (a run that uses one keeps it), and the legacy uv cache."""
    try:
        client.volumes.get(LEGACY_CACHE_VOLUME).remove()
    except NotFound:
        say(f"no volume {LEGACY_CACHE_VOLUME}")
    else:
        say(f"removed volume {LEGACY_CACHE_VOLUME}")
    for name, kept in remove_all(client):
        say(f"removed volume {name}" if kept is None else f"kept volume {name}: {kept}")
