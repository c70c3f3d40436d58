"""Run setup and tests in a throwaway Docker container, under limits, as users that cannot touch
what decides the verdict.

Nothing on this machine is mounted into the container: the workspace goes in as a tar archive and
`.scbench/` comes back out as one, so this works as well from a container that talks to the host's
daemon (a GitHub Docker action), where this machine's paths mean nothing to the daemon.

Inside, the image is read-only; everything a run writes lives in a size-capped in-memory volume of
its own (`/scbench`) or in `/tmp` (capped alike), and is gone with the container. Three users:

- the runner (uid 1001) installs pytest and its plugins into `/scbench/runner` before any of the
  submission's code runs, and owns the problem's tests, `pytest.ini` and the workspace folder
  itself, which the tests user may add to but not rename, replace or change;
- the tests user (uid 1000) runs setup and the tests;
- the idle process the container lives on runs as nobody, so the tests cannot kill it.

Only the uv cache the runner installs from (a named volume only the runner can write) outlives a
run. The network is cut after setup unless the tests are allowed it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.types import Mount
from docker.utils import parse_bytes

from scbench_ci import __version__, archive, pytest_runner
from scbench_ci.child_env import index_variables, run_environment
from scbench_ci.errors import InfrastructureError, UsageError
from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import Plan, Step, run_phases
from scbench_ci.problem import TESTS_DIR
from scbench_ci.seal import MAX_REPORT_BYTES, REPORT_NAMES
from scbench_ci.workspace import PYTEST_INI, REPORTS_DIR

DEFAULT_IMAGE = "ghcr.io/astral-sh/uv:python3.12-bookworm-slim"
DEFAULT_MEMORY = "4g"
DEFAULT_CPUS = 2.0
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_DISK = "2g"
INODES_PER_MIB = 128
RUN_LABEL = "dev.scbench-ci.run"
VERSION_LABEL = "dev.scbench-ci.version"
CACHE_VOLUME = "scbench-ci-runner-cache"

RUN_DIR = "/scbench"
WORKSPACE_DIR = f"{RUN_DIR}/workspace"
HOME_DIR = f"{RUN_DIR}/home"
TESTS_CACHE_DIR = f"{RUN_DIR}/uv-cache"
RUNNER_DIR = f"{RUN_DIR}/runner"
RUNNER_HOME = f"{RUNNER_DIR}/home"
RUNNER_VENV = f"{RUNNER_DIR}/venv"
RUNNER_SCRIPT = f"{RUNNER_DIR}/pytest_runner.py"
CACHE_MOUNT = "/uv-cache"
RUNNER_CACHE_DIR = f"{CACHE_MOUNT}/runner"
UNCACHED_RUNNER_CACHE_DIR = f"{RUNNER_DIR}/uv-cache"
TEST_UID = TEST_GID = 1000
TEST_USER = f"{TEST_UID}:{TEST_GID}"
RUNNER_UID = RUNNER_GID = 1001
RUNNER_USER = f"{RUNNER_UID}:{RUNNER_GID}"
IDLE_USER = "65534:65534"
RUNNER_OWNED = frozenset({TESTS_DIR, PYTEST_INI})
"""The workspace entries the tests may read but not change: the problem's tests and pytest.ini."""
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_SOCKET = "/var/run/docker.sock"
API_TIMEOUT_S = 120
PING_TIMEOUT_S = 3
_EXIT_POLL_S = 0.05
# Docker carries stdout and stderr apart and may deliver them out of order: one pipe keeps the
# log in the order it was written, as the local executor's is.
_ONE_STREAM = ("/bin/sh", "-c", 'exec "$@" 2>&1', "sh")
# /bin/sh is the one tool every image has; kill(-1) reaches every process the caller may signal,
# but not the caller itself, nor the idle process (another uid).
_KILL_LEFTOVERS = (
    'n=0; for p in /proc/[0-9]*; do [ -O "$p" ] && [ "${p#/proc/}" != $$ ] && n=$((n + 1)); done; '
    "kill -9 -1 2>/dev/null; echo $n"
)
# The container's cgroup counters (v2, else v1): processes the OOM killer ended, forks refused;
# and the run's folders that are full (`full <folder>`).
_LIMIT_COUNTERS = (
    "for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control "
    "/sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; "
    'do [ -r "$f" ] && sed "s|^|${f##*/} |" "$f"; done; '
    f"df -P {RUN_DIR} /tmp | awk 'NR > 1 && $4 < 1024 {{print \"full\", $6, 1}}'; true"
)


