"""How many cached environments a daemon keeps, and which go (cache.py builds and finds them).

A submission chooses one cache key (its requirements.txt's bytes): left alone, every distinct one
would keep a dependency environment forever. So the environments on a daemon are held to a
number (MAX_ENVIRONMENTS) and a size (`--cache-size`): once a build publishes a new one, the
least recently used go until the rest fit, and `scbench-ci cleanup --volumes` removes those
unused for a given time. Neither ever removes one a container mounts (a run in progress, or one
just started): Docker refuses to remove a volume in use, and its marker goes only after its data
volume did.

When an environment was last used is kept in Docker, so that every machine and process that
shares the daemon sees it: a run that uses one makes a label-only volume named by its key and the
hour (`...-used-<kind>-<key>-<hour>`), once an hour per process, and removes that key's older
ones (a build records its first use at once). An environment no record names was last used when
its marker was made. Its size is its
builder's measure (cache.BYTES_LABEL); one made by an earlier version, without it, counts as 0.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import docker
import requests
from docker.errors import APIError, DockerException, NotFound
from docker.models.volumes import Volume

from scbench_ci.executors.docker.cache import (
    BYTES_LABEL,
    DATA_LABEL,
    KEY_LABEL,
    Cached,
)
from scbench_ci.executors.docker.daemon import reason, timestamp
from scbench_ci.executors.docker.labels import CACHE_LABEL

MAX_ENVIRONMENTS = 100
"""Cached environments a daemon keeps at most (each a marker and a data volume)."""
USED = "used"
"""CACHE_LABEL's value on a use record."""
USED_AT_LABEL = "dev.scbench-ci.cache.used-at"
USE_PERIOD_S = 3600
"""A use is recorded to the hour."""
ORPHAN_AGE_S = 6 * 3600
"""A data volume no marker names (a build cut short, or one whose marker was removed while a run
used it) goes once it is this old and unused: a build in progress publishes long before."""

_recorded: set[tuple[str, int]] = set()
_recorded_lock = threading.Lock()


@dataclass(frozen=True)
class Environment:
    """A published cached environment, as the daemon's volumes say."""

    kind: str
    key: str
    marker: str
    data_volume: str
    bytes: int
    last_used: float
    """Seconds since the epoch."""


def record_use(client: docker.DockerClient, used: Iterable[Cached]) -> None:
    """That these environments are used now (once an hour per process and key). Never raises:
    a use that is not recorded only makes the environment look older."""
    hour = int(time.time()) // USE_PERIOD_S
    for cached in used:
        with _recorded_lock:
            if (cached.key, hour) in _recorded:
                continue
            _recorded.add((cached.key, hour))
        with contextlib.suppress(DockerException, requests.RequestException):
            _record(client, cached, hour)


def _record(client: docker.DockerClient, cached: Cached, hour: int) -> None:
    name = f"scbench-ci-cache-{USED}-{cached.kind}-{cached.key[:40]}-{hour}"
    client.volumes.create(
        name,
        driver="local",
        labels={CACHE_LABEL: USED, KEY_LABEL: cached.key, USED_AT_LABEL: str(hour * USE_PERIOD_S)},
    )
    for older in client.volumes.list(filters={"label": [f"{KEY_LABEL}={cached.key}"]}):
        labels = older.attrs.get("Labels") or {}
        if labels.get(CACHE_LABEL) == USED and older.name != name:
            _remove(older)


def environments(client: docker.DockerClient) -> list[Environment]:
    """Every published environment on the daemon, the most recently used first."""
    volumes = client.volumes.list(filters={"label": CACHE_LABEL})
    used: dict[str, float] = {}
    for volume in volumes:
        labels = volume.attrs.get("Labels") or {}
        if labels.get(CACHE_LABEL) == USED:
            at = _number(labels.get(USED_AT_LABEL))
            key = labels.get(KEY_LABEL, "")
            used[key] = max(used.get(key, 0.0), at)
    found = []
    for volume in volumes:
        labels = volume.attrs.get("Labels") or {}
        if DATA_LABEL not in labels:
            continue
        key = labels.get(KEY_LABEL, "")
        made = _created(volume.attrs.get("CreatedAt"))
        found.append(
            Environment(
                kind=labels.get(CACHE_LABEL, ""),
                key=key,
                marker=str(volume.name),
                data_volume=labels[DATA_LABEL],
                bytes=int(_number(labels.get(BYTES_LABEL))),
                last_used=used.get(key, made),
            )
        )
    return sorted(found, key=lambda environment: -environment.last_used)


