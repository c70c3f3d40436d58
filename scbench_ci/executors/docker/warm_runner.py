"""The test runner started ahead of its run, in a container made ahead of need: everything the
tests' process is started with is known before the submission (the cached runner, pytest's
arguments, the variables the tests see, the user and the folder), so it is started then, and
imports pytest while the workspace goes in; the run's seal key, the one thing it lacks, is its
stdin's one line (`pytest_runner.KEY_FROM_STDIN`), given when the tests are due. The process
is the same command, started the same way, as the tests' step would start later: the same
`argv` and variables, the cached runner's check first, stdin /dev/null from the key on.

It waits only while nothing of the submission's can run: a run whose setup runs (the submission's
requirements installed in the run) stops it and starts its tests as usual; so does a run whose
own start differs from the one prepared (another checkpoint's arguments or variables).
"""

from __future__ import annotations

import contextlib
import socket
import time
from dataclasses import dataclass

from docker.errors import DockerException
from docker.models.containers import Container

from scbench_ci.executors.docker import exec_output
from scbench_ci.executors.docker.exec import ONE_STREAM, Log, api, ended, kill_left_running

_ENDS_WITHIN_S = 10.0
"""A runner told it will not run ends as it finishes importing; past this, it is killed."""
_POLL_S = 0.02


@dataclass(frozen=True)
class WarmStart:
    """How a run's tests' process is started, known before its submission."""

    argv: tuple[str, ...]
    """The tests' step as its container runs it (the cached runner's check, then the runner)."""
    env: tuple[tuple[str, str], ...]
    """Its variables, the seal key's `KEY_FROM_STDIN`."""
    user: str
    workdir: str


class WarmRunner:
    """The tests' process of one run, started in its container, waiting for its key."""

    def __init__(self, container: Container, start: WarmStart) -> None:
        client = api(container)
        self.container = container
        self.start = start
        self._exec_id = client.exec_create(
            container.id,
            [*ONE_STREAM, *start.argv],
            user=start.user,
            environment=dict(start.env),
            workdir=start.workdir,
            stdin=True,
        )["Id"]
        self._attached = exec_output.Attached(client, self._exec_id)

    def waiting(self) -> bool:
        """Whether it is still there to take its key (nothing else ends it before)."""
        return bool(api(self.container).exec_inspect(self._exec_id)["Running"])

    def go(self, key: str, log: Log, deadline: float) -> int | None:
        """Give it the run's key: the tests run, their output into `log`. Their exit code, or
        None when the deadline came first (the container is then killed)."""
        with contextlib.suppress(OSError):  # it ended before: its output says how
            self._attached.stdin.sendall(f"{key}\n".encode())
            self._attached.stdin.shutdown(socket.SHUT_WR)
        return ended(self.container, self._exec_id, self._attached.frames(), log, deadline)

    def stop(self) -> None:
        """It will not run: its stdin ends, and it with it, printing nothing."""
        with contextlib.suppress(OSError):
            self._attached.close()

    def stop_before_another(self) -> None:
        """It will not run, and is gone when this returns, so that nothing of it is alive when
        the run's tests start in its place (they would count it as left running)."""
        self.stop()
        deadline = time.monotonic() + _ENDS_WITHIN_S
        with contextlib.suppress(DockerException):
            while self.waiting():
                if time.monotonic() >= deadline:
                    kill_left_running(self.container, self.start.user)
                    return
                time.sleep(_POLL_S)