class DockerExecutor:
    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        memory: str = DEFAULT_MEMORY,
        cpus: float = DEFAULT_CPUS,
        pids_limit: int = DEFAULT_PIDS_LIMIT,
        disk: str = DEFAULT_DISK,
        use_cache: bool = True,
        test_network: bool = False,
    ) -> None:
        self.image = image
        self.memory = checked_size("--memory", memory)
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.disk = checked_size("--disk", disk)
        self.use_cache = use_cache
        self.test_network = test_network

    def workspace_dir(self, workspace: Path) -> str:
        return WORKSPACE_DIR

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        started = time.monotonic()
        image = self.image or request.image or DEFAULT_IMAGE
        run_id = uuid.uuid4().hex
        name = _run_name(run_id)
        with docker_errors(), contextlib.closing(connect()) as client:
            ensure_image(client, image, request.echo)
            try:
                self._create_volume(client, name, run_id)
                container = self._create(client, image, name, run_id)
                # A volume in memory is there once the container runs, not before.
                container.start()
                _copy_in(container, request.workspace, self.use_cache)
                plan = self._plan(container, request)
                result = run_phases(request, plan, started)
                reports = request.workspace / REPORTS_DIR
                shutil.rmtree(reports, ignore_errors=True)
                reports.mkdir()
                container.reload()
                # After the session timeout the container is stopped, and its volume gone.
                if container.status == "running":
                    _copy_out(container, reports, request.echo)
                    result = dataclasses.replace(result, limits_hit=self._limits_hit(container))
            finally:
                # Also on KeyboardInterrupt and SystemExit; by name, in case create was cut short.
                with contextlib.suppress(NotFound):
                    client.api.remove_container(name, force=True, v=True)
                with contextlib.suppress(NotFound):
                    client.api.remove_volume(name, force=True)
        return result

    @property
    def _tmpfs_limits(self) -> str:
        size = parse_bytes(self.disk)
        return f"size={size},nr_inodes={max(16384, size // 1024**2 * INODES_PER_MIB)}"

    @property
    def _runner_cache_dir(self) -> str:
        return RUNNER_CACHE_DIR if self.use_cache else UNCACHED_RUNNER_CACHE_DIR

    def _create_volume(self, client: docker.DockerClient, name: str, run_id: str) -> None:
        client.volumes.create(
            name,
            driver="local",
            driver_opts={
                "type": "tmpfs",
                "device": "tmpfs",
                "o": f"{self._tmpfs_limits},mode=0755,nosuid,nodev",
            },
            labels={RUN_LABEL: run_id, VERSION_LABEL: __version__},
        )

    def _create(self, client: docker.DockerClient, image: str, name: str, run_id: str) -> Container:
        mounts = [Mount(RUN_DIR, name, type="volume")]
        if self.use_cache:
            mounts.append(Mount(CACHE_MOUNT, CACHE_VOLUME, type="volume"))
        return client.containers.create(
            image,
            entrypoint=["sleep", "infinity"],
            name=name,
            user=IDLE_USER,
            init=True,
            working_dir="/",
            labels={RUN_LABEL: run_id, VERSION_LABEL: __version__},
            mem_limit=self.memory,
            memswap_limit=self.memory,
            nano_cpus=round(self.cpus * 1e9),
            pids_limit=self.pids_limit,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs={"/tmp": f"{self._tmpfs_limits},mode=1777,exec"},
            mounts=mounts,
        )

    def _plan(self, container: Container, request: ExecutionRequest) -> Plan:
        tests_env = run_environment(
            path=CONTAINER_PATH,
            home=HOME_DIR,
            extra={**index_variables(os.environ), "UV_CACHE_DIR": TESTS_CACHE_DIR},
            variables=request.command.variables,
        )
        runner_env = run_environment(
            path=CONTAINER_PATH,
            home=RUNNER_HOME,
            extra={**index_variables(os.environ), "UV_CACHE_DIR": self._runner_cache_dir},
            variables={},
        )

        def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
            if step.user == "runner":
                env, user, workdir = runner_env, RUNNER_USER, RUNNER_DIR
            else:
                env, user, workdir = {**tests_env, **step.extra_env}, TEST_USER, WORKSPACE_DIR
            return _run(container, step.argv, env, user, workdir, log, deadline)

        python = f"{RUNNER_VENV}/bin/python"
        install = (
            ["uv", "venv", "--quiet", RUNNER_VENV],
            ["uv", "pip", "install", "--quiet", "--python", python, *request.command.requirements],
        )
        test_argv = request.command.runner_argv([python], RUNNER_SCRIPT, pytest_runner.KILL_OTHERS)
        cut = None if self.test_network else lambda: _disconnect(container)
        return Plan(run, install, test_argv, before_tests=cut)

    def _limits_hit(self, container: Container) -> tuple[str, ...]:
        counters = _limit_counters(container)
        hit = []
        if killed := counters.get("oom_kill", 0):
            hit.append(
                f"the memory limit ({self.memory}) was reached: the kernel killed {killed} "
                "process(es)"
            )
        if refused := counters.get("max", 0):
            hit.append(
                f"the process limit ({self.pids_limit}) was reached: {refused} attempt(s) to "
                "start a process failed"
            )
        full = [folder for folder in (RUN_DIR, "/tmp") if counters.get(f"full {folder}")]
        if full:
            hit.append(f"the disk limit ({self.disk}) was reached: {' and '.join(full)} full")
        return tuple(hit)


