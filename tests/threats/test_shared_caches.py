"""Caches built from untrusted code are never shared writable.

A problem's test dependency built from source runs its own code while the test runner's
environment is built: here an sdist, served on a Docker network of the test's own (an environment
file's `docker.network`, which is used as it is: the run's own network is cut from the host),
whose setup.py writes a file into every folder it can reach (every mount of its container among
them). Nothing but the
environment built for exactly that requirement list may hold it afterwards: not another cached
environment, not a uv cache that later builds install from.
"""

from __future__ import annotations

import functools
import http.server
import io
import tarfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.docker.cache import CACHE_LABEL, KEY_LABEL
from testing.cache_volumes import remove_cache_volumes
from testing.problems import ProblemFolder
from testing.trees import assert_no_crash, scbench

PLANTED = "scbench-planted"
SETUP_PY = f"""
import os
from setuptools import setup

for line in open("/proc/self/mountinfo"):
    for folder in (line.split()[4], "/uv-cache/runner", os.environ.get("UV_CACHE_DIR", "")):
        try:
            with open(os.path.join(folder, "{PLANTED}"), "w") as planted:
                planted.write("a build ran here")
        except OSError:
            pass

setup(name="plantcache", version="1.0", py_modules=[])
"""


def _sdist(name: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, text in (
            ("setup.py", SETUP_PY),
            (
                "pyproject.toml",
                '[build-system]\nrequires = ["setuptools"]\n'
                'build-backend = "setuptools.build_meta"\n',
            ),
            ("PKG-INFO", "Metadata-Version: 2.1\nName: plantcache\nVersion: 1.0\n"),
        ):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@dataclass(frozen=True)
class Served:
    url: str
    environment: Path
    """An environment file whose `docker.network` is the network it is served on."""


@pytest.fixture
def sdist_url(docker_client: docker.DockerClient, tmp_path: Path) -> Iterator[Served]:
    """The sdist, served on the gateway of a network of the test's own (containers on it reach
    it, nothing else)."""
    network = docker_client.networks.create(
        f"scbench-ci-test-{uuid.uuid4().hex[:12]}", labels={"dev.scbench-ci.test": "sdist"}
    )
    network.reload()
    gateway = network.attrs["IPAM"]["Config"][0]["Gateway"]
    environment = tmp_path / "environment.yaml"
    environment.write_text(f"docker:\n  network: {network.name}\n")
    served = tmp_path / "served"
    served.mkdir()
    (served / "plantcache-1.0.tar.gz").write_bytes(_sdist("plantcache-1.0"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer((gateway, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(
            f"http://{gateway}:{server.server_address[1]}/plantcache-1.0.tar.gz", environment
        )
    finally:
        server.shutdown()
        server.server_close()
        network.remove()


def _volumes_holding(client: docker.DockerClient, image: str, names: list[str]) -> list[str]:
    """Which of these volumes hold a planted file, at any depth: all of them read in one
    container (one each took minutes on a daemon that has kept hundreds of caches)."""
    if not names:
        return []
    output = client.containers.run(
        image,
        [
            "sh",
            "-c",
            'for volume in /volumes/*; do [ -n "$(find "$volume" -name "$0" -print -quit)" ]'
            ' && echo "${volume#/volumes/}"; done; true',
            PLANTED,
        ],
        volumes={
            name: {"bind": f"/volumes/{index}", "mode": "ro"} for index, name in enumerate(names)
        },
        network_mode="none",
        remove=True,
    )
    return [names[int(index)] for index in output.decode().split()]


def test_a_test_dependency_built_from_source_reaches_no_shared_cache(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient, sdist_url: Served
) -> None:
    problem = ProblemFolder(
        tmp_path / "problem",
        {
            "name": "plant",
            "entry_file": "main",
            # A fresh requirement list: its own runner environment is built in this test.
            "test_dependencies": [f"plantcache @ {sdist_url.url}#{uuid.uuid4().hex}"],
            "checkpoints": {"checkpoint_1": {}},
        },
    )
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    planted_before = _volumes_holding(docker_client, test_image, _shared(docker_client))

    run = scbench(
        test_image,
        "evaluate",
        "--problem",
        problem.root,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        submission,
        "--output",
        tmp_path / "out",
        "--environment",
        sdist_url.environment,
    )

    assert_no_crash(run)
    assert run.returncode == 0, run.stdout + run.stderr
    setup_log = (tmp_path / "out/problem/checkpoint_1/setup.log").read_text()
    assert "building the test runner's environment into cache volume" in setup_log
    own = setup_log.split("into cache volume ", 1)[1].split()[0]
    try:
        # No volume runs share holds the build's file now but the environment built for this
        # very requirement list (an earlier version's shared uv cache may hold one from its own
        # runs).
        shared = [name for name in _shared(docker_client) if name != own]
        assert set(_volumes_holding(docker_client, test_image, shared)) <= set(planted_before)
    finally:
        key = docker_client.volumes.get(own).attrs["Labels"][KEY_LABEL]
        remove_cache_volumes(docker_client, key)


def _shared(client: docker.DockerClient) -> list[str]:
    """Every volume runs share: the cached environments, and any uv cache of scbench-ci's."""
    return [
        volume.name
        for volume in client.volumes.list()
        if CACHE_LABEL in (volume.attrs.get("Labels") or {})
        or (volume.name.startswith("scbench-ci") and "cache" in volume.name)
    ]
