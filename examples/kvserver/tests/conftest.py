"""Shared fixtures for the kvserver tests: start the submission as a server, talk to it."""

import shlex
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

STARTUP_S = 15.0
"""How long the server may take to accept connections."""
STOP_S = 2.0
"""How long to wait for the server to exit after SIGTERM. A server that outlives it is left
alone: cleaning up after a misbehaving submission is the evaluation tool's job, not the test's."""
REQUEST_S = 5.0


def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True,
                     help="command that runs the submission, e.g. 'uv run kvserver.py'")
    parser.addoption("--checkpoint", action="store", required=True,
                     help="the checkpoint being evaluated, e.g. checkpoint_2")


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        pass  # give up silently; see STOP_S


class Client:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def request(self, method, path, body=None):
        """Returns (status, headers, body bytes); HTTP error statuses are returned, not raised."""
        request = urllib.request.Request(self.base + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_S) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.headers, error.read()

    def get(self, path):
        return self.request("GET", path)

    def put(self, path, body):
        return self.request("PUT", path, body)

    def delete(self, path):
        return self.request("DELETE", path)


@pytest.fixture
def server(entrypoint_argv, tmp_path):
    """A fresh server on a free port; yields a Client for it."""
    port = free_port()
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(entrypoint_argv + ["--port", str(port)],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"server exited with status {process.returncode} before accepting "
                            f"connections:\n{log_path.read_text(errors='replace')}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"server did not accept connections on port {port} within "
                                f"{STARTUP_S:g}s:\n{log_path.read_text(errors='replace')}")
                time.sleep(0.05)
        yield Client(port)
    finally:
        stop(process)
