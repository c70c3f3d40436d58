"""The Docker executor against the real daemon: isolation, limits, copies in and out, cleanup."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import docker
import pytest

from scbench_ci.commands.cleanup import run_cleanup
from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.docker import cleanup as docker_cleanup
from scbench_ci.executors.docker.cache import CACHE_LABEL, STDLIB
from scbench_ci.executors.docker.container import RUN_LABEL, VERSION_LABEL
from scbench_ci.executors.docker.container_layout import (
    CACHED_RUNNER_DIR,
    HOME_DIR,
    RUN_DIR,
    WORKSPACE_DIR,
)
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.image_recipe import SCBENCH_BASE
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.processes import MACHINE_LABEL, OWNER_LABEL, owner
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.foundation.scbench_runner import PAPER
from scbench_ci.job.reports import Status
from scbench_ci.options import CleanupOptions, EvaluationOptions
from scbench_ci.pipeline.evaluation import evaluate_plan, plan_evaluation
from scbench_ci.pipeline.placement import OnThisMachine
from testing.probes import PROBE_KEY, PROBE_OUTPUT, RUNNER_STARTED, probe_command, shell
from testing.problems import ProblemFolder

UNPULLABLE = "127.0.0.1:9/scbench-ci/missing:0"
"""Refused at once: nothing listens on port 9 (the daemon treats 127.0.0.0/8 as insecure)."""
STDLIB_DIR = "/usr/local/lib/python3.12"
"""The test image's standard library folder, mounted compiled (cache.STDLIB)."""


@pytest.fixture(autouse=True)
def no_container_left(docker_client: docker.DockerClient) -> Iterator[None]:
    """None of this process's containers outlives a test (other processes' runs on the daemon
    are theirs)."""
    yield
    mine: dict[str, str | list[str] | bool] = {"label": [RUN_LABEL, f"{OWNER_LABEL}={owner()}"]}
    left = docker_client.containers.list(all=True, ignore_removed=True, filters=mine)
    for container in left:
        container.remove(force=True)
    assert [container.name for container in left] == []


def execute(
    tmp_path: Path,
    image: str | None,
    code: str,
    *,
    executor: DockerExecutor | None = None,
    setup: tuple[str, ...] = (),
    timeout: float = 60,
    echo: io.StringIO | None = None,
    cut_network: bool = False,
) -> ExecutionResult:
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True, exist_ok=True)
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    command = probe_command(workspace, code, {"SCBENCH_CHECKPOINT": "checkpoint_1"})
    # `image` as --image gives it: run as it is (an environment file's would be a base).
    chosen = executor or DockerExecutor(DockerSettings())
    if image is not None and chosen.settings.image is None:
        settings = dataclasses.replace(chosen.settings, image=image)
        chosen = DockerExecutor(settings, cache_scope=chosen.cache_scope)
    return chosen.execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=setup,
            command=command,
            session_timeout_s=timeout,
            seal_key=PROBE_KEY,
            echo=echo,
            cut_network=cut_network,
        )
    )


def reports(tmp_path: Path) -> Path:
    return tmp_path / "workspace" / ".scbench"


def setup_commands_log(tmp_path: Path) -> str:
    """setup.log after the test runner's line (and the building of its cached environment)."""
    log = (tmp_path / "logs" / SETUP_LOG).read_text()
    runner = log.index("[scbench-ci] test runner: ")
    return log[log.index("\n", runner) + 1 :]


CHECKPOINT_TESTS = """
import os
import pathlib
import subprocess


def test_runs_the_submission(entrypoint_argv):
    result = subprocess.run(entrypoint_argv, capture_output=True, text=True, check=True)
    assert result.stdout == "hello\\n"


def test_runs_as_uid_1000_in_the_workspace_with_a_writable_home():
    assert (os.getuid(), os.getgid()) == (1000, 1000)
    assert os.getcwd() == "/workspace"
    pathlib.Path(os.environ["HOME"], "probe").write_text("ok")


def test_sees_none_of_the_callers_secrets():
    assert "GITHUB_TOKEN" not in os.environ
    assert "ACTIONS_RUNTIME_TOKEN" not in os.environ


def test_fails_on_purpose():
    assert 1 == 2
"""


