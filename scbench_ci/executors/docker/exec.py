"""Commands in a run's container: a step's, as its user, to its end or the deadline, leaving
nothing it started running; short ones of the evaluator's own; and the environment the tests
user's commands get."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import docker
from docker.models.containers import Container

from scbench_ci.executors.child_env import index_variables, run_environment
from scbench_ci.executors.docker import exec_output
from scbench_ci.executors.docker.container_layout import CONTAINER_PATH, HOME_DIR
from scbench_ci.foundation.errors import InfrastructureError

_BARE_ENV = {"PATH": CONTAINER_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_EXIT_POLL_S = 0.005
# Docker carries stdout and stderr apart and may deliver them out of order: one pipe keeps the
# log in the order it was written, as the local executor's is.
ONE_STREAM = ("/bin/sh", "-c", 'exec "$@" 2>&1', "sh")
# /bin/sh is the one tool every image has; kill(-1) reaches every process the caller may signal,
# but not the caller itself, nor the idle process (another uid).
KILL_LEFTOVERS = (
    'n=0; for p in /proc/[0-9]*; do [ -O "$p" ] && [ "${p#/proc/}" != $$ ] && n=$((n + 1)); done; '
    "kill -9 -1 2>/dev/null; echo $n"
)


class Log(Protocol):
    """Where a step's output goes (a LogSink)."""

    def write(self, chunk: bytes) -> None: ...


def run(
    container: Container,
    argv: list[str],
    env: dict[str, str],
    user: str,
    workdir: str,
    log: Log,
    deadline: float,
    *,
    kill_leftovers: bool = True,
) -> tuple[int | None, int]:
    """Run as `user` to completion or to the deadline.

    Returns the exit code (None when the deadline came first, and the container was killed) and
    how many processes it left behind. Either way, nothing it started runs when this returns
    (without `kill_leftovers`, for a trusted command, only what it started and waited for).
    """
    client = api(container)
    exec_id = client.exec_create(
        container.id,
        [*ONE_STREAM, *argv],
        user=user,
        environment=env,
        workdir=workdir,
    )["Id"]
    code = ended(container, exec_id, exec_output.frames(client, exec_id), log, deadline)
    if code is None:
        return None, 0
    return code, kill_left_running(container, user) if kill_leftovers else 0


def ended(
    container: Container,
    exec_id: str,
    output: Iterable[tuple[int, bytes]],
    log: Log,
    deadline: float,
) -> int | None:
    """A started exec's `output` into `log` until it ends: its exit code; None when the deadline
    came first (the container is then killed)."""
    reader = _Reader(lambda: _copy_output(output, log))
    reader.join(max(0.0, deadline - time.monotonic()))
    code = None if reader.is_alive() else _exit_code(api(container), exec_id, deadline)
    if code is None:
        # The deadline's kill ends the output however it ends: the timeout is what is said.
        container.kill()
        reader.join()
        return None
    reader.raise_failure()
    return code


def run_captured(
    container: Container,
    argv: list[str],
    env: dict[str, str],
    user: str,
    workdir: str,
    timeout_s: float,
    max_bytes: int,
) -> tuple[int | None, bytes, bytes]:
    """Run as `user` to its end or for `timeout_s`: the exit code (None at the time limit), the
    first `max_bytes` + 1 bytes of its stdout and the last `max_bytes` of its stderr. Every
    process of `user` is killed after it, and at the time limit the container lives on."""
    client = api(container)
    exec_id = client.exec_create(container.id, argv, user=user, environment=env, workdir=workdir)[
        "Id"
    ]
    output = exec_output.frames(client, exec_id)
    stdout, stderr = bytearray(), bytearray()

    def read() -> None:
        for stream, data in output:
            if stream == exec_output.STDOUT and len(stdout) <= max_bytes:
                stdout.extend(data[: max_bytes + 1 - len(stdout)])
            elif stream == exec_output.STDERR:
                stderr.extend(data)
                del stderr[:-max_bytes]

    reader = _Reader(read)
    reader.join(timeout_s)
    finished = not reader.is_alive()
    code = _exit_code(client, exec_id, time.monotonic() + 5) if finished else None
    kill_left_running(container, user)
    reader.join(5)
    if finished:
        reader.raise_failure()
    return code, bytes(stdout), bytes(stderr)


class _Reader(threading.Thread):
    """Reads a command's output beside the thread that waits for it. What stops the reading
    (the daemon's connection failing) is the waiting thread's to raise once the command has
    ended; when that thread was stopped first (Ctrl-C: the run closes the connection and the
    log under the reader), it is never raised, nor printed by the thread."""

    def __init__(self, read: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self._read = read
        self._failure: Exception | None = None
        self.start()

    def run(self) -> None:
        try:
            self._read()
        except Exception as failure:  # the waiting thread decides what it means
            self._failure = failure

    def raise_failure(self) -> None:
        if self._failure is not None:
            raise InfrastructureError(
                f"reading the output of a command in the container failed: {self._failure}"
            ) from self._failure


def run_own(
    container: Container, argv: list[str], user: str, workdir: str = "/"
) -> tuple[int, str]:
    """Run a short command of ours as `user`, to its end: the exit code and the output."""
    client = api(container)
    exec_id = client.exec_create(
        container.id, [*ONE_STREAM, *argv], user=user, workdir=workdir, environment=_BARE_ENV
    )["Id"]
    output = b"".join(data for _, data in exec_output.frames(client, exec_id))
    code = _exit_code(client, exec_id, float("inf"))
    return (-1 if code is None else code), output.decode(errors="replace")


def api(container: Container) -> docker.APIClient:
    assert container.client is not None, "a container from a client keeps it"
    return container.client.api


def disconnect(container: Container) -> None:
    """Leave every network (by id: two networks may have its name): only loopback is left."""
    container.reload()
    client = api(container)
    for name, network in container.attrs["NetworkSettings"]["Networks"].items():
        client.disconnect_container_from_network(
            str(container.id), network.get("NetworkID") or name
        )


def tests_environment(variables: Mapping[str, str], path: str = CONTAINER_PATH) -> dict[str, str]:
    """What setup and the tests get, as in SCBench's container: the image's own variables (Docker
    keeps them, its locale among them), the PATH a login shell has there (SCBench's runtime runs
    `bash -l`; image_versions.image_facts), SCBench's home, the index variables every
    container here needs, and the command's variables (the environment's own, such as SCBench's
    `UV_CACHE_DIR`, among them)."""
    return run_environment(
        path=path,
        home=HOME_DIR,
        extra=index_variables(os.environ),
        variables=variables,
        locale={},
    )


def _copy_output(output: Iterable[tuple[int, bytes]], log: Log) -> None:
    for _, chunk in output:
        log.write(chunk)


def _exit_code(client: docker.APIClient, exec_id: str, deadline: float) -> int | None:
    """The exit code once the process has ended (its output can close before); None at the
    deadline."""
    while True:
        state = client.exec_inspect(exec_id)
        if not state["Running"]:
            if state["ExitCode"] is None:
                raise InfrastructureError("the container stopped in the middle of the run")
            return int(state["ExitCode"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(_EXIT_POLL_S)


def kill_left_running(container: Container, user: str) -> int:
    """Kill what the command left running (any process of its user), and count it."""
    client = api(container)
    exec_id = client.exec_create(container.id, ["/bin/sh", "-c", KILL_LEFTOVERS], user=user)
    stdout, _ = exec_output.captured(client, exec_id["Id"])
    count = stdout.decode(errors="replace").strip()
    return int(count) if count.isdigit() else 0
