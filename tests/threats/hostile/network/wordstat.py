"""The solution, unless it can reach the network beyond loopback or the Docker daemon, or cannot
reach a server of its own on localhost: then it prints garbage and fails."""

import os
import socket
import sys

from wordstat_base import main


def connects(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError:
        return False
    return True


def gateway() -> str:
    try:
        for line in open("/proc/net/route").read().splitlines()[1:]:
            fields = line.split()
            if fields[1] == "00000000":
                return socket.inet_ntoa(int(fields[2], 16).to_bytes(4, "little"))
    except OSError:
        pass
    return "172.17.0.1"


def loopback_works() -> bool:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        return connects(*server.getsockname())
    finally:
        server.close()


def escapes() -> list[str]:
    found = []
    if connects("pypi.org", 443):
        found.append("internet")
    if any(connects(gateway(), port) for port in (2375, 2376)):
        found.append("docker over tcp")
    if os.path.exists("/var/run/docker.sock") or os.path.exists("/run/docker.sock"):
        found.append("docker socket")
    if not loopback_works():
        found.append("no loopback")
    return found


if __name__ == "__main__":
    found = escapes()
    if found:
        print(f"escaped: {', '.join(found)}")
        sys.exit(3)
    sys.exit(main())