def test_an_evaluation_runs_the_tests_in_a_container(
    problem_folder: ProblemFolder,
    submission: Path,
    tmp_path: Path,
    test_image: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "secret")
    problem_folder.write("tests/test_checkpoint_1.py", CHECKPOINT_TESTS)
    options = EvaluationOptions(
        problems=(problem_folder.root,),
        checkpoint="checkpoint_1",
        submission=str(submission),
        output_dir=tmp_path / "out",
        policy="all-cases",
        session_timeout_s=300,
    )

    executor = DockerExecutor(DockerSettings(image=test_image))
    with contextlib.closing(OnThisMachine(executor)) as placement:
        result = evaluate_plan(options, plan_evaluation(options), placement, echo=None)

    [(_, checkpoint)] = result.checkpoints()
    assert result.executor == "docker"
    assert checkpoint.failure is None, checkpoint.failure
    assert checkpoint.pytest_exit_code == 1
    assert {test.id.split("::")[-1]: test.status for test in checkpoint.tests} == {
        "test_runs_the_submission": Status.PASSED,
        "test_runs_as_uid_1000_in_the_workspace_with_a_writable_home": Status.PASSED,
        "test_sees_none_of_the_callers_secrets": Status.PASSED,
        "test_fails_on_purpose": Status.FAILED,
    }
    assert not checkpoint.passed
    out = tmp_path / "out" / problem_folder.root.name / "checkpoint_1"
    assert {"ctrf-report.json", "pytest-report.json", "pytest.log"} <= {
        path.name for path in out.iterdir()
    }


def test_output_is_logged_and_echoed_and_the_exit_code_kept(
    tmp_path: Path, test_image: str
) -> None:
    echo = io.StringIO()
    # The --image flag beats the environment file's image (which does not exist). Without the
    # caches, the runner is installed in the run.
    result = execute(
        tmp_path,
        UNPULLABLE,
        shell("echo out; echo err >&2; exit 7"),
        executor=DockerExecutor(DockerSettings(image=test_image, use_cache=False)),
        echo=echo,
    )

    assert (result.exit_code, result.setup_exit_code, result.timed_out_in) == (7, None, None)
    assert (tmp_path / "logs" / PYTEST_LOG).read_text() == f"{RUNNER_STARTED}out\nerr\n"
    # Each phase timed, in order (no setup: no setup commands, and the network kept).
    assert list(result.phases) == ["image", "container", "runner", "tests", "collect", "cleanup"]
    assert all(seconds >= 0 for seconds in result.phases.values())
    assert sum(result.phases.values()) <= result.duration_s + 0.01
    setup_log = (tmp_path / "logs" / SETUP_LOG).read_text()
    assert setup_log == (
        "[scbench-ci] $ uv venv --quiet /scbench/runner/venv\n"
        "[scbench-ci] $ uv pip install --quiet --python /scbench/runner/venv/bin/python pytest\n"
    )
    assert echo.getvalue() == f"{setup_log}out\nerr\n"  # the runner's start line: log only


DUMP_ENVIRONMENT = """
import json, os, pathlib
home = pathlib.Path(os.environ["HOME"])
(home / "probe").write_text("ok")
pathlib.Path("/tmp/probe").write_text("ok")
json.dump(
    {"uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd(), "env": dict(os.environ)},
    open(PROBE_OUTPUT, "w"),
)
"""


