"""The runs' one network: made once with inter-container traffic off, found again by every run
(the first by id when processes made one each at the same moment), each named apart so Docker
never finds a name ambiguous, and never one that lets its containers reach each other. Each test
uses a label value of its own, so the runs of other tests are not disturbed."""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import docker
import pytest

from scbench_ci.executors.docker.network import (
    ALWAYS_CUT,
    ISOLATED_LABEL,
    NO_ICC,
    host_addresses,
    isolated_network,
)

pytestmark = pytest.mark.docker


@pytest.fixture
def kind(docker_client: docker.DockerClient) -> Iterator[str]:
    made = f"test-{uuid.uuid4().hex[:12]}"
    yield made
    for network in docker_client.networks.list(filters={"label": f"{ISOLATED_LABEL}={made}"}):
        network.remove()


def test_made_with_the_containers_apart_and_the_first_taken_by_every_run(
    docker_client: docker.DockerClient, kind: str, test_image: str
) -> None:
    with ThreadPoolExecutor(4) as pool:
        found = set(pool.map(lambda _: isolated_network(docker_client, kind).name, range(4)))
    made = docker_client.networks.list(filters={"label": f"{ISOLATED_LABEL}={kind}"})
    assert found <= {network.name for network in made}
    assert len({network.name for network in made}) == len(made)  # never a name twice
    for network in made:
        assert network.attrs["Options"] == NO_ICC
    first = min(made, key=lambda network: str(network.id))
    assert {isolated_network(docker_client, kind).name for _ in range(3)} == {first.name}
    # A container starts on it (Docker resolves it by its name then).
    output = docker_client.containers.run(
        test_image, ["true"], network_mode=first.name, remove=True
    )
    assert output == b""


def test_a_labelled_network_whose_containers_reach_each_other_is_not_taken(
    docker_client: docker.DockerClient, kind: str
) -> None:
    open_one = docker_client.networks.create(
        f"scbench-ci-test-{kind}", driver="bridge", labels={ISOLATED_LABEL: kind}
    )
    taken = isolated_network(docker_client, kind)
    assert taken.id != open_one.id
    assert taken.attrs["Options"] == NO_ICC


def test_what_a_run_is_cut_from_comes_in_address_order_whatever_the_daemon_lists_first(
    docker_client: docker.DockerClient, kind: str
) -> None:
    """A container prepared ahead is taken only by a run of the same shape, whose cut addresses
    are one of its fields: the daemon's listing order, which varies, must not make it another."""
    own = isolated_network(docker_client, kind)
    own.reload()
    cut = host_addresses(docker_client, str(own.name))
    assert cut == sorted(set(cut), key=ipaddress.ip_network)
    assert set(ALWAYS_CUT) <= set(cut)
    gateway = own.attrs["IPAM"]["Config"][0]["Gateway"]
    assert f"{gateway}/32" in cut
    assert {tuple(host_addresses(docker_client, str(own.name))) for _ in range(5)} == {tuple(cut)}
