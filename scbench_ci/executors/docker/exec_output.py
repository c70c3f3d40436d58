"""An exec's output, every byte of it.

docker-py reads a started exec's stream from the raw socket under the buffer in which the HTTP
response's headers were read. When the client is slower to read the headers than the command
is to write (a busy machine), its first frames are in that buffer, and docker-py never sees them
(docker/docker-py#3332): a run's reports, the count of what it left running, the start of its
log. Here the frames are read through that buffer.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import docker
import requests
from docker.errors import create_api_error_from_http_exception

STDOUT = 1
STDERR = 2
_HEADER = struct.Struct(">BxxxL")


def frames(client: docker.APIClient, exec_id: str) -> Iterator[tuple[int, bytes]]:
    """Start the exec (no TTY), then yield its output as it comes: (STDOUT or STDERR, bytes)."""
    return _read_frames(_started(client, exec_id))


class Attached:
    """A started exec made with `stdin=True`: its stdin, and its output."""

    def __init__(self, client: docker.APIClient, exec_id: str) -> None:
        self._response = _started(client, exec_id)
        connection = self._response.raw.connection
        assert connection is not None and connection.sock is not None, "the exec's stream is open"
        self.stdin: socket.socket = connection.sock
        """Written to, then `shutdown(SHUT_WR)`: the command reads what was written, then its
        end."""

    def frames(self) -> Iterator[tuple[int, bytes]]:
        """Its output as `frames` gives it (once)."""
        return _read_frames(self._response)

    def close(self) -> None:
        """Hang up: the command's stdin ends, and its output is not read."""
        self._response.close()


def _started(client: docker.APIClient, exec_id: str) -> requests.Response:
    response = client.post(
        f"{client.base_url}/v{client.api_version}/exec/{exec_id}/start",
        json={"Tty": False, "Detach": False},
        headers={"Connection": "Upgrade", "Upgrade": "tcp"},
        stream=True,
        timeout=client.timeout,
    )
    try:
        response.raise_for_status()
    except requests.HTTPError as error:
        response.close()
        raise create_api_error_from_http_exception(error) from error
    # The headers came in the client's time; the output, as docker-py reads it, is waited for as
    # long as the command is silent (the run's deadline ends the command).
    connection = response.raw.connection
    assert connection is not None and connection.sock is not None, "the exec's stream is open"
    connection.sock.settimeout(None)
    return response


def _read_frames(response: requests.Response) -> Iterator[tuple[int, bytes]]:
    http_response = response.raw._fp  # http.client's, as docker-py reaches it
    assert http_response is not None, "a streamed response keeps its connection"
    reader = http_response.fp
    try:
        while len(header := reader.read(_HEADER.size)) == _HEADER.size:
            stream, size = _HEADER.unpack(header)
            data = reader.read(size)
            if data:
                yield stream, data
            if len(data) < size:
                return
    finally:
        response.close()


def captured(client: docker.APIClient, exec_id: str) -> tuple[bytes, bytes]:
    """Start the exec and wait for its end: its whole stdout and stderr."""
    stdout, stderr = bytearray(), bytearray()
    for stream, data in frames(client, exec_id):
        (stdout if stream == STDOUT else stderr).extend(data)
    return bytes(stdout), bytes(stderr)
