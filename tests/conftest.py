"""Shared fixtures: small problems written into tmp_path, and the real Docker daemon. The helpers
they use are in `testing/`."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import requests
from docker.errors import APIError, BuildError, DockerException, ImageNotFound

from scbench_ci.executors.docker.image_build import default_image
from scbench_ci.executors.docker.image_recipe import recipe
from scbench_ci.foundation.signals import STOPS
from testing.examples import SharedEvaluations
from testing.images import ACTION_BASE_IMAGE, ACTION_IMAGE, PROVISION, TEST_IMAGE, build_log
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder

# The artifact service double and its Azurite, for the action and the artifact tests; a Ray
# cluster of real nodes for the tests of `--engine ray`; the check that nothing of a hostile
# submission's runs outlives them.
pytest_plugins = ["testing.azurite", "testing.ray_cluster", "testing.hostile_submissions"]


# The suite's tiers (docs/development.md, "Tiers"): what a test needs, read from the fixtures it
# uses, so that a new test is placed without anyone remembering to mark it. Tests that reach these
# needs another way carry the marker themselves.
MARKER_OF_FIXTURE = {"docker_client": "docker", "ray_cluster": "ray", "azurite": "npm"}
INTEGRATION = Path(__file__).parent / "integration"
# The order in which test files start side by side (scripts/test.sh keeps it: xdist's own puts the
# files of most tests first, and the few long tests of a cluster, a benchmark or a whole check
# last, alone at the end): the files with a test of the first marker, then of the next, ...; so
# those that run evaluations start first and the short ones fill in at the end.
COSTLIEST_FIRST = ("docker", "integration", "browser", "npm", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(INTEGRATION):
            item.add_marker("integration")
        needed = getattr(item, "fixturenames", ())
        for fixture, marker in MARKER_OF_FIXTURE.items():
            if fixture in needed:
                item.add_marker(marker)
    rank = {item.path: len(COSTLIEST_FIRST) for item in items}
    for item in items:
        ranks = [
            COSTLIEST_FIRST.index(m.name) for m in item.iter_markers() if m.name in COSTLIEST_FIRST
        ]
        rank[item.path] = min([rank[item.path], *ranks])
    # Stable: a file's tests stay together, in their order.
    items.sort(key=lambda item: rank[item.path])


def pytest_configure(config: pytest.Config) -> None:
    """The suite tests Ctrl-C, in this process and in the CLI's: a shell that starts it in the
    background ignores SIGINT, which its children would inherit."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """A front end's catch-all (`handle_errors`), run in this process, installs the run's SIGINT
    and SIGTERM handlers; the next test gets this process's own back."""
    handlers = {signum: signal.getsignal(signum) for signum in STOPS}
    yield
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


@pytest.fixture
def problem_folder(tmp_path: Path) -> ProblemFolder:
    return ProblemFolder(tmp_path / "problem")


@pytest.fixture
def submission(tmp_path: Path) -> Path:
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "main.py").write_text("print('hello')\n")
    return folder


@pytest.fixture(scope="session")
def shared_evaluations(tmp_path_factory: pytest.TempPathFactory) -> SharedEvaluations:
    """The bundled examples' evaluations, each run once a session (its xdist workers share
    the folder above their own)."""
    base = tmp_path_factory.getbasetemp()
    session = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return SharedEvaluations(session / "shared-evaluations")


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    """The daemon the Docker executor talks to; its absence fails the tests, never skips them."""
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (DockerException, requests.RequestException) as error:
        pytest.fail(
            f"no Docker daemon answers ({type(error).__name__}); run `{PROVISION}` as root",
            pytrace=False,
        )
    for image in (TEST_IMAGE, ACTION_BASE_IMAGE):
        try:
            client.images.get(image)
        except ImageNotFound:
            pytest.fail(f"no image {image}; run `{PROVISION}` as root", pytrace=False)
    yield client
    client.close()


@pytest.fixture(scope="session")
def test_image(docker_client: docker.DockerClient) -> str:
    return TEST_IMAGE


@pytest.fixture(scope="session")
def evaluation_image(docker_client: docker.DockerClient) -> str:
    """The default image, SCBench 1.0's evaluation image, as a run without --image has it (here
    already, pulled, or built once: `{PROVISION}` builds it); what its containers are made from."""
    return default_image(docker_client, None, recipe()).reference


@pytest.fixture(scope="session")
def paper_evaluation_image(docker_client: docker.DockerClient) -> str:
    """The paper runner's evaluation image, as a run of that runner without --image has it
    (`{PROVISION}` builds it too)."""
    return default_image(docker_client, None, recipe("paper")).reference


@pytest.fixture(scope="session")
def action_image(
    docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The action's image, built from the repository's Dockerfile as GitHub's runner builds it.
    Its tag is this process's own: suites side by side (xdist's workers, other clones on the
    daemon) each run the image of their own checkout, and only their own tag is removed. xdist's
    workers build it one at a time (the lock is in the temporary folder they share): the next
    finds every layer in the build cache instead of building it too."""
    tag = f"{ACTION_IMAGE}-{os.getpid()}"
    shared = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        shared = shared.parent
    lock = shared / "action-image.lock"
    try:
        with lock.open("a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            docker_client.images.build(
                path=str(REPO_ROOT),
                tag=tag,
                buildargs={"BASE_IMAGE": ACTION_BASE_IMAGE},
                rm=True,
                forcerm=True,
            )
    except BuildError as error:
        pytest.fail(
            f"the action image did not build: {error.msg}\n{build_log(error)}", pytrace=False
        )
    yield tag
    # The layers stay, the build cache of the next session.
    with contextlib.suppress(APIError):
        docker_client.images.remove(tag, noprune=True)