@pytest.mark.parametrize("use_cache", [True, False])
def test_the_environment_is_built_from_scratch(
    tmp_path: Path,
    test_image: str,
    docker_client: docker.DockerClient,
    monkeypatch: pytest.MonkeyPatch,
    use_cache: bool,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("UV_INDEX_URL", "https://user:password@example.invalid/simple")
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", "https://pypi.org/simple/")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/host/only/ca.pem")

    result = execute(
        tmp_path,
        test_image,
        DUMP_ENVIRONMENT,
        executor=DockerExecutor(DockerSettings(use_cache=use_cache)),
    )

    assert result.exit_code == 0, (tmp_path / "logs" / PYTEST_LOG).read_text()
    seen = json.loads((tmp_path / "workspace" / PROBE_OUTPUT).read_text())
    assert (seen["uid"], seen["gid"], seen["cwd"]) == (1000, 1000, WORKSPACE_DIR)
    env = seen["env"]
    assert env["HOME"] == HOME_DIR
    # The tests' cache is uv's own under their home (the environment may name one, as SCBench's
    # does), never the shared one the runner installs from.
    assert "UV_CACHE_DIR" not in env
    assert env["SCBENCH_CHECKPOINT"] == "checkpoint_1"
    assert env["UV_EXTRA_INDEX_URL"] == "https://pypi.org/simple/"
    assert env["LANG"] == "C.UTF-8"
    assert env.get("REQUESTS_CA_BUNDLE") != "/host/only/ca.pem"
    # Nothing but ours, the image's own, and what Docker and the shell set.
    image_env = docker_client.images.get(test_image).attrs["Config"]["Env"] or []
    ours = {"HOME", "PATH", "SCBENCH_CHECKPOINT"}
    ours |= {"PYTEST_VERSION"}  # pytest's own
    ours |= {"UV", "_", "SHLVL"}  # what uvx and bash set under SCBench
    allowed = {
        *ours,
        "UV_EXTRA_INDEX_URL",
        "HOSTNAME",
        "PWD",
        *(e.split("=")[0] for e in image_env),
    }
    assert set(env) <= allowed


READ_LIMITS = """
import json, pathlib, time
cgroup = pathlib.Path("/sys/fs/cgroup")
files = {
    "memory": ["memory.max", "memory/memory.limit_in_bytes"],
    "pids": ["pids.max", "pids/pids.max"],
    "cpu": ["cpu.max", "cpu/cpu.cfs_quota_us"],
}
found = {}
for name, candidates in files.items():
    for candidate in candidates:
        if (cgroup / candidate).is_file():
            found[name] = (cgroup / candidate).read_text().split()[0]
            break
status = pathlib.Path("/proc/self/status").read_text()
found["capabilities"] = [l.split()[1] for l in status.splitlines() if l.startswith("CapEff")][0]
found["no_new_privs"] = [l.split()[1] for l in status.splitlines() if l.startswith("NoNewPrivs")][0]
found["docker_socket"] = pathlib.Path("/var/run/docker.sock").exists()
json.dump(found, open(PROBE_OUTPUT, "w"))
time.sleep(3)
"""


def test_limits_labels_and_isolation(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient
) -> None:
    executor = DockerExecutor(
        DockerSettings(
            image=test_image, memory="512m", cpus=1.5, pids_limit=256, test_network=False
        )
    )
    results: list[ExecutionResult] = []
    run = threading.Thread(
        target=lambda: results.append(execute(tmp_path, None, READ_LIMITS, executor=executor))
    )
    run.start()
    try:
        attributes = _running_container(docker_client)
    finally:
        run.join()

    assert results[0].exit_code == 0, (tmp_path / "logs" / PYTEST_LOG).read_text()
    labels = attributes["Config"]["Labels"]
    assert set(labels) >= {RUN_LABEL, VERSION_LABEL}
    host = attributes["HostConfig"]
    # Nothing to install (the runner's environment is cached, no setup) and the network cut for
    # the tests: no network at all.
    assert host["NetworkMode"] == "none"
    # Less what the workspace takes in the run's in-memory folders (the daemon's, not counted by
    # the container's cgroup): a few pages here.
    assert host["Memory"] == host["MemorySwap"] <= 512 * 1024**2
    assert (host["NanoCpus"], host["PidsLimit"]) == (1_500_000_000, 256)
    assert (host["CapDrop"], host["SecurityOpt"], host["Init"]) == (
        ["ALL"],
        ["no-new-privileges"],
        True,
    )
    assert not host.get("Binds")
    mounts = {m["Destination"]: (m["Type"], m.get("Name"), m["RW"]) for m in attributes["Mounts"]}
    assert set(mounts) == {RUN_DIR, WORKSPACE_DIR, "/tmp", CACHED_RUNNER_DIR, STDLIB_DIR}
    name = attributes["Name"].lstrip("/")
    assert mounts[RUN_DIR] == ("volume", name, True)
    assert mounts[WORKSPACE_DIR] == ("volume", f"{name}-workspace", True)
    assert mounts["/tmp"] == ("volume", f"{name}-tmp", True)
    kind, runner_volume, writable = mounts[CACHED_RUNNER_DIR]
    assert (kind, writable) == ("volume", False)
    assert runner_volume in (tmp_path / "logs" / SETUP_LOG).read_text()
    # The image's standard library, compiled: a copy, read-only.
    kind, stdlib_volume, writable = mounts[STDLIB_DIR]
    assert (kind, writable) == ("volume", False)
    assert docker_client.volumes.get(stdlib_volume).attrs["Labels"][CACHE_LABEL] == STDLIB
    assert host["ReadonlyRootfs"] is True
    assert not host.get("Tmpfs")
    seen = json.loads((tmp_path / "workspace" / PROBE_OUTPUT).read_text())
    assert 511 * 1024**2 < int(seen["memory"]) < 512 * 1024**2
    assert seen["pids"] == "256"
    assert seen["cpu"] == "150000"
    assert int(seen["capabilities"], 16) == 0
    assert seen["no_new_privs"] == "1"
    assert seen["docker_socket"] is False


def _running_container(client: docker.DockerClient) -> dict[str, Any]:
    """This process's run container (not a builder's, nor another process's run)."""
    deadline = time.monotonic() + 120
    mine: dict[str, str | list[str] | bool] = {"label": [RUN_LABEL, f"{OWNER_LABEL}={owner()}"]}
    while time.monotonic() < deadline:
        running = [
            container
            for container in client.containers.list(ignore_removed=True, filters=mine)
            if not str(container.name).startswith("scbench-ci-build-")
        ]
        if running:
            return dict(running[0].attrs)
        time.sleep(0.1)
    raise AssertionError("no scbench-ci container showed up")


CHECK_WORKSPACE = """
import json, os, pathlib
facts = {
    "owner": [os.stat(p).st_uid for p in (".", "main.py", "pkg", "pkg/util.py", ".scbench")],
    "link": os.readlink("link") if os.path.islink("link") else None,
    "executable": os.access("run.sh", os.X_OK),
}
pathlib.Path(PROBE_OUTPUT).write_text(json.dumps(facts))
os.remove(".scbench/stale.txt")  # gone in the container, so gone here too
pathlib.Path(".scbench/deep/er").mkdir(parents=True)
pathlib.Path(".scbench/deep/er/report.txt").write_text("deep")
os.symlink("/etc/passwd", ".scbench/pytest-report.json")
os.mkfifo(".scbench/pipe")
"""


def test_the_workspace_goes_in_and_reports_come_back_safely(
    tmp_path: Path, test_image: str
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "main.py").write_text("print('hello')\n")
    (workspace / "pkg" / "util.py").write_text("")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "link").symlink_to("/etc/hostname")
    (workspace / ".scbench").mkdir()
    (workspace / ".scbench" / "stale.txt").write_text("staged")
    echo = io.StringIO()

    result = execute(tmp_path, test_image, CHECK_WORKSPACE, echo=echo)

    assert result.exit_code == 0, (tmp_path / "logs" / PYTEST_LOG).read_text()
    out = reports(tmp_path)
    # Only the reports come back, and only as regular files.
    assert [path.name for path in out.iterdir()] == ["ctrf-report.json"]
    facts = json.loads((out / "ctrf-report.json").read_text())
    # The workspace folder itself is the runner's (sticky), what the submission brought its own.
    assert facts == {
        "owner": [1001, 1000, 1000, 1000, 1000],
        "link": "/etc/hostname",
        "executable": True,
    }
    assert (
        "warning: .scbench/pytest-report.json was not copied back: pytest-report.json is not a "
        "regular file" in echo.getvalue()
    )


