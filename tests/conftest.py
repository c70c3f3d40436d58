"""Shared fixtures: small problems written into tmp_path, and the real Docker daemon."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
import requests
import yaml
from docker.errors import BuildError, DockerException, ImageNotFound

from scbench_ci.command import TestCommand
from scbench_ci.executors.docker.settings import DEFAULT_IMAGE
from scbench_ci.reports import Status, TestOutcome
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.standalone.pytest_runner import START_PREFIX, start_text

# The artifact service double and its Azurite, for the action and the artifact tests.
pytest_plugins = ["testing.azurite"]

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
# Image names are configurable so a machine with a registry can use the public images; where
# none is reachable, scripts/provision-docker.sh builds local stand-ins under these names.
TEST_IMAGE = os.environ.get("SCBENCH_TEST_IMAGE", DEFAULT_IMAGE)
ACTION_BASE_IMAGE = os.environ.get("SCBENCH_ACTION_BASE_IMAGE", "python:3.12-slim")
ACTION_IMAGE = "scbench-ci-action:test"
PROVISION = "scripts/provision-docker.sh"

CONFTEST = """
import shlex

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)


@pytest.fixture
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")
"""


class ProblemFolder:
    """Writes a problem folder: config.yaml, tests/conftest.py and test files."""

    def __init__(self, root: Path, config: dict[str, object] | None = None) -> None:
        self.root = root
        self.config: dict[str, object] = config or {
            "name": "demo",
            "entry_file": "main",
            "checkpoints": {"checkpoint_1": {}, "checkpoint_2": {}, "checkpoint_3": {}},
        }
        (root / "tests").mkdir(parents=True)
        self.write("tests/conftest.py", CONFTEST)
        self.save()
        for name in self.config["checkpoints"]:  # type: ignore[attr-defined]
            self.write(f"tests/test_{name}.py", "def test_ok():\n    pass\n")

    def save(self) -> ProblemFolder:
        self.write("config.yaml", yaml.safe_dump(self.config, sort_keys=False))
        return self

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path


def make_outcome(
    name: str,
    status: Status,
    *markers: str,
    file: str = "test_checkpoint_1.py",
    message: str | None = None,
    details: str | None = None,
) -> TestOutcome:
    return TestOutcome(
        node_id=f"tests/{file}::{name}",
        file=f"tests/{file}",
        line=3,
        status=status,
        duration_s=0.1,
        markers=markers,
        message=message,
        details=details,
    )


PROBE_KEY = "test-key"
RUNNER_STARTED = f"{START_PREFIX}{start_text(PROBE_KEY)}\n"
"""The first line of a test log whose runner was given PROBE_KEY."""
PROBE_OUTPUT = ".scbench/ctrf-report.json"
"""Where a probe leaves what it found: a file the executors bring back, that a probe's pytest (run
without --ctrf) never writes."""


def probe_command(
    workspace: Path, code: str, variables: dict[str, str] | None = None
) -> TestCommand:
    """A test command whose test process runs `code` (Python) as it collects the one test file,
    then exits 0 (unless the code exits first): arbitrary code, run by the real test runner.
    The probe's code may use PROBE_OUTPUT."""
    (workspace / "tests").mkdir(parents=True, exist_ok=True)
    ending = "import os as _os, sys as _sys\n_sys.stdout.flush()\n_os._exit(0)\n"
    (workspace / "tests" / "test_probe.py").write_text(
        f"PROBE_OUTPUT = {PROBE_OUTPUT!r}\n{code}\n\n{ending}"
    )
    return TestCommand(
        requirements=("pytest",),
        pytest_args=("-q", "-s", "-p", "no:cacheprovider", "tests/test_probe.py"),
        variables=variables or {},
        test_timeout_s=30,
    )


def shell(script: str) -> str:
    """Probe code that runs a bash script and exits with its exit code."""
    return f"import os, subprocess\nos._exit(subprocess.run(['bash', '-c', {script!r}]).returncode)"


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
def action_image(docker_client: docker.DockerClient) -> str:
    """The action's image, built from the repository's Dockerfile as GitHub's runner builds it."""
    try:
        docker_client.images.build(
            path=str(REPO_ROOT),
            tag=ACTION_IMAGE,
            buildargs={"BASE_IMAGE": ACTION_BASE_IMAGE},
            rm=True,
            forcerm=True,
        )
    except BuildError as error:
        log = "".join(
            str(entry.get("stream") or entry.get("error") or "") for entry in error.build_log
        )
        pytest.fail(f"the action image did not build: {error.msg}\n{log[-3000:]}", pytrace=False)
    return ACTION_IMAGE


def make_run(
    *checkpoints: CheckpointResult,
    problem: str = "demo",
    version: int = 1,
    policy: str = "core-cases",
    duration_s: float = 1.0,
) -> RunResult:
    """A run of one problem's checkpoints, as `evaluate` returns it."""
    return RunResult(
        policy=policy,
        executor="local",
        jobs=1,
        started_at="2026-01-01T00:00:00+00:00",
        duration_s=duration_s,
        problems=(ProblemResult(problem, f"/problems/{problem}", version, checkpoints),),
        tool_versions={"scbench-ci": "test"},
    )


def checkpoint_documents(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every checkpoint entry of a results.json document, problem by problem."""
    return [c for problem in results["problems"] for c in problem["checkpoints"]]
