"""The cached environments on a daemon are held to their bounds, least recently used first, and
`cleanup --volumes` removes those unused for a given time; neither ever removes one a container
mounts (cache_bounds.py). Each test's environments carry a cache label of its own: the daemon's
real caches are other runs' business."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import docker
import pytest

from scbench_ci.commands.cleanup import run_cleanup
from scbench_ci.executors.docker import cache_bounds
from scbench_ci.executors.docker import cleanup as docker_cleanup
from scbench_ci.executors.docker.cache import (
    BYTES_LABEL,
    DATA_LABEL,
    DEPENDENCIES,
    KEY_LABEL,
    Cached,
    cache_key,
    marker_name,
)
from scbench_ci.executors.docker.cache_bounds import USED, USED_AT_LABEL
from scbench_ci.options import CleanupOptions

MIB = 1024**2
HOUR = 3600


@dataclass(frozen=True)
class Fake:
    """An environment as a build publishes it (a marker naming a data volume), used `age_s`
    ago."""

    key: str
    marker: str
    data: str


@pytest.fixture
def label(monkeypatch: pytest.MonkeyPatch, docker_client: docker.DockerClient) -> Iterator[str]:
    """The test's own cache label (and machine, and legacy volume name), and its volumes removed
    after it."""
    name = f"dev.scbench-ci.test-cache-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(cache_bounds, "CACHE_LABEL", name)
    monkeypatch.setattr(docker_cleanup, "CACHE_LABEL", name)
    monkeypatch.setattr(docker_cleanup, "machine_id", lambda: f"test-{name}")
    monkeypatch.setattr(docker_cleanup, "LEGACY_CACHE_VOLUME", f"scbench-ci-test-{uuid.uuid4()}")
    yield name
    for volume in docker_client.volumes.list(filters={"label": name}):
        volume.remove(force=True)


def fake(client: docker.DockerClient, label: str, size: int, used_ago_s: float | None) -> Fake:
    key = cache_key(DEPENDENCIES, test=uuid.uuid4().hex)
    data = f"scbench-ci-test-data-{uuid.uuid4().hex[:12]}"
    client.volumes.create(data, labels={label: DEPENDENCIES, KEY_LABEL: key})
    marker = marker_name(DEPENDENCIES, key)
    client.volumes.create(
        marker,
        labels={
            label: DEPENDENCIES,
            KEY_LABEL: key,
            DATA_LABEL: data,
            BYTES_LABEL: str(size),
        },
    )
    if used_ago_s is not None:
        client.volumes.create(
            f"scbench-ci-test-used-{key[:40]}",
            labels={label: USED, KEY_LABEL: key, USED_AT_LABEL: str(time.time() - used_ago_s)},
        )
    return Fake(key, marker, data)


def present(client: docker.DockerClient, name: str) -> bool:
    try:
        client.volumes.get(name)
    except docker.errors.NotFound:
        return False
    return True


def test_which_environments_are_past_the_bounds_and_unused() -> None:
    now = time.time()
    found = [
        cache_bounds.Environment(DEPENDENCIES, f"k{n}", f"m{n}", f"d{n}", 100 * MIB, now - n * HOUR)
        for n in range(4)
    ]  # the most recently used first, as `environments` gives them
    assert [e.key for e in cache_bounds.over_bounds(found, 250 * MIB)] == ["k3", "k2"]
    assert [e.key for e in cache_bounds.over_bounds(found, 10 * 1024 * MIB)] == []
    assert [e.key for e in cache_bounds.unused_for(found, 1.5 * HOUR)] == ["k3", "k2"]
    assert [e.key for e in cache_bounds.unused_for(found, 0)] == ["k3", "k2", "k1", "k0"]


def test_past_the_bounds_the_least_recently_used_go_but_never_one_in_use(
    docker_client: docker.DockerClient, test_image: str, label: str
) -> None:
    newest = fake(docker_client, label, 300 * MIB, used_ago_s=60)
    older = fake(docker_client, label, 300 * MIB, used_ago_s=2 * HOUR)
    oldest_in_use = fake(docker_client, label, 300 * MIB, used_ago_s=3 * HOUR)
    oldest = fake(docker_client, label, 300 * MIB, used_ago_s=4 * HOUR)
    user = docker_client.containers.create(
        test_image, ["true"], volumes={oldest_in_use.data: {"bind": "/x", "mode": "ro"}}
    )
    said: list[str] = []
    try:
        cache_bounds.hold_to_bounds(docker_client, 700 * MIB, said.append)
        # Two fit in 700 MiB: the most recently used. Of the others, the one in use stays.
        assert present(docker_client, newest.marker) and present(docker_client, older.marker)
        assert present(docker_client, oldest_in_use.marker)
        assert present(docker_client, oldest_in_use.data)
        assert not present(docker_client, oldest.marker)
        assert not present(docker_client, oldest.data)
        assert [line.split()[2] for line in said] == [oldest.marker]
    finally:
        user.remove(force=True)


def test_the_number_of_environments_is_bounded_too(
    docker_client: docker.DockerClient, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_bounds, "MAX_ENVIRONMENTS", 2)
    made = [fake(docker_client, label, 0, used_ago_s=hours * HOUR) for hours in (1, 2, 3)]
    cache_bounds.hold_to_bounds(docker_client, 10 * 1024 * MIB, print)
    assert [present(docker_client, one.marker) for one in made] == [True, True, False]


def test_a_use_is_recorded_once_an_hour_and_replaces_the_older_records(
    docker_client: docker.DockerClient, label: str
) -> None:
    environment = fake(docker_client, label, MIB, used_ago_s=5 * HOUR)
    cached = Cached(DEPENDENCIES, environment.key, environment.marker, environment.data, ())
    cache_bounds.record_use(docker_client, [cached])
    cache_bounds.record_use(docker_client, [cached])
    records = [
        volume
        for volume in docker_client.volumes.list(filters={"label": f"{KEY_LABEL}={cached.key}"})
        if volume.attrs["Labels"][label] == USED
    ]
    assert len(records) == 1
    (found,) = [e for e in cache_bounds.environments(docker_client) if e.key == cached.key]
    assert time.time() - found.last_used < HOUR


def test_cleanup_lists_then_removes_caches_unused_for_a_time_never_one_in_use(
    docker_client: docker.DockerClient,
    test_image: str,
    label: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    recent = fake(docker_client, label, MIB, used_ago_s=10 * 60)
    stale = fake(docker_client, label, 53 * MIB, used_ago_s=3 * 24 * HOUR)
    stale_in_use = fake(docker_client, label, MIB, used_ago_s=3 * 24 * HOUR)
    user = docker_client.containers.create(
        test_image, ["true"], volumes={stale_in_use.data: {"bind": "/x", "mode": "ro"}}
    )
    try:
        options = CleanupOptions(volumes=True, unused_for_s=24 * HOUR)
        assert run_cleanup(options) == 0
        said = capsys.readouterr().out
        assert f"would remove cached environment {stale.marker} (dependencies, 53 MiB)" in said
        assert recent.marker not in said
        assert present(docker_client, stale.marker)

        assert run_cleanup(CleanupOptions(yes=True, volumes=True, unused_for_s=24 * HOUR)) == 0

        said = capsys.readouterr().out
        assert f"removed cached environment {stale.marker}" in said
        assert f"kept cached environment {stale_in_use.marker}" in said
        assert "a container uses it" in said
        assert not present(docker_client, stale.marker)
        assert not present(docker_client, stale.data)
        assert present(docker_client, stale_in_use.data)
        assert present(docker_client, recent.marker)

        # `--unused-for 0` empties every one no container uses.
        assert run_cleanup(CleanupOptions(yes=True, volumes=True, unused_for_s=0)) == 0
        assert not present(docker_client, recent.marker)
        assert present(docker_client, stale_in_use.marker)
    finally:
        user.remove(force=True)