def checked_size(option: str, text: str) -> str:
    try:
        size = parse_bytes(text)
    except DockerException:
        size = 0
    if size <= 0:
        raise UsageError(f"{option}: not a size like 512m or 4g: {text!r}")
    return text


def docker_available() -> bool:
    """Whether a Docker daemon answers right now (for `--executor auto`)."""
    try:
        with contextlib.closing(docker.from_env(timeout=PING_TIMEOUT_S)) as client:
            return bool(client.ping())
    except (DockerException, requests.RequestException):
        return False


def connect() -> docker.DockerClient:
    """A client for the daemon DOCKER_HOST names (else the local socket), or a one-line error."""
    try:
        return docker.from_env(timeout=API_TIMEOUT_S)
    except DockerException as error:
        host = os.environ.get("DOCKER_HOST")
        where = f"DOCKER_HOST={host}" if host else DEFAULT_SOCKET
        if "Permission denied" in str(error):
            raise InfrastructureError(
                f"permission denied on the Docker socket ({where}): "
                "add your user to the docker group, or run as root"
            ) from None
        raise InfrastructureError(
            f"cannot reach the Docker daemon at {where}: start Docker, or use --executor local"
        ) from None


@contextlib.contextmanager
def docker_errors() -> Iterator[None]:
    """Turn whatever the Docker SDK raises into a one-line InfrastructureError."""
    try:
        yield
    except (DockerException, requests.RequestException) as error:
        raise InfrastructureError(f"Docker failed: {_reason(error)}") from None


