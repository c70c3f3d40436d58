"""Ports no one listens on, for a service the suite starts or for a request that must fail."""

from __future__ import annotations

import contextlib
import socket

LOOPBACK = "127.0.0.1"


def free_ports(ip: str, count: int) -> list[int]:
    """`count` different ports free on `ip`: each probe stays bound until all are picked, as
    one closed at once may be the system's next pick again (Ray refuses a port given twice)."""
    with contextlib.ExitStack() as probes:
        ports = []
        for _ in range(count):
            probe = probes.enter_context(socket.socket())
            probe.bind((ip, 0))
            ports.append(int(probe.getsockname()[1]))
        return ports


def free_port(ip: str = LOOPBACK) -> int:
    return free_ports(ip, 1)[0]
