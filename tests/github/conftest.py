"""Azurite for the artifact tests: installed from npm when missing, one instance per session.

Azurite lives in `$XDG_CACHE_HOME/scbench-ci/azurite-<version>` (default `~/.cache`), outside the
repository. Failing to install or start it fails the tests, never skips them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.github.twirp_server import ArtifactService, BlobAccount

AZURITE_VERSION = "3.35.0"
"""The last release that runs on Node 20: 3.36.0 and later need Node 21+."""
INSTALL_TIMEOUT_S = 300
START_TIMEOUT_S = 30
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""Azurite's published development account key."""


@pytest.fixture(scope="session", autouse=True)
def loopback_without_proxy() -> Iterator[None]:
    """Keep a configured HTTP proxy out of loopback traffic (requests and the Azure SDK)."""
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("NO_PROXY", "no_proxy"):
            hosts = [os.environ.get(variable, ""), "127.0.0.1", "localhost"]
            patch.setenv(variable, ",".join(host for host in hosts if host))
        yield


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlobAccount]:
    binary = _installed_azurite()
    port = _free_port()
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


def _cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "scbench-ci" / f"azurite-{AZURITE_VERSION}"


def _installed_azurite() -> Path:
    folder = _cache_dir()
    binary = folder / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "the artifact tests need Azurite, installed with npm: install Node.js and npm",
            pytrace=False,
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Installed beside the cache folder and renamed into it: a broken install is never used.
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    try:
        _npm_install(npm, staging)
        staging.rename(folder)
    except OSError:
        if not binary.exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return binary


def _npm_install(npm: str, prefix: Path) -> None:
    argv = [npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(
            [*argv, "--loglevel=error", f"azurite@{AZURITE_VERSION}"],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"npm could not install azurite@{AZURITE_VERSION} in {INSTALL_TIMEOUT_S} s",
            pytrace=False,
        )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        pytest.fail(f"npm could not install azurite@{AZURITE_VERSION}:\n{tail}", pytrace=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
