"""`--reruns` on both executors, through the pipeline's own steps (command, executor, seal,
reports): a test that fails on its first attempt and passes on the next is flaky with its first
failure's message, one that always fails or hangs is failed after every rerun (each attempt
stopped by the per-test timeout), and a run without reruns is what it always was."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import docker
import pytest

from scbench_ci.executors.base import (
    EVALUATION_CACHE_SCOPE,
    ExecutionRequest,
    Executor,
    TestCommand,
)
from scbench_ci.executors.docker.cache import DATA_LABEL, RUNNER, marker_name
from scbench_ci.executors.docker.cache_build import runner_key
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.foundation.layout import PYTEST_LOG, REPORTS_DIR, SETUP_LOG
from scbench_ci.job.pytest_command import RERUN_PLUGIN, build_test_command
from scbench_ci.job.reports import Reports, Status, read_reports
from scbench_ci.job.workspace import stage_workspace
from scbench_ci.problem.load import load_problem
from scbench_ci.trust.seal import Seal, check_seal, read_report_files
from testing.problems import ProblemFolder

TEST_TIMEOUT_S = 2
SESSION_TIMEOUT_S = 300
"""Far below the hanging test's sleep: a rerun attempt without a timeout would hit it."""

CONFTEST = """
import shlex

import pytest

SETUPS = {"count": 0}


def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture
def fails_in_setup_once():
    SETUPS["count"] += 1
    if SETUPS["count"] == 1:
        raise RuntimeError("the fixture failed on setup 1")
"""
TESTS = '''
"""Each test counts its own attempts in the module: a rerun runs in the same session, so the
module is not imported again."""

import subprocess
import time

ATTEMPTS = {}


def attempt(name):
    ATTEMPTS[name] = ATTEMPTS.get(name, 0) + 1
    return ATTEMPTS[name]


def test_passes(entrypoint_argv):
    result = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=15)
    assert result.stdout == "hello\\n"


def test_fails_once():
    number = attempt("fails_once")
    assert number >= 2, f"failed on attempt {number}"


def test_errors_in_setup_once(fails_in_setup_once):
    pass


def test_always_fails():
    number = attempt("always_fails")
    assert number < 0, f"failed on attempt {number}"


def test_always_hangs():
    time.sleep(600)
'''
# The Docker one reaches the daemon through `getfixturevalue`, which the fixtures' markers do not
# see (tests/conftest.py).
EXECUTORS = ["local", pytest.param("docker", marks=pytest.mark.docker)]


class Run:
    def __init__(
        self, command: TestCommand, reports: Reports, report: dict[str, Any], log: str
    ) -> None:
        self.command = command
        self.reports = reports
        self.report = report
        """pytest-report.json as the runner wrote it."""
        self.log = log
        """setup.log (the Docker executor's notes on its cached runner are there)."""

    def outcomes(self) -> dict[str, tuple[Status, int]]:
        return {t.node_id.split("::")[1]: (t.status, t.reruns) for t in self.reports.tests}

    def message(self, name: str) -> str | None:
        (test,) = (t for t in self.reports.tests if t.node_id.endswith(f"::{name}"))
        return test.message


