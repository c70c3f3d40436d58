"""An exec's output against the real daemon: every byte, when the client reads the response's
headers late (a busy machine), and however long the command is silent."""

from __future__ import annotations

import http.client
import re
import socket
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound
from docker.models.containers import Container

from scbench_ci.executors.docker import exec_output

SCRIPT = "echo first; echo to-stderr >&2; echo second"
OUTPUT = (b"first\nsecond\n", b"to-stderr\n")


@pytest.fixture
def container(docker_client: docker.DockerClient, test_image: str) -> Iterator[Container]:
    container = docker_client.containers.run(test_image, ["sleep", "infinity"], detach=True)
    try:
        yield container
    finally:
        container.remove(force=True)


@pytest.fixture
def late_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client reads the headers of a started exec's response (an upgraded connection) only
    once the command's whole output is in the connection too, as a busy client does at random."""
    begin = http.client.HTTPResponse.begin

    def begin_late(response: http.client.HTTPResponse) -> None:
        connection: socket.socket = response.fp.raw._sock  # type: ignore[attr-defined]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            arrived = connection.recv(1 << 20, socket.MSG_PEEK)
            if not arrived.startswith(b"HTTP/1.1 101 ") or all(
                line in arrived for line in (b"second\n", b"to-stderr\n")
            ):
                break
            time.sleep(0.01)
        begin(response)

    monkeypatch.setattr(http.client.HTTPResponse, "begin", begin_late)


def output_read_late(
    client: docker.APIClient, container: Container, start: Callable[[str], object]
) -> object:
    exec_id = client.exec_create(container.id, ["sh", "-c", SCRIPT])["Id"]
    return start(exec_id)


@pytest.mark.usefixtures("late_client")
def test_output_written_before_the_headers_are_read_is_kept(
    docker_client: docker.DockerClient, container: Container
) -> None:
    client = docker_client.api
    assert output_read_late(client, container, partial(exec_output.captured, client)) == OUTPUT
    # docker-py's own reading loses it: the test reaches the race.
    assert output_read_late(client, container, partial(client.exec_start, demux=True)) != OUTPUT


def test_a_command_silent_longer_than_the_clients_timeout_is_waited_for(
    container: Container,
) -> None:
    impatient = docker.from_env(timeout=2)  # the daemon the fixtures use (DOCKER_HOST)
    try:
        client = impatient.api
        exec_id = client.exec_create(container.id, ["sh", "-c", "sleep 4; echo late"])["Id"]
        assert exec_output.captured(client, exec_id) == (b"late\n", b"")
    finally:
        impatient.close()


def test_large_output_arrives_whole_and_in_its_streams(
    docker_client: docker.DockerClient, container: Container
) -> None:
    script = "head -c 5000000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2"
    exec_id = docker_client.api.exec_create(container.id, ["sh", "-c", script])["Id"]
    assert exec_output.captured(docker_client.api, exec_id) == (b"a" * 5_000_000, b"b" * 300_000)


def test_an_exec_that_does_not_exist_fails_when_started(
    docker_client: docker.DockerClient,
) -> None:
    with pytest.raises(NotFound):
        exec_output.frames(docker_client.api, "0" * 64)


def test_every_exec_of_the_package_is_read_here() -> None:
    """docker-py's own reading of an exec's output loses what came before the headers were read."""
    package = Path(exec_output.__file__).parents[2]
    readers = [
        path.relative_to(package)
        for path in package.rglob("*.py")
        if re.search(r"\.exec_(start|run)\(", path.read_text())
    ]
    assert readers == []
