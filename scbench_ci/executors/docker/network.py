"""The network the tests have: the internet, as under SCBench, and no more of this host and of the
daemon's other containers than that needs.

On the default bridge every container reaches every other one (the evaluations beside it, a Ray
node, another user's), and the host's services on its bridge address. So the runs' containers are
on a bridge network of their own (`scbench-ci-isolated-...`, labelled ISOLATED_LABEL) with
inter-container traffic off: they reach neither each other nor the containers of other networks
(Docker isolates bridge networks from each other), and reach the internet as before, through the
host. It is one network for every run of the daemon, made by the first that needs it and never
removed by a run: a network per process ran out of the daemon's address pools (31 networks by
default) once processes that were killed left theirs behind. A labelled network that lets its
containers reach each other is never taken.

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

import contextlib
import ipaddress
import uuid
from typing import Any

import docker
import requests
from docker.errors import DockerException
from docker.models.containers import Container
from docker.models.networks import Network

from scbench_ci.executors.docker.container_layout import IDLE_USER
from scbench_ci.foundation.errors import InfrastructureError

ISOLATED_NETWORK = "scbench-ci-isolated"
"""Its name's prefix."""
ISOLATED_LABEL = "dev.scbench-ci.network"
ISOLATED = "isolated"
NO_ICC = {"com.docker.network.bridge.enable_icc": "false"}
"""Inter-container traffic off: the containers on it do not reach each other."""
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


def run_network(client: docker.DockerClient) -> tuple[str, tuple[str, ...]]:
    """The runs' network (its name), looked up or made for each run, and what its containers
    are cut from (`host_addresses`)."""
    network = isolated_network(client)
    return str(network.name), tuple(host_addresses(client, str(network.name)))


def isolated_network(client: docker.DockerClient, kind: str = ISOLATED) -> Network:
    """The first, by id, of the networks labelled `kind` with inter-container traffic off; made
    when there is none. Each is named apart (Docker resolves a container's network by name when
    it starts it, and refuses a name two networks have): processes that make one at the same
    moment each have their own, alike, and later runs all take the first."""
    found = _isolated(client, kind)
    if not found:
        client.networks.create(
            f"{ISOLATED_NETWORK}-{uuid.uuid4().hex[:12]}",
            driver="bridge",
            labels={ISOLATED_LABEL: kind},
            options=NO_ICC,
        )
        found = _isolated(client, kind)
    if not found:
        raise InfrastructureError("the tests' network was made, then gone")
    return found[0]


def _isolated(client: docker.DockerClient, kind: str) -> list[Network]:
    """The networks labelled `kind` whose containers do not reach each other, by id (one
    labelled so that lets them is not taken)."""
    found = [
        network
        for network in client.networks.list(filters={"label": f"{ISOLATED_LABEL}={kind}"})
        if all((network.attrs.get("Options") or {}).get(k) == v for k, v in NO_ICC.items())
    ]
    return sorted(found, key=lambda network: str(network.id))


def host_addresses(client: docker.DockerClient, own: str) -> list[str]:
    """What a container on the network `own` is cut from: the host's address on it (its
    gateway), every other network of the daemon whole (the host's address there, which the
    default bridge does not list, and containers Docker keeps apart anyway), and ALWAYS_CUT.
    The routes to its own network's other addresses stay (the kernel's, more specific). In
    address order: the daemon lists its networks in no set order, and a container prepared
    ahead is taken only by a run whose list is the same (pool.Shape)."""
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
                        gateway = config.get("Gateway") or subnet[1]
                        found.append(str(ipaddress.ip_network(f"{gateway}/32")))
    return sorted(set(found) | set(ALWAYS_CUT), key=ipaddress.ip_network)


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
