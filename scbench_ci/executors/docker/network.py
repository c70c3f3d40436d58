"""The network the tests have: the internet, as under SCBench, and no more of this host and of the
daemon's other containers than that needs.

On the default bridge every container reaches every other one (the evaluations beside it, a Ray
node, another user's), and the host's services on its bridge address. So each scbench-ci process
makes a bridge network of its own (labelled as its runs are, removed as it exits, found by
`cleanup` otherwise) with inter-container traffic off: its containers reach neither each other nor
the containers of other networks (Docker isolates bridge networks from each other), and reach the
internet as before, through the host.

What goes to the host itself is not forwarded but delivered, so no network setting stops it.
The container's own routing table does: before anything else runs in it, its first process (as
root, with the capability to change its own network namespace and nothing else, no process of
the run has it) adds a `prohibit` route to every bridge address of the daemon's host (each
network's gateway: the host on that bridge) and to link-local addresses (a cloud's metadata
service), then gives the capability up and becomes the idle process as nobody. A connection there
fails at once (`Permission denied`); the gateway still forwards the rest. This needs the image's
`python3` (SCBench's images have one); without it the routes are not added, and the run's setup
log says so.

An environment file's `docker.network` is the user's choice and is used as it is: no network of
the run's own and no routes.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import threading
import uuid
from typing import Any

import docker
import requests
from docker.errors import DockerException
from docker.models.containers import Container

from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.docker.container import labels
from scbench_ci.executors.docker.daemon import connect
from scbench_ci.executors.docker.layout import IDLE_USER

NETWORK_PREFIX = "scbench-ci-net-"
ALWAYS_CUT = ("172.16.0.0/12", "169.254.0.0/16")
"""Where Docker puts its bridge networks by default (one made after the run's container among
them), and link-local addresses (a cloud's metadata service)."""
ROUTED_CAPABILITIES = ["NET_ADMIN", "SETUID", "SETGID"]
ROUTES_FAILED = "ROUTES_FAILED"
"""The first process's, for its routes and to become nobody; dropped before the idle process."""
# As root: a `prohibit` route to each address (argv), over rtnetlink (RTM_NEWROUTE, main table,
# type RTN_PROHIBIT); then nobody, asleep. What it could not add it says on stderr, first word
# ROUTES_FAILED (the container's log), and the container idles all the same.
_ROUTE_THEN_IDLE = f"""import os, socket, struct, sys
def prohibit(net):
    address, _, bits = net.partition("/")
    body = struct.pack("=BBBBBBBBI", socket.AF_INET, int(bits or 32), 0, 0, 254, 4, 0, 8, 0)
    body += struct.pack("=HH", 8, 1) + socket.inet_aton(address)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as sock:
        sock.send(struct.pack("=IHHII", 16 + len(body), 24, 0x605, 1, 0) + body)
        error = struct.unpack("=i", sock.recv(4096)[16:20])[0]
    if error not in (0, -17):
        raise OSError(-error, os.strerror(-error))
for net in sys.argv[1:]:
    try:
        prohibit(net)
    except (OSError, ValueError) as error:
        print("{ROUTES_FAILED}", net, error, file=sys.stderr, flush=True)
uid, gid = (int(part) for part in "{IDLE_USER}".split(":"))
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
os.execvp("sleep", ["sleep", "infinity"])
"""


class RunNetwork:
    """The network of this process's runs (RUN_NETWORK), made when first needed and removed as
    the process exits (`close`): every executor of the process shares it (the CLI's one, a Python
    session's, the tests' many)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._name: str | None = None
        self._cut: tuple[str, ...] = ()

    def made(self, client: docker.DockerClient) -> tuple[str, tuple[str, ...]]:
        """Its name, and what its containers are cut from (`host_addresses` when it was made:
        every run of the executor's is alike, so a container made ahead serves any of them)."""
        with self._lock:
            if self._name is None:
                network_id = uuid.uuid4().hex
                name = f"{NETWORK_PREFIX}{network_id[:16]}"
                client.networks.create(
                    name,
                    driver="bridge",
                    labels=labels(network_id),
                    options={"com.docker.network.bridge.enable_icc": "false"},
                    check_duplicate=True,
                )
                self._name = name
                self._cut = tuple(host_addresses(client, name))
                atexit.register(self.close)
            return self._name, self._cut

    def close(self) -> None:
        """Remove it (once every container of the run has gone); what cannot be removed is left
        to `scbench-ci cleanup`, by its labels."""
        with self._lock:
            name, self._name = self._name, None
        if name is None:
            return
        atexit.unregister(self.close)
        with (
            contextlib.suppress(DockerException, requests.RequestException, InfrastructureError),
            contextlib.closing(connect()) as client,
        ):
            client.networks.get(name).remove()


RUN_NETWORK = RunNetwork()


def host_addresses(client: docker.DockerClient, own: str) -> list[str]:
    """What a container on the network `own` is cut from: the host's address on it (its
    gateway), every other network of the daemon whole (the host's address there, which the
    default bridge does not list, and containers Docker keeps apart anyway), and ALWAYS_CUT.
    The routes to its own network's other addresses stay (the kernel's, more specific)."""
    found = []
    with contextlib.suppress(DockerException, requests.RequestException):
        for network in client.networks.list():
            for config in (network.attrs.get("IPAM") or {}).get("Config") or []:
                with contextlib.suppress(ValueError):
                    subnet = ipaddress.ip_network(str(config.get("Subnet")), strict=False)
                    if subnet.version != 4:
                        continue
                    if network.name != own:
                        found.append(str(subnet))
                    else:
                        found.append(f"{config.get('Gateway') or subnet[1]}/32")
    return list(dict.fromkeys([*found, *ALWAYS_CUT]))


def routed(blocked: list[str]) -> dict[str, Any]:
    """The options of a container whose first process adds the routes to `blocked`, then idles
    as nobody (the module)."""
    return {
        "user": "0:0",
        "cap_add": ROUTED_CAPABILITIES,
        "entrypoint": ["python3", "-I", "-c", _ROUTE_THEN_IDLE, *blocked],
    }


def routes_failed(container: Container) -> str | None:
    """What of its routes a container's first process could not add (its log says), or None."""
    with contextlib.suppress(DockerException, requests.RequestException):
        log = bytes(container.logs(stdout=False, stderr=True, tail=20)).decode(errors="replace")
        failed = [line for line in log.splitlines() if line.startswith(ROUTES_FAILED)]
        if failed:
            return "; ".join(line.removeprefix(ROUTES_FAILED).strip() for line in failed)[:500]
    return None