def ensure_image(client: docker.DockerClient, image: str, echo: TextIO | None) -> None:
    """Pull the image unless it is already here, showing the progress on `echo`."""
    try:
        client.images.get(image)
        return
    except ImageNotFound:
        pass
    except APIError as error:  # a malformed name
        raise InfrastructureError(f"cannot use image {image!r}: {_reason(error)}") from None
    _say(echo, f"pulling {image} ...")
    try:
        _show_progress(client.api.pull(image, stream=True, decode=True), echo)
    except (DockerException, requests.RequestException) as error:
        raise _pull_failed(image, _reason(error)) from None
    except _PullError as error:
        raise _pull_failed(image, str(error)) from None


class _PullError(Exception):
    """An error the daemon reported in the middle of the pull's progress stream."""


def _show_progress(events: Iterable[Mapping[str, Any]], echo: TextIO | None) -> None:
    shown = set()
    for event in events:
        if "error" in event:
            raise _PullError(_first_line(event["error"]))
        status = event.get("status", "")
        line = f"{event['id']}: {status}" if event.get("id") else status
        if line and line not in shown:
            shown.add(line)
            _say(echo, f"  {line}")


def _pull_failed(image: str, reason: str) -> InfrastructureError:
    return InfrastructureError(
        f"could not pull {image}: {reason}; pull or build it yourself, or pass --image"
    )


def _reason(error: Exception) -> str:
    explanation = getattr(error, "explanation", None)
    return _first_line(str(explanation or error))


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else "unknown error"


def _say(echo: TextIO | None, text: str) -> None:
    if echo is not None:
        echo.write(f"{text}\n")
        echo.flush()


def _run_name(run_id: str) -> str:
    """The name of the run's container and of its volume."""
    return f"scbench-ci-{run_id}"


