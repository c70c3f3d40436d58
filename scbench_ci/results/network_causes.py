"""Failing tests that could not reach the network, and the hosts they named: a name that did not
resolve, a connection to a host outside the container refused or timed out, a package registry's
client giving up (pip, uv, npm, cargo). SCBench counts such a test failed like any other, and so
does the verdict; the reports count them apart, since their failure says nothing of the
submission's answers.

A test's message and traceback are untrusted text: they are searched for fixed substrings only
(`str.find`, linear), in at most SCANNED_CHARS of their start and of their end, and a host is
read from at most MAX_HOST_CHARS characters of a fixed alphabet right after one of them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scbench_ci.job.reports import FAILING
from scbench_ci.results.model import NetworkFailures, TestResult

SCANNED_CHARS = 64 * 1024
"""Of a message or a traceback, this much of its start and this much of its end are searched."""
MAX_HOST_CHARS = 253
"""A DNS name's longest; what runs past it is not a host."""
MAX_HOSTS = 10
"""Hosts a checkpoint names; the rest are counted, not named."""
MAX_FOUND_PER_TEXT = 20
"""Places a host may be named, read per text: the first ones."""

UNRESOLVED = (
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "nodename nor servname provided",
    "Could not resolve host",
    "Couldn't resolve host",
    "getaddrinfo ENOTFOUND",
    "getaddrinfo EAI_AGAIN",
    "dns error",
    "NameResolutionError",
    "Failed to resolve '",
    ": no such host",
    "Network is unreachable",
    "spurious network error",
)
"""A name did not resolve, or no route led out: the network, wherever it was going (a host
named in the text that is not an outside one makes it the test's own business)."""
UNCONNECTED = (
    "Connection refused",
    "ECONNREFUSED",
    "Connection timed out",
    "ETIMEDOUT",
    "ConnectTimeout",
    "Failed to establish a new connection",
    "Operation timed out",
    "error sending request for url",
    "failed to download from",
)
"""A connection failed: the network only when the text names an outside host (a test's own
server on localhost refusing is the submission's business)."""
HOST_BEFORE = (
    "Could not resolve host: ",
    "getaddrinfo ENOTFOUND ",
    "getaddrinfo EAI_AGAIN ",
    "Failed to resolve '",
    "Failed to resolve \\'",
    "host='",
    "host=\\'",
    'host="',
    "lookup ",
    "connect ECONNREFUSED ",
    "connect ETIMEDOUT ",
    "://",
)
"""What comes right before a host in the messages of Python's, curl's, cargo's, npm's, uv's
and Go's clients (a quote escaped as a str's repr escapes it: a CompletedProcess's stderr)."""
HOST_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "host.docker.internal"})


@dataclass(frozen=True)
class Unreachable:
    """Why one test could not reach the network."""

    host: str | None
    """The outside host it named, when it named one."""


def unreachable(test: TestResult) -> Unreachable | None:
    """Whether a failing test failed because the network could not be reached."""
    if test.status not in FAILING:
        return None
    texts = [part for text in (test.message, test.traceback) for part in _scanned(text or "")]
    unresolved = any(anchor in text for text in texts for anchor in UNRESOLVED)
    if not unresolved and not any(anchor in text for text in texts for anchor in UNCONNECTED):
        return None
    # The host the most specific place names (a URL's last): an outside one is the network's;
    # a local one (the test's own server) the submission's; none named, the network's when a
    # name did not resolve. A single-label name is neither (uv's "lookup address information").
    hosts = (host for text in texts for host in named_hosts(text))
    host = next((host for host in hosts if is_outside(host) or is_local(host)), None)
    if host is not None:
        return Unreachable(host) if is_outside(host) else None
    return Unreachable(None) if unresolved else None


def network_failures(tests: Iterable[TestResult]) -> NetworkFailures | None:
    """The failing tests that could not reach the network; None when none."""
    count = 0
    hosts: dict[str, None] = {}
    for test in tests:
        found = unreachable(test)
        if found is None:
            continue
        count += 1
        if found.host is not None and len(hosts) < MAX_HOSTS:
            hosts[found.host] = None
    return NetworkFailures(count, tuple(hosts)) if count else None


def named_hosts(text: str) -> Iterator[str]:
    """The hosts named right after one of HOST_BEFORE, in its order, the first
    MAX_FOUND_PER_TEXT."""
    found = 0
    for before in HOST_BEFORE:
        start = text.find(before)
        while start >= 0 and found < MAX_FOUND_PER_TEXT:
            host = _host_at(text, start + len(before))
            if host:
                found += 1
                yield host
            start = text.find(before, start + len(before))


def is_outside(host: str) -> bool:
    """A host outside the container and the machine: a dotted name that is not local, or an
    address that is neither loopback, private nor link-local."""
    address = _address(host)
    if address is None:
        name = host.rstrip(".").lower()
        return "." in name and not is_local(host)
    return not is_local(host)


def is_local(host: str) -> bool:
    """This machine or its private network: localhost's names, `*.local`, an address that is
    loopback, private or link-local."""
    address = _address(host)
    if address is None:
        name = host.rstrip(".").lower()
        return name in LOCAL_NAMES or name.endswith(".local")
    return address.is_loopback or address.is_private or address.is_link_local


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _host_at(text: str, start: int) -> str:
    """The host at `start`: its characters up to the first that is not one; '' when they run
    past MAX_HOST_CHARS or hold no letter or digit."""
    end = start
    limit = min(len(text), start + MAX_HOST_CHARS + 1)
    while end < limit and text[end] in HOST_CHARACTERS:
        end += 1
    host = text[start:end].strip(".-")
    if end - start > MAX_HOST_CHARS or not any(char.isalnum() for char in host):
        return ""
    return host


def _scanned(text: str) -> list[str]:
    """What of a text is searched: all of it, or its start and its end."""
    if len(text) <= 2 * SCANNED_CHARS:
        return [text]
    return [text[:SCANNED_CHARS], text[-SCANNED_CHARS:]]
