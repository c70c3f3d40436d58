"""An exec's output against the real daemon: every byte, when the client reads the response's
headers late (a busy machine), and however long the command is silent."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound
from docker.models.containers import Container

from scbench_ci.executors.docker import exec_output

TRIES = 5
SCRIPT = "echo first; echo to-stderr >&2; echo second"


@pytest.fixture
def container(docker_client: docker.DockerClient, test_image: str) -> Iterator[Container]:
    container = docker_client.containers.run(test_image, ["sleep", "infinity"], detach=True)
    try:
        yield container
    finally:
        container.remove(force=True)


@contextmanager
def late_client() -> Iterator[None]:
    """A thread that keeps the interpreter for 0.1 s at a time: the client reads the headers of
    the exec's response after the command has written (what a busy machine does at random)."""
    done = threading.Event()

    def hold() -> None:
        while not done.is_set():
            pass

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.1)
    holder = threading.Thread(target=hold)
    holder.start()
    try:
        yield
    finally:
        done.set()
        holder.join()
        sys.setswitchinterval(interval)


def outputs_read_late(
    client: docker.APIClient, container: Container, start: Callable[[str], tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    outputs = []
    for _ in range(TRIES):
        exec_id = client.exec_create(container.id, ["sh", "-c", SCRIPT])["Id"]
        with late_client():
            outputs.append(start(exec_id))
    return outputs


def test_output_written_before_the_headers_are_read_is_kept(
    docker_client: docker.DockerClient, container: Container
) -> None:
    client = docker_client.api
    outputs = outputs_read_late(client, container, lambda id: exec_output.captured(client, id))
    assert outputs == [(b"first\nsecond\n", b"to-stderr\n")] * TRIES
    # The same timing loses docker-py's own reading of the output: the test reaches the race.
    lost = outputs_read_late(
        client, container, lambda id: client.exec_start(id, demux=True) or (b"", b"")
    )
    assert any(output != (b"first\nsecond\n", b"to-stderr\n") for output in lost)


def test_a_command_silent_longer_than_the_clients_timeout_is_waited_for(
    container: Container,
) -> None:
    client = docker.APIClient(timeout=2)
    try:
        exec_id = client.exec_create(container.id, ["sh", "-c", "sleep 4; echo late"])["Id"]
        assert exec_output.captured(client, exec_id) == (b"late\n", b"")
    finally:
        client.close()


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
