"""The runs' one network: made once with inter-container traffic off, found again by every run,
and refused when one of its name is not scbench-ci's or lets its containers reach each other.
Each test uses a name of its own, so the runs of other tests are not disturbed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import docker
import pytest

from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.docker.network import ISOLATED_LABEL, NO_ICC, isolated_network

pytestmark = pytest.mark.docker


@pytest.fixture
def name(docker_client: docker.DockerClient) -> Iterator[str]:
    made = f"scbench-ci-test-isolated-{uuid.uuid4().hex[:12]}"
    yield made
    for network in docker_client.networks.list(names=[made]):
        network.remove()


def test_made_once_with_the_containers_apart_and_found_again(
    docker_client: docker.DockerClient, name: str
) -> None:
    with ThreadPoolExecutor(4) as pool:
        found = set(pool.map(lambda _: isolated_network(docker_client, name).id, range(4)))
    # Made at the same moment, there may be more than one, each alike; then the first by id.
    made = docker_client.networks.list(names=[name])
    assert found <= {network.id for network in made}
    for network in made:
        assert network.attrs["Options"] == NO_ICC
        assert network.attrs["Labels"] == {ISOLATED_LABEL: "isolated"}
    first = min(str(network.id) for network in made)
    assert {isolated_network(docker_client, name).id for _ in range(3)} == {first}


@pytest.mark.parametrize(
    ("options", "labels"),
    [({}, {ISOLATED_LABEL: "isolated"}), (NO_ICC, {}), (NO_ICC, {ISOLATED_LABEL: "other"})],
    ids=["containers reach each other", "not labelled", "labelled otherwise"],
)
def test_a_network_of_the_name_that_is_not_ours_is_refused(
    docker_client: docker.DockerClient, name: str, options: dict, labels: dict
) -> None:
    docker_client.networks.create(name, driver="bridge", options=options, labels=labels)
    with pytest.raises(InfrastructureError, match=f"the Docker network '{name}' is not"):
        isolated_network(docker_client, name)