def _copy_in(container: Container, workspace: Path, use_cache: bool) -> None:
    """The workspace and the folders of both users, into the run's volume; the runner's cache
    folder there too, or in the shared cache volume."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            _add_workspace(tar, workspace)
            for folder, uid, gid, mode in (
                (HOME_DIR, TEST_UID, TEST_GID, 0o700),
                (TESTS_CACHE_DIR, TEST_UID, TEST_GID, 0o700),
                (RUNNER_DIR, RUNNER_UID, RUNNER_GID, 0o755),
                (RUNNER_HOME, RUNNER_UID, RUNNER_GID, 0o700),
            ):
                archive.add_directory(tar, _in_run_dir(folder), uid, gid, mode)
            if not use_cache:
                archive.add_directory(
                    tar, _in_run_dir(UNCACHED_RUNNER_CACHE_DIR), RUNNER_UID, RUNNER_GID, 0o700
                )
            script = Path(pytest_runner.__file__).read_bytes()
            archive.add_file(tar, _in_run_dir(RUNNER_SCRIPT), script, RUNNER_UID, RUNNER_GID, 0o644)
        buffer.seek(0)
        container.put_archive(RUN_DIR, buffer)
    if use_cache:
        with tempfile.TemporaryFile() as buffer:
            with archive.open_writer(buffer) as tar:
                name = RUNNER_CACHE_DIR.removeprefix(f"{CACHE_MOUNT}/")
                archive.add_directory(tar, name, RUNNER_UID, RUNNER_GID, 0o700)
            buffer.seek(0)
            container.put_archive(CACHE_MOUNT, buffer)


def _add_workspace(tar: tarfile.TarFile, workspace: Path) -> None:
    """The submission's files owned by the tests user; the tests, pytest.ini and the folder itself
    by the runner (sticky: the tests user may add entries, but not rename or remove the runner's).
    """
    root = _in_run_dir(WORKSPACE_DIR)
    archive.add_directory(tar, root, RUNNER_UID, RUNNER_GID, 0o1777)
    for entry in sorted(os.scandir(workspace), key=lambda entry: entry.name):
        if entry.name in RUNNER_OWNED:
            owner, mask = (RUNNER_UID, RUNNER_GID), 0o755
        else:
            owner, mask = (TEST_UID, TEST_GID), 0o777
        archive.add_tree(tar, Path(entry.path), f"{root}/{entry.name}", *owner, mask)


def _in_run_dir(path: str) -> str:
    return path.removeprefix(f"{RUN_DIR}/")


def _copy_out(container: Container, target: Path, echo: TextIO | None) -> None:
    """Write each report the container's `.scbench/` holds as a regular file into the empty folder
    `target`; anything else there is the run's business, and is left in the container."""
    for name in REPORT_NAMES:
        try:
            chunks, _ = container.get_archive(f"{WORKSPACE_DIR}/{REPORTS_DIR}/{name}")
        except NotFound:
            continue
        content = archive.read_member(chunks, name, MAX_REPORT_BYTES)
        if isinstance(content, str):
            _say(echo, f"warning: {REPORTS_DIR}/{name} was not copied back: {content}")
        else:
            pytest_runner.write_new(target / name, content)


def _run(
    container: Container,
    argv: list[str],
    env: dict[str, str],
    user: str,
    workdir: str,
    log: LogSink,
    deadline: float,
) -> tuple[int | None, int]:
    """Run as `user` to completion or to the deadline.

    Returns the exit code (None when the deadline came first, and the container was killed) and
    how many processes it left behind. Either way, nothing it started runs when this returns.
    """
    api = _api(container)
    exec_id = api.exec_create(
        container.id,
        [*_ONE_STREAM, *argv],
        user=user,
        environment=env,
        workdir=workdir,
    )["Id"]
    output = api.exec_start(exec_id, stream=True)
    reader = threading.Thread(target=_copy_output, args=(output, log), daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    code = None if reader.is_alive() else _exit_code(api, exec_id, deadline)
    if code is None:
        container.kill()
        reader.join()
        return None, 0
    return code, _kill_leftovers(container, user)


def _api(container: Container) -> docker.APIClient:
    assert container.client is not None, "a container from a client keeps it"
    return container.client.api


def _copy_output(output: Iterable[bytes], log: LogSink) -> None:
    for chunk in output:
        log.write(chunk)


def _exit_code(api: docker.APIClient, exec_id: str, deadline: float) -> int | None:
    """The exit code once the process has ended (its output can close before); None at the
    deadline."""
    while True:
        state = api.exec_inspect(exec_id)
        if not state["Running"]:
            if state["ExitCode"] is None:
                raise InfrastructureError("the container stopped in the middle of the run")
            return int(state["ExitCode"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(_EXIT_POLL_S)


def _kill_leftovers(container: Container, user: str) -> int:
    """Kill what the command left running (any process of its user), and count it."""
    count = _exec_output(container, _KILL_LEFTOVERS, user).strip()
    return int(count) if count.isdigit() else 0


def _limit_counters(container: Container) -> dict[str, int]:
    """`oom_kill` (processes the OOM killer ended), `max` (forks refused at the PID limit) and
    `full <folder>` (under 1 MiB left)."""
    counters: dict[str, int] = {}
    for line in _exec_output(container, _LIMIT_COUNTERS, IDLE_USER).splitlines():
        match line.split():
            case [_, ("oom_kill" | "max") as name, value] if value.isdigit():
                counters[name] = int(value)
            case ["full", folder, _]:
                counters[f"full {folder}"] = 1
    return counters


def _exec_output(container: Container, script: str, user: str) -> str:
    api = _api(container)
    exec_id = api.exec_create(container.id, ["/bin/sh", "-c", script], user=user)
    stdout, _ = api.exec_start(exec_id["Id"], demux=True)
    return (stdout or b"").decode(errors="replace")


def _disconnect(container: Container) -> None:
    """Leave every network: only loopback is left."""
    container.reload()
    api = _api(container)
    for network in container.attrs["NetworkSettings"]["Networks"]:
        api.disconnect_container_from_network(str(container.id), network)
