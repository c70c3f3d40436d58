"""What runs left behind on a Docker daemon, found by label: shown, and removed when asked.

Each container, volume and network of a run names its owner (`<host>/<pid>`, the scbench-ci
process that made it) and its machine (`processes.machine_id()`: this machine's and user's, never
another's, whatever the host names). By default only this machine's are looked at, and what a
process that still runs made (a run in progress) stays. `owner` takes one owner's, running or
not, on any machine; `everything` every run's on the daemon. With `volumes`, the cached
environments not used for `unused_for_s` too (cache_bounds.py), never one a container uses.
Nothing is removed unless `remove` is given: what would be is listed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import docker
from docker.errors import APIError, NotFound
from docker.models.networks import Network
from docker.models.volumes import Volume

from scbench_ci.executors.docker import cache_bounds
from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.docker.daemon import connect, docker_errors, reason, timestamp
from scbench_ci.executors.docker.image_versions import VERSIONS
from scbench_ci.executors.docker.labels import CACHE_LABEL, LEGACY_CACHE_VOLUME
from scbench_ci.executors.processes import (
    MACHINE_LABEL,
    OWNER_LABEL,
    machine_id,
    parse_owner,
    running_since,
    this_host,
)

_CLOCK_SLACK_S = 1.0
"""A process's start time is known to the clock tick, a container's creation to the daemon's
clock: an owner that started up to this much after its container was made is still its owner."""
_STRAY_GRACE_S = 60.0
"""A cache data volume no marker names may be a build's that has not mounted it yet."""


@dataclass
class _Tally:
    remove: bool
    say: Callable[[str], None]
    found: dict[str, int] = field(default_factory=dict)

    def one(self, kind: str, name: str, act: Callable[[], str | None]) -> None:
        """`act` removes it (None, or why it could not); without `remove`, it is only said."""
        if not self.remove:
            self.say(f"would remove {kind} {name}")
            self.found[kind] = self.found.get(kind, 0) + 1
            return
        why = act()
        if why is None:
            self.say(f"removed {kind} {name}")
            self.found[kind] = self.found.get(kind, 0) + 1
        else:
            self.say(f"kept {kind} {name}: {why}")


def remove_leftovers(
    *,
    owner: str | None,
    everything: bool,
    volumes: bool,
    unused_for_s: float,
    remove: bool,
    say: Callable[[str], None],
) -> int:
    """What the module says; the number of things removed (or that would be)."""
    labels = [RUN_LABEL]
    if owner is not None:
        labels.append(f"{OWNER_LABEL}={owner}")
    elif not everything:
        labels.append(f"{MACHINE_LABEL}={machine_id()}")
    keep = owner is None and not everything
    tally = _Tally(remove, say)
    with docker_errors(), contextlib.closing(connect()) as client:
        _containers(client, labels, keep, tally)
        _run_volumes(client, labels, keep, tally)
        _networks(client, labels, keep, tally)
        if keep:
            _others(client, say)
        if volumes:
            _caches(client, unused_for_s, tally)
    total = sum(tally.found.values())
    counts = ", ".join(f"{count} {kind}(s)" for kind, count in tally.found.items()) or "nothing"
    if remove:
        say(f"removed {counts}")
    elif total:
        say(f"{counts} would be removed; nothing was: run it again with --yes to remove them")
    else:
        say("nothing to remove")
    return total


def _containers(client: docker.DockerClient, labels: list[str], keep: bool, tally: _Tally) -> None:
    found = client.containers.list(all=True, ignore_removed=True, filters={"label": labels})
    # A run that ended meanwhile removed its own (NotFound).
    _each(
        tally,
        "container",
        keep,
        [
            (
                f"{container.name} ({container.short_id})",
                container.labels,
                container.attrs.get("Created"),
                partial(container.remove, force=True, v=True),
            )
            for container in found
        ],
    )


def _run_volumes(client: docker.DockerClient, labels: list[str], keep: bool, tally: _Tally) -> None:
    """The in-memory volumes of runs that were killed before they could remove their own."""
    found = client.volumes.list(filters={"label": labels})
    _each(tally, "volume", keep, [_labelled(volume, "CreatedAt") for volume in found])