def test_a_failing_setup_command_is_noted_and_the_rest_and_the_tests_run(
    tmp_path: Path, test_image: str
) -> None:
    """As SCBench's entry script, whose setup commands are lines without `set -e`."""
    result = execute(
        tmp_path,
        test_image,
        shell("echo tests ran"),
        setup=("echo preparing", "echo broken >&2; exit 3", "echo still"),
    )

    assert (result.exit_code, result.setup_exit_code, result.timed_out_in) == (0, 3, None)
    assert setup_commands_log(tmp_path) == (
        "[scbench-ci] $ echo preparing\npreparing\n"
        "[scbench-ci] $ echo broken >&2; exit 3\nbroken\n"
        "[scbench-ci] setup command failed with exit code 3\n"
        "[scbench-ci] $ echo still\nstill\n"
    )
    assert "tests ran\n" in (tmp_path / "logs" / PYTEST_LOG).read_text()


FIND_SLEEPERS = """
import json, pathlib
sleepers = [
    p.name for p in pathlib.Path("/proc").iterdir()
    if p.name.isdigit() and (p / "cmdline").read_bytes() == b"sleep\\x00300\\x00"
]
pathlib.Path(PROBE_OUTPUT).write_text(json.dumps(sleepers))
"""


@pytest.mark.serial
def test_what_setup_leaves_running_is_killed_before_the_tests(
    tmp_path: Path, test_image: str
) -> None:
    started = time.monotonic()
    result = execute(
        tmp_path,
        test_image,
        FIND_SLEEPERS,
        setup=("sleep 300 & echo started",),
    )

    assert (result.exit_code, result.setup_exit_code) == (0, None)
    assert json.loads((tmp_path / "workspace" / PROBE_OUTPUT).read_text()) == []
    assert result.leftover_processes == 1
    assert setup_commands_log(tmp_path) == (
        "[scbench-ci] $ sleep 300 & echo started\nstarted\n"
        "[scbench-ci] killed 1 process(es) still running after the setup ended\n"
    )
    assert time.monotonic() - started < 30