def run(tmp_path: Path, executor: Executor, reruns: int) -> Run:
    """As evaluation's `_evaluate_checkpoint` runs a checkpoint."""
    folder = ProblemFolder(
        tmp_path / "problem",
        {
            "name": "flaky",
            "entry_file": "main",
            "timeout": TEST_TIMEOUT_S,
            "checkpoints": {"checkpoint_1": {}},
        },
    )
    folder.write("tests/conftest.py", CONFTEST)
    folder.write("tests/test_checkpoint_1.py", TESTS)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text('print("hello")\n')
    problem = load_problem(folder.root)
    checkpoint = problem.checkpoint("checkpoint_1")
    workspace = stage_workspace(
        problem,
        checkpoint,
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / "workspace",
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    command = build_test_command(
        problem,
        checkpoint,
        entrypoint="python main.py",
        environment_env={},
        test_timeout_s=checkpoint.timeout_s,
        reruns=reruns,
    )
    key = secrets.token_hex(32)
    execution = executor.execute(
        ExecutionRequest(
            workspace=workspace.root,
            log_dir=logs,
            setup_commands=(),
            command=command,
            session_timeout_s=SESSION_TIMEOUT_S,
            seal_key=key,
            echo=None,
        )
    )
    log = (logs / PYTEST_LOG).read_text()
    assert execution.exit_code == 1, log
    files = read_report_files(workspace.root / REPORTS_DIR)
    assert isinstance(check_seal(logs / PYTEST_LOG, files, key, execution.exit_code), Seal), log
    reports = read_reports(files)
    assert isinstance(reports, Reports), reports
    assert files.pytest is not None
    setup_log = logs / SETUP_LOG
    return Run(
        command,
        reports,
        json.loads(files.pytest),
        setup_log.read_text() if setup_log.is_file() else "",
    )


def executor_for(name: str, request: pytest.FixtureRequest) -> Executor:
    if name == "local":
        return LocalExecutor()
    return DockerExecutor(DockerSettings(image=request.getfixturevalue("test_image")))


@pytest.mark.serial
@pytest.mark.parametrize("name", EXECUTORS)
def test_a_test_that_passes_on_a_rerun_is_flaky(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    started = time.monotonic()
    result = run(tmp_path, executor_for(name, request), reruns=2)
    assert result.outcomes() == {
        "test_passes": (Status.PASSED, 0),
        "test_fails_once": (Status.FLAKY, 1),
        "test_errors_in_setup_once": (Status.FLAKY, 1),
        "test_always_fails": (Status.FAILED, 2),
        "test_always_hangs": (Status.FAILED, 2),
    }
    # A flaky test tells why it failed first; a failed one, how its last attempt failed.
    assert (result.message("test_fails_once") or "").startswith(
        "AssertionError: failed on attempt 1"
    )
    assert (
        result.message("test_errors_in_setup_once") == "RuntimeError: the fixture failed on setup 1"
    )
    assert (result.message("test_always_fails") or "").startswith(
        "AssertionError: failed on attempt 3"
    )
    assert f"Timeout (>{TEST_TIMEOUT_S}.0s)" in (result.message("test_always_hangs") or "")
    # CTRF (status passed, flaky) and the JSON report agree: nothing to report.
    assert result.reports.problems == ()
    assert RERUN_PLUGIN in result.command.requirements
    assert "--reruns=2" in result.command.pytest_args
    # The three attempts of the hanging test were each stopped at the timeout.
    assert time.monotonic() - started < SESSION_TIMEOUT_S / 2


@pytest.mark.parametrize("name", EXECUTORS)
def test_without_reruns_nothing_is_rerun(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    result = run(tmp_path, executor_for(name, request), reruns=0)
    assert result.outcomes() == {
        "test_passes": (Status.PASSED, 0),
        "test_fails_once": (Status.FAILED, 0),
        "test_errors_in_setup_once": (Status.ERROR, 0),
        "test_always_fails": (Status.FAILED, 0),
        "test_always_hangs": (Status.FAILED, 0),
    }
    assert RERUN_PLUGIN not in result.command.requirements
    assert not any(arg.startswith("--reruns") for arg in result.command.pytest_args)
    assert not any("reruns" in test or "rerun_failure" in test for test in result.report["tests"])


def test_docker_reruns_use_a_runner_of_their_own_and_runs_without_keep_theirs(
    tmp_path: Path, docker_client: docker.DockerClient, test_image: str
) -> None:
    """The cached runner's key covers the requirements: the plugin makes a key of its own, and
    a run without reruns keeps the key (and the cached environment) it always had."""
    executor = DockerExecutor(DockerSettings(image=test_image))
    plain = run(tmp_path / "plain", executor, reruns=0)
    rerun = run(tmp_path / "rerun", executor, reruns=1)
    image_id = str(docker_client.images.get(test_image).id)
    plain_key = runner_key(image_id, plain.command.requirements, scope=EVALUATION_CACHE_SCOPE)
    rerun_key = runner_key(image_id, rerun.command.requirements, scope=EVALUATION_CACHE_SCOPE)
    assert plain_key != rerun_key
    for result, key in ((plain, plain_key), (rerun, rerun_key)):
        marker = docker_client.volumes.get(marker_name(RUNNER, key))
        data_volume = marker.attrs["Labels"][DATA_LABEL]
        assert f"test runner: the cached environment of volume {data_volume}" in result.log
    assert rerun.outcomes()["test_fails_once"] == (Status.FLAKY, 1)
