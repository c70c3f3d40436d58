"""Azurite for the artifact tests: installed from npm when missing (testing/npm.py), one
instance per session. Failing to install or start it fails the tests, never skips them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.npm import npm_package
from testing.ports import free_port
from testing.twirp_server import ArtifactService, BlobAccount

AZURITE_VERSION = "3.35.0"
"""The last release that runs on Node 20: 3.36.0 and later need Node 21+."""
START_TIMEOUT_S = 30
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""Azurite's published development account key."""


@pytest.fixture
def loopback_without_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a configured HTTP proxy out of loopback traffic (requests and the Azure SDK): for
    the tests that talk to a double on this machine, and only while they run."""
    for variable in ("NO_PROXY", "no_proxy"):
        hosts = [os.environ.get(variable, ""), "127.0.0.1", "localhost"]
        monkeypatch.setenv(variable, ",".join(host for host in hosts if host))


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlobAccount]:
    folder = npm_package("azurite", AZURITE_VERSION, "the artifact tests")
    binary = folder / "node_modules" / ".bin" / "azurite-blob"
    port = free_port()
    location = tmp_path_factory.mktemp("azurite")
    log_path = location / "azurite.log"
    argv = [
        str(binary),
        *("--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(location)),
        *("--disableTelemetry", "--skipApiVersionCheck", "--loose", "--silent"),
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_listening(process, port, log_path)
        yield BlobAccount(f"http://127.0.0.1:{port}/{ACCOUNT}", ACCOUNT, ACCOUNT_KEY)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def artifact_service(azurite: BlobAccount) -> Iterator[ArtifactService]:
    with ArtifactService(azurite) as service:
        yield service


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"Azurite exited with {process.returncode}:\n{log_path.read_text()}", pytrace=False
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"Azurite did not listen on 127.0.0.1:{port} in {START_TIMEOUT_S} s", pytrace=False)