def test_a_run_past_the_memory_limit_is_killed(tmp_path: Path, test_image: str) -> None:
    result = execute(
        tmp_path,
        test_image,
        "b = bytearray(400 * 1024 * 1024)\nprint('survived')",
        executor=DockerExecutor(DockerSettings(memory="128m")),
    )

    assert result.exit_code == 137
    assert "survived" not in (tmp_path / "logs" / PYTEST_LOG).read_text()


@pytest.mark.serial
@pytest.mark.parametrize("phase", ["setup", "tests"])
def test_the_session_timeout_stops_the_run(tmp_path: Path, test_image: str, phase: str) -> None:
    sleeper = "echo started; sleep 60"
    setup = (sleeper,) if phase == "setup" else ()
    started = time.monotonic()

    result = execute(tmp_path, test_image, shell(sleeper), setup=setup, timeout=3)

    assert (result.exit_code, result.timed_out_in) == (None, phase)
    assert time.monotonic() - started < 20
    log = (tmp_path / "logs" / (SETUP_LOG if phase == "setup" else PYTEST_LOG)).read_text()
    assert "started\n" in log
    assert f"{phase} stopped at the session timeout (3 s)" in log


def test_an_image_that_cannot_be_pulled_is_one_clear_line(tmp_path: Path) -> None:
    echo = io.StringIO()

    with pytest.raises(InfrastructureError) as raised:
        execute(tmp_path, UNPULLABLE, "pass", echo=echo)

    message = str(raised.value)
    assert message.startswith(f"could not pull {UNPULLABLE}: ")
    assert message.endswith("; pull or build it yourself, or pass --image")
    assert "\n" not in message
    assert f"pulling {UNPULLABLE}" in echo.getvalue()


def test_an_unreachable_daemon_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")

    unreachable = (
        f"cannot reach the Docker daemon at DOCKER_HOST=unix://{tmp_path}/no.sock: "
        "start Docker (or point DOCKER_HOST at a running daemon), or pass --executor local to "
        "run the tests on this machine without isolation"
    )
    with pytest.raises(InfrastructureError, match=f"^{re.escape(unreachable)}$"):
        execute(tmp_path, None, "pass")
    with pytest.raises(InfrastructureError, match=f"^{re.escape(unreachable)}$"):
        DockerExecutor(DockerSettings()).preflight(None, None)