def over_bounds(found: list[Environment], max_bytes: int) -> list[Environment]:
    """The least recently used environments that do not fit in the bounds (`found` the most
    recently used first, at most MAX_ENVIRONMENTS and `max_bytes`), the least recently used
    first."""
    max_count = MAX_ENVIRONMENTS
    kept_bytes = kept = 0
    over = []
    for environment in found:
        if kept < max_count and kept_bytes + environment.bytes <= max_bytes:
            kept += 1
            kept_bytes += environment.bytes
        else:
            over.append(environment)
    return over[::-1]


def unused_for(found: list[Environment], seconds: float) -> list[Environment]:
    """The environments not used for `seconds`, the least recently used first."""
    since = time.time() - seconds
    return [environment for environment in found if environment.last_used <= since][::-1]


def remove(client: docker.DockerClient, environment: Environment) -> str | None:
    """Remove an environment: its data volume first, unless a container uses it (then nothing is
    removed, and this says why); then its marker and its use records. None once removed."""
    try:
        client.api.remove_volume(environment.data_volume)
    except NotFound:
        pass
    except APIError as error:
        if error.status_code == 409:
            return "a container uses it (a run in progress)"
        return reason(error)
    with contextlib.suppress(NotFound, APIError):
        client.api.remove_volume(environment.marker)
    for record in client.volumes.list(filters={"label": [f"{KEY_LABEL}={environment.key}"]}):
        if (record.attrs.get("Labels") or {}).get(CACHE_LABEL) == USED:
            _remove(record)
    return None


def stray_volumes(client: docker.DockerClient, older_than_s: float) -> list[Volume]:
    """Data volumes no marker names and use records of no environment, older than
    `older_than_s` (a build in progress has published long before `ORPHAN_AGE_S`)."""
    volumes = client.volumes.list(filters={"label": CACHE_LABEL})
    named = set()
    keys = set()
    for volume in volumes:
        labels = volume.attrs.get("Labels") or {}
        if DATA_LABEL in labels:
            named.add(labels[DATA_LABEL])
            keys.add(labels.get(KEY_LABEL))
    before = time.time() - older_than_s
    stray = []
    for volume in volumes:
        labels = volume.attrs.get("Labels") or {}
        if DATA_LABEL in labels or _created(volume.attrs.get("CreatedAt")) > before:
            continue
        if labels.get(CACHE_LABEL) == USED:
            if labels.get(KEY_LABEL) not in keys:
                stray.append(volume)
        elif KEY_LABEL in labels and volume.name not in named:
            stray.append(volume)
    return stray


def hold_to_bounds(
    client: docker.DockerClient, max_bytes: int, note: Callable[[str], None]
) -> None:
    """Once a new environment is published: the least recently used go until the rest fit, and
    strays old enough. Never raises: the caches are kept as they are when Docker fails."""
    with contextlib.suppress(DockerException, requests.RequestException):
        for environment in over_bounds(environments(client), max_bytes):
            why = remove(client, environment)
            if why is None:
                note(
                    f"cache volume {environment.marker} removed: the least recently used past "
                    f"the caches' bounds ({MAX_ENVIRONMENTS} environments, {max_bytes} bytes)"
                )
        for volume in stray_volumes(client, ORPHAN_AGE_S):
            _remove(volume)


def _remove(volume: Volume) -> None:
    with contextlib.suppress(NotFound, APIError, requests.RequestException):
        volume.remove()


def _number(text: str | None) -> float:
    """A label's number; 0 for what is none (labels are anyone's with the daemon's socket)."""
    try:
        value = float(text or 0)
    except ValueError:
        return 0.0
    return value if math.isfinite(value) and value > 0 else 0.0


def _created(text: object) -> float:
    return timestamp(text) or 0.0
