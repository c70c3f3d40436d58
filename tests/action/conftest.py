"""These tests talk to doubles of GitHub's services on this machine."""

from pathlib import Path

import docker
import pytest

from testing.action_run import ActionHost


@pytest.fixture(autouse=True)
def _loopback(loopback_without_proxy: None) -> None:
    """See `testing.azurite.loopback_without_proxy`."""


@pytest.fixture
def action_host(
    docker_client: docker.DockerClient,
    action_image: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> ActionHost:
    """What every end-to-end case of the action runs it with (`testing.action_run.ActionHost`)."""
    return ActionHost(docker_client, action_image, tmp_path, request)
