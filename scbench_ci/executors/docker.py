"""Run setup and tests in a throwaway Docker container, as uid 1000, under limits.

Nothing on this machine is mounted into the container: the workspace goes in as a tar archive and
`.scbench/` comes back out as one, so this works as well from a container that talks to the host's
daemon (a GitHub Docker action), where this machine's paths mean nothing to the daemon. Only a named
volume, the uv cache, outlives a run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
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

from scbench_ci import __version__, archive
from scbench_ci.child_env import index_variables, run_environment
from scbench_ci.errors import InfrastructureError, UsageError
from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import run_phases
from scbench_ci.workspace import REPORTS_DIR

DEFAULT_IMAGE = "ghcr.io/astral-sh/uv:python3.12-bookworm-slim"
DEFAULT_MEMORY = "4g"
DEFAULT_CPUS = 2.0
DEFAULT_PIDS_LIMIT = 1024
RUN_LABEL = "dev.scbench-ci.run"
VERSION_LABEL = "dev.scbench-ci.version"
CACHE_VOLUME = "scbench-ci-uv-cache"

WORKSPACE_DIR = "/workspace"
TEST_UID = TEST_GID = 1000
TEST_USER = f"{TEST_UID}:{TEST_GID}"
# The idle process the container lives on runs as nobody, so the uid of the tests cannot kill it.
IDLE_USER = "65534:65534"
HOME_DIR = "/tmp/scbench-home"
CACHE_DIR = "/uv-cache"
UNCACHED_DIR = "/tmp/scbench-uv-cache"
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


class DockerExecutor:
    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        memory: str = DEFAULT_MEMORY,
        cpus: float = DEFAULT_CPUS,
        pids_limit: int = DEFAULT_PIDS_LIMIT,
        use_cache: bool = True,
    ) -> None:
        self.image = image
        self.memory = _checked_memory(memory)
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.use_cache = use_cache

    def workspace_dir(self, workspace: Path) -> str:
        return WORKSPACE_DIR

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        started = time.monotonic()
        image = self.image or request.image or DEFAULT_IMAGE
        run_id = uuid.uuid4().hex
        with docker_errors(), contextlib.closing(connect()) as client:
            ensure_image(client, image, request.echo)
            try:
                container = self._create(client, image, run_id)
                _copy_in(container, request.workspace, self._cache_dir)
                container.start()
                env = self._environment(request)

                def run(argv: list[str], log: LogSink, deadline: float) -> tuple[int | None, int]:
                    return _run(container, argv, env, log, deadline)

                result = run_phases(request, run, started)
                _copy_out(container, request.workspace / REPORTS_DIR, request.echo)
            finally:
                # Also on KeyboardInterrupt and SystemExit; by name, in case create was cut short.
                with contextlib.suppress(NotFound):
                    client.api.remove_container(_container_name(run_id), force=True, v=True)
        return result

    @property
    def _cache_dir(self) -> str:
        return CACHE_DIR if self.use_cache else UNCACHED_DIR

    def _create(self, client: docker.DockerClient, image: str, run_id: str) -> Container:
        return client.containers.create(
            image,
            entrypoint=["sleep", "infinity"],
            name=_container_name(run_id),
            user=IDLE_USER,
            init=True,
            working_dir=WORKSPACE_DIR,
            labels={RUN_LABEL: run_id, VERSION_LABEL: __version__},
            mem_limit=self.memory,
            memswap_limit=self.memory,
            nano_cpus=round(self.cpus * 1e9),
            pids_limit=self.pids_limit,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mounts=[Mount(CACHE_DIR, CACHE_VOLUME, type="volume")] if self.use_cache else [],
        )

    def _environment(self, request: ExecutionRequest) -> dict[str, str]:
        # The image has its own CA bundle: of the caller's installer settings only URLs pass.
        return run_environment(
            path=CONTAINER_PATH,
            home=HOME_DIR,
            extra={**index_variables(os.environ), "UV_CACHE_DIR": self._cache_dir},
            variables=request.command.variables,
        )


def _checked_memory(text: str) -> str:
    try:
        size = parse_bytes(text)
    except DockerException:
        size = 0
    if size <= 0:
        raise UsageError(f"--memory: not a size like 512m or 4g: {text!r}")
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


def _container_name(run_id: str) -> str:
    return f"scbench-ci-{run_id}"


def _copy_in(container: Container, workspace: Path, cache_dir: str) -> None:
    """The workspace, a home and the uv cache folder, all owned by the test user."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            archive.add_tree(tar, workspace, WORKSPACE_DIR.lstrip("/"), TEST_UID, TEST_GID)
            archive.add_directory(tar, HOME_DIR.lstrip("/"), TEST_UID, TEST_GID, 0o700)
            archive.add_directory(tar, cache_dir.lstrip("/"), TEST_UID, TEST_GID, 0o755)
        buffer.seek(0)
        container.put_archive("/", buffer)


def _copy_out(container: Container, target: Path, echo: TextIO | None) -> None:
    """Replace `target` with the container's `.scbench/` (regular files and folders only)."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    try:
        chunks, _ = container.get_archive(f"{WORKSPACE_DIR}/{REPORTS_DIR}")
    except NotFound:
        return
    skipped = archive.extract_tree(chunks, REPORTS_DIR, target)
    if skipped:
        more = " ..." if len(skipped) > 5 else ""
        _say(
            echo,
            f"warning: {len(skipped)} entries of {REPORTS_DIR}/ were not copied back (only "
            f"regular files and folders are): {', '.join(skipped[:5])}{more}",
        )


def _run(
    container: Container, argv: list[str], env: dict[str, str], log: LogSink, deadline: float
) -> tuple[int | None, int]:
    """Run as the test user to completion or to the deadline.

    Returns the exit code (None when the deadline came first, and the container was killed) and
    how many processes it left behind. Either way, nothing it started runs when this returns.
    """
    api = _api(container)
    exec_id = api.exec_create(
        container.id,
        [*_ONE_STREAM, *argv],
        user=TEST_USER,
        environment=env,
        workdir=WORKSPACE_DIR,
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
    return code, _kill_leftovers(container)


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


def _kill_leftovers(container: Container) -> int:
    """Kill what the command left running (any process of the test user), and count it."""
    api = _api(container)
    exec_id = api.exec_create(container.id, ["/bin/sh", "-c", _KILL_LEFTOVERS], user=TEST_USER)
    stdout, _ = api.exec_start(exec_id["Id"], demux=True)
    count = (stdout or b"").decode(errors="replace").strip()
    return int(count) if count.isdigit() else 0
