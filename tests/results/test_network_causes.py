"""Failing tests that could not reach the network, told apart from wrong answers (issue #52). The
clients' texts are what they printed in a container of this machine's evaluation image, whose
DNS resolves nothing outside (cargo 1.x, pip, uv, npm, curl; `docker run ... cargo build` of a
crate with a dependency, and so on)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.results.model import NetworkFailures
from scbench_ci.results.network_causes import (
    Unreachable,
    is_outside,
    network_failures,
    unreachable,
)
from testing.results import make_test

CARGO = """    Updating crates.io index
warning: spurious network error (3 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)
warning: spurious network error (2 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)
warning: spurious network error (1 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)
error: failed to get `rand` as a dependency of package `demo v0.1.0 (/tmp/demo)`

Caused by:
  download of config.json failed

Caused by:
  failed to download from `https://index.crates.io/config.json`

Caused by:
  [6] Could not resolve hostname (Could not resolve host: index.crates.io)
"""  # noqa: E501
PIP = """Looking in indexes: https://pypi.mirror.example/simple
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f88faf1e120>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/requests/
ERROR: Could not find a version that satisfies the requirement requests (from versions: none)
ERROR: No matching distribution found for requests
"""  # noqa: E501
UV = """error: Request failed after 3 retries in 8.4s
  cause: Failed to fetch: https://pypi.mirror.example/simple/requests/
  cause: error sending request for url (https://pypi.mirror.example/simple/requests/)
  cause: client error (Connect)
  cause: dns error
  cause: error resolving DNS
  cause: failed to lookup address information: Name or service not known
"""
NPM = """npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.mirror.example/left-pad failed, reason: getaddrinfo ENOTFOUND registry.mirror.example
npm error network This is a problem related to network connectivity.
"""  # noqa: E501
CURL = "curl: (6) Could not resolve host: index.crates.io\n"
REQUESTS = (
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.org', port=443): "
    'Max retries exceeded with url: /v1 (Caused by NameResolutionError("<urllib3.connection.'
    "HTTPSConnection object at 0x7f0000000000>: Failed to resolve 'api.example.org' ([Errno -3] "
    'Temporary failure in name resolution)"))'
)
GO = "dial tcp: lookup proxy.golang.org on 127.0.0.11:53: no such host"
REFUSED_OUTSIDE = "connect ECONNREFUSED 104.16.3.35:443"
URLLIB = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"


def failed_with_stderr(stderr: str, status: Status = Status.FAILED) -> object:
    """A test that ran a command and asserted its exit status, as pytest words it."""
    process = subprocess.CompletedProcess(["tool"], 101, stdout="", stderr=stderr)
    message = f"assert 101 == 0\n +  where 101 = {process!r}.returncode"
    return replace(make_test("test_build", status), message=message)


@pytest.mark.parametrize(
    ("stderr", "host"),
    [
        (CARGO, "index.crates.io"),
        (PIP, "pypi.mirror.example"),
        (UV, "pypi.mirror.example"),
        (NPM, "registry.mirror.example"),
        (CURL, "index.crates.io"),
        (REQUESTS, "api.example.org"),
        (GO, "proxy.golang.org"),
        (REFUSED_OUTSIDE, "104.16.3.35"),
        (URLLIB, None),
    ],
)
def test_a_client_that_could_not_reach_its_host_is_named_with_the_host(
    stderr: str, host: str | None
) -> None:
    assert unreachable(failed_with_stderr(stderr)) == Unreachable(host)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "message",
    [
        "AssertionError: assert 2 == 3",
        # The test's own server, on this machine, refusing: the submission's business.
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8080): "
        "Max retries exceeded with url: / (Caused by NewConnectionError('Failed to establish a "
        "new connection: [Errno 111] Connection refused'))",
        "curl: (7) Failed to connect to localhost port 9000: Connection refused",
        "Failed: Timeout (>30.0s) from pytest-timeout.",
        "expected https://example.org/x in the output, got nothing",
    ],
)
def test_other_failures_are_not_the_network(message: str) -> None:
    test = replace(make_test("test_x", Status.FAILED), message=message)
    assert unreachable(test) is None


def test_only_failing_tests_count() -> None:
    for status in (Status.PASSED, Status.SKIPPED, Status.XFAILED, Status.FLAKY):
        assert unreachable(failed_with_stderr(CURL, status)) is None  # type: ignore[arg-type]
    assert unreachable(failed_with_stderr(CURL, Status.ERROR)) is not None  # type: ignore[arg-type]


def test_a_checkpoint_counts_its_tests_and_names_each_host_once() -> None:
    tests = [
        failed_with_stderr(CARGO),
        failed_with_stderr(CARGO),
        failed_with_stderr(URLLIB),
        failed_with_stderr(NPM),
        make_test("test_ok", Status.PASSED),
        make_test("test_wrong", Status.FAILED),
    ]
    assert network_failures(tests) == NetworkFailures(  # type: ignore[arg-type]
        4, ("index.crates.io", "registry.mirror.example")
    )
    assert network_failures([make_test("test_wrong", Status.FAILED)]) is None


@pytest.mark.parametrize(
    ("host", "outside"),
    [
        ("index.crates.io", True),
        ("8.8.8.8", True),
        ("localhost", False),
        ("127.0.0.1", False),
        ("172.17.0.1", False),
        ("10.1.2.3", False),
        ("::1", False),
        ("kvserver", False),
        ("printer.local", False),
    ],
)
def test_what_is_outside(host: str, outside: bool) -> None:
    assert is_outside(host) is outside


@pytest.mark.serial
def test_hostile_text_is_read_in_bounded_time() -> None:
    """Megabytes of near-misses: a prefix of every anchor, repeated, and hosts that never end.
    Only the start and the end of a text are read, each once per anchor: 0.1 s here; a scan
    that went back over what it read would take minutes."""
    near = "Could not resolve hos" + "getaddrinfo ENOTFOUN" + "host='" + "a" * 300 + "://"
    message = "Temporary failure in name resolution " + near * 20_000 + "x" * 2_000_000
    test = replace(make_test("test_x", Status.FAILED), message=message, traceback=message)
    started = time.monotonic()
    assert unreachable(test) == Unreachable(None)
    assert time.monotonic() - started < 10