class _OldDaemon(BaseHTTPRequestHandler):
    """A daemon whose API (1.12) is older than the Docker SDK can use."""

    def do_GET(self) -> None:
        body = json.dumps({"ApiVersion": "1.12", "MinAPIVersion": "1.12"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_daemon_too_old_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OldDaemon)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"tcp://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("DOCKER_HOST", host)
    try:
        with pytest.raises(InfrastructureError) as raised:
            DockerExecutor(DockerSettings()).preflight(None, None)
    finally:
        server.shutdown()
        server.server_close()

    assert str(raised.value) == (
        f"the Docker daemon at DOCKER_HOST={host} is too old (its API is below 1.24): "
        "upgrade Docker, or pass --executor local to run the tests on this machine without "
        "isolation"
    )


def test_preflight_finds_the_image_the_run_would_use(
    test_image: str, evaluation_image: str, paper_evaluation_image: str
) -> None:
    echo = io.StringIO()
    # An environment file's image is a base: the runner's layer on it, built once (the
    # default's), SCBench 1.0's unless the run follows the paper's runner.
    DockerExecutor(DockerSettings()).preflight(SCBENCH_BASE, echo)
    DockerExecutor(DockerSettings()).preflight(None, echo)
    DockerExecutor(DockerSettings()).preflight(SCBENCH_BASE, echo, PAPER)
    DockerExecutor(DockerSettings()).preflight(None, echo, PAPER)
    # --image comes before the environment file's image, as in a run.
    DockerExecutor(DockerSettings(image=test_image)).preflight(UNPULLABLE, echo)
    assert echo.getvalue() == ""

    with pytest.raises(InfrastructureError, match=f"^could not pull {re.escape(UNPULLABLE)}: "):
        DockerExecutor(DockerSettings()).preflight(UNPULLABLE, echo)


def test_cleanup_lists_then_removes_this_machine_s_leftovers(
    docker_client: docker.DockerClient,
    test_image: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """By default it says what it would remove and removes nothing; with --yes it removes what
    runs of this machine that ended left (containers, volumes, networks), and leaves a run in
    progress, another machine's run and what is no run's."""
    machine = f"test-{uuid.uuid4().hex[:12]}"  # no other run on this daemon is this machine's
    monkeypatch.setattr(docker_cleanup, "machine_id", lambda: machine)
    # A run whose owner is gone: no process of this host has that pid (over Linux's pid_max).
    gone = {RUN_LABEL: "left-behind", OWNER_LABEL: owner(4_194_305), MACHINE_LABEL: machine}
    running = {RUN_LABEL: "in-progress", OWNER_LABEL: owner(), MACHINE_LABEL: machine}
    another = {RUN_LABEL: "another's", OWNER_LABEL: owner(4_194_305), MACHINE_LABEL: "elsewhere"}
    made = [
        docker_client.containers.create(test_image, ["sleep", "infinity"], labels=labels)
        for labels in (gone, running, another, {})
    ]
    left_volume = docker_client.volumes.create(labels=gone)
    left_network = docker_client.networks.create(f"scbench-ci-test-{machine}", labels=gone)
    leftover = made[0]
    try:
        assert run_cleanup(CleanupOptions()) == 0
        said = capsys.readouterr().out.splitlines()
        assert f"would remove container {leftover.name} ({leftover.short_id})" in said
        assert f"would remove volume {left_volume.name}" in said
        assert f"would remove network {left_network.name}" in said
        assert said[-1].startswith("1 container(s), 1 volume(s), 1 network(s) would be removed")
        for container in made:
            container.reload()
        left_volume.reload()

        assert run_cleanup(CleanupOptions(yes=True)) == 0

        said = capsys.readouterr().out.splitlines()
        assert f"removed container {leftover.name} ({leftover.short_id})" in said
        assert f"removed volume {left_volume.name}" in said
        assert f"removed network {left_network.name}" in said
        assert any(line.startswith(f"kept container {made[1].name}") for line in said)
        with pytest.raises(docker.errors.NotFound):
            leftover.reload()
        with pytest.raises(docker.errors.NotFound):
            left_volume.reload()
        with pytest.raises(docker.errors.NotFound):
            left_network.reload()
        for container in made[1:]:
            container.reload()
    finally:
        for container in made:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        for thing in (left_volume, left_network):
            with contextlib.suppress(docker.errors.NotFound):
                thing.remove()


ENVIRONMENT_PLACE_TESTS = """
import os
import pathlib
import subprocess


def test_the_setup_ran_as_the_environment_s_user_in_its_workdir():
    assert pathlib.Path("setup.txt").read_text().split() == ["2000:3000", "/app"]


def test_the_tests_run_as_the_environment_s_user_in_its_workdir(entrypoint_argv):
    assert (os.getuid(), os.getgid(), os.getcwd()) == (2000, 3000, "/app")
    assert pathlib.Path("main.py").stat().st_uid == 2000
    pathlib.Path("written_by_the_tests").write_text("ok")
    pathlib.Path(os.environ["HOME"], "probe").write_text("ok")
    result = subprocess.run(entrypoint_argv, capture_output=True, text=True, check=True)
    assert result.stdout == "hello\\n"


def test_the_problem_s_tests_are_not_the_tests_user_s():
    assert pathlib.Path(".evaluation_tests").stat().st_uid != os.getuid()
"""


def test_an_environment_file_s_user_and_workdir_are_honoured(
    problem_folder: ProblemFolder,
    submission: Path,
    tmp_path: Path,
    evaluation_image: str,
) -> None:
    """As SCBench's `docker run --user <get_eval_user()> --workdir <docker.workdir>`: setup and
    the tests run as the file's user in its folder, which holds the workspace; the reports come
    back from there."""
    problem_folder.write("tests/test_checkpoint_1.py", ENVIRONMENT_PLACE_TESTS)
    environment = tmp_path / "environment.yaml"
    environment.write_text(
        f"docker: {{image: '{SCBENCH_BASE}', user: '2000:3000', workdir: /app}}\n"
        "setup: {commands: ['echo $(id -u):$(id -g) $(pwd) > setup.txt']}\n"
        "commands: {command: python}\n"
    )
    options = EvaluationOptions(
        problems=(problem_folder.root,),
        checkpoint="checkpoint_1",
        submission=str(submission),
        output_dir=tmp_path / "out",
        policy="all-cases",
        session_timeout_s=300,
        environment=environment,
    )

    executor = DockerExecutor(DockerSettings())
    with contextlib.closing(OnThisMachine(executor)) as placement:
        result = evaluate_plan(options, plan_evaluation(options), placement, echo=None)

    [(_, checkpoint)] = result.checkpoints()
    assert checkpoint.failure is None, checkpoint.failure
    assert {test.id.split("::")[-1]: test.status for test in checkpoint.tests} == {
        "test_the_setup_ran_as_the_environment_s_user_in_its_workdir": Status.PASSED,
        "test_the_tests_run_as_the_environment_s_user_in_its_workdir": Status.PASSED,
        "test_the_problem_s_tests_are_not_the_tests_user_s": Status.PASSED,
    }
    assert checkpoint.passed
    assert checkpoint.warnings == ()


LIST_NETWORKS = """
import json, os
json.dump(sorted(os.listdir("/sys/class/net")), open(PROBE_OUTPUT, "w"))
"""


@pytest.mark.parametrize("cut_network", [False, True])
def test_a_request_may_cut_the_network_the_settings_give_the_tests(
    tmp_path: Path, test_image: str, cut_network: bool
) -> None:
    """`check`'s run that finds the tests that reach the network: cut after setup (which keeps
    it), whatever the settings (the default: the tests have it, as under SCBench)."""
    result = execute(
        tmp_path,
        test_image,
        LIST_NETWORKS,
        setup=("ls /sys/class/net | grep -qv '^lo$'",),
        cut_network=cut_network,
    )

    assert (result.exit_code, result.setup_exit_code) == (0, None)
    seen = json.loads((tmp_path / "workspace" / PROBE_OUTPUT).read_text())
    assert (seen == ["lo"]) is cut_network