def _networks(client: docker.DockerClient, labels: list[str], keep: bool, tally: _Tally) -> None:
    """The networks of runs (each scbench-ci process's own)."""
    found = client.networks.list(filters={"label": labels})
    _each(tally, "network", keep, [_labelled(network, "Created") for network in found])


_Found = tuple[str, Mapping[str, str], object, Callable[[], object]]
"""A run's container, volume or network: its name, labels, creation time and removal."""


def _labelled(thing: Volume | Network, created: str) -> _Found:
    attrs = thing.attrs
    return str(thing.name), attrs.get("Labels") or {}, attrs.get(created), thing.remove


def _each(tally: _Tally, kind: str, keep: bool, found: list[_Found]) -> None:
    """Each one removed (or said), but those of runs in progress when `keep`."""
    for name, labels, created, remove in found:
        why = _in_progress(labels, created) if keep else None
        if why is not None:
            tally.say(f"kept {kind} {name}: {why}")
        else:
            tally.one(kind, name, partial(_removed, remove))


def _others(client: docker.DockerClient, say: Callable[[str], None]) -> None:
    """How much of the daemon's is not this machine's: never touched by default."""
    mine = f"{MACHINE_LABEL}={machine_id()}"
    theirs = [
        container
        for container in client.containers.list(
            all=True, ignore_removed=True, filters={"label": [RUN_LABEL]}
        )
        if f"{MACHINE_LABEL}={container.labels.get(MACHINE_LABEL)}" != mine
    ]
    if theirs:
        say(
            f"{len(theirs)} container(s) of runs of other machines (or of versions without "
            "machine labels) are not looked at: `--owner HOST/PID` or `--all` takes them"
        )


def _caches(client: docker.DockerClient, unused_for_s: float, tally: _Tally) -> None:
    """The cached environments not used for `unused_for_s`, then what is left of earlier ones."""
    for environment in cache_bounds.unused_for(cache_bounds.environments(client), unused_for_s):
        size = f", {environment.bytes / 1024**2:.0f} MiB" if environment.bytes else ""
        tally.one(
            "cached environment",
            f"{environment.marker} ({environment.kind}{size})",
            partial(cache_bounds.remove, client, environment),
        )
    for volume in cache_bounds.stray_volumes(client, max(unused_for_s, _STRAY_GRACE_S)):
        tally.one("volume", str(volume.name), partial(_removed, volume.remove))
    for volume in client.volumes.list(filters={"label": f"{CACHE_LABEL}={VERSIONS}"}):
        made = timestamp(volume.attrs.get("CreatedAt")) or 0.0
        if made <= time.time() - unused_for_s:
            tally.one("volume", str(volume.name), partial(_removed, volume.remove))
    with contextlib.suppress(NotFound):
        legacy = client.volumes.get(LEGACY_CACHE_VOLUME)
        tally.one("volume", LEGACY_CACHE_VOLUME, partial(_removed, legacy.remove))


def _removed(remove: Callable[[], object]) -> str | None:
    try:
        remove()
    except NotFound:
        return None
    except APIError as error:
        return "in use" if error.status_code == 409 else reason(error)
    return None


def _in_progress(labels: Mapping[str, str], created: object) -> str | None:
    """Why a run's container, volume or network of this machine is kept by default (None: it
    goes)."""
    value = labels.get(OWNER_LABEL, "")
    owner = parse_owner(value)
    if owner is None:
        return None  # made by a version that did not say whose it is
    host, pid = owner
    if host != this_host():
        # This machine's id on another host: two containers that share a home folder.
        return f"made by {value}, of another host, whose run may still be in progress"
    started = running_since(pid)
    made = timestamp(created)
    if started is None or started > (float("inf") if made is None else made) + _CLOCK_SLACK_S:
        return None  # its owner has ended (the pid may have been reused since)
    return f"its run is in progress (process {pid} of this machine)"
