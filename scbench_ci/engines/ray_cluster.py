"""Jobs as tasks on a Ray cluster (`--engine ray`): where they run when one machine is not enough.

Each call is one Ray task asking for the run's CPUs, on whichever node Ray places it. The engine
only moves a function and its argument there and the value back: what runs and what is sent is
the caller's (`executors/shipped.py`). Ray's failures are never a verdict: a node that dies
mid-task makes Ray run the task again elsewhere, at most RETRIES times, and a task that cannot be
placed, is cancelled or keeps failing is an InfrastructureError of that job.

Ray is imported only here, and only when a cluster is used: it is an optional dependency
(`scbench-ci[ray]`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from scbench_ci.foundation.errors import InfrastructureError, UsageError
from scbench_ci.foundation.signals import STOPS

Argument = TypeVar("Argument")
Value = TypeVar("Value")

RETRIES = 2
"""How often Ray runs a task again when its node or worker process dies (its own errors are
never retried: they would only fail again)."""
UNPLACEABLE_S = 30.0
"""How long no live node may be able to hold a task (nodes that died, and none joined) before
it is an infrastructure failure."""
CANCEL_WAIT_S = 60.0
"""How long a cancelled run may take to stop and remove its container."""
CONNECT_S = 10.0
_TICK_S = 1.0
_MESSAGE_CHARS = 300
INSTALL_HINT = "--engine ray needs Ray on this machine: pip install 'scbench-ci[ray]'"


class RayCluster:
    """A connection to one cluster, for one run: tasks asking for `cpus` CPUs each."""

    def __init__(self, address: str, cpus: float) -> None:
        self.address = address
        self.cpus = cpus
        self._remotes: dict[Callable[..., Any], Any] = {}
        self._in_flight: set[Any] = set()
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._connected = False
        self._owned = False
        """Whether this joined the cluster (and leaves it on `close`), or found this process
        already connected (a driver of its own, or a Ray task calling the Python API)."""

    def connect(self) -> None:
        """Join the cluster as its driver, once; InfrastructureError when none answers there."""
        with self._lock:
            if self._connected:
                return
            ray = _ray()
            if ray.is_initialized():
                self._connected = True
                return
            self._reachable()
            # Ray's driver takes SIGTERM (and may take SIGINT) for its own exit; the run's
            # handlers (every cleanup runs, then exit 143 or 130) are put back.
            handlers = {signum: signal.getsignal(signum) for signum in STOPS}
            try:
                ray.init(
                    address=self.address,
                    logging_level=logging.WARNING,
                    log_to_driver=False,
                    include_dashboard=False,
                )
            except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError...
                raise InfrastructureError(
                    f"--ray-address {self.address}: no Ray cluster could be joined there "
                    f"({_first_line(error)})"
                ) from None
            finally:
                if threading.current_thread() is threading.main_thread():
                    for signum, handler in handlers.items():
                        signal.signal(signum, handler)
            self._connected = self._owned = True

    def _reachable(self) -> None:
        """A head given as HOST:PORT answers on its port, else InfrastructureError now: Ray's
        own connection retries for minutes."""
        host, _, port = self.address.removeprefix("ray://").rpartition(":")
        if not port.isdigit():
            return  # auto: Ray finds this machine's cluster, or says at once there is none
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S).close()
        except OSError as error:
            raise InfrastructureError(
                f"--ray-address {self.address}: no Ray cluster answers there ({error})"
            ) from None

    def capacity(self) -> int:
        """How many tasks the live nodes hold at once (0: none can hold even one)."""
        return sum(math.floor(cpus / self.cpus + 1e-9) for cpus in self._node_cpus())

    def check_placeable(self) -> None:
        """InfrastructureError unless some live node has the CPUs one task asks for."""
        if self.capacity() == 0:
            raise InfrastructureError(self._unplaceable())

    def call(self, function: Callable[[Argument], Value], argument: Argument) -> Value:
        """`function(argument)` as a task on the cluster: its value, or InfrastructureError
        when Ray cannot give one (cancelled, unplaceable, its retries spent, a failure inside)."""
        ray = _ray()
        with self._lock:
            # Under the lock `cancel` takes its list with: a task is either refused or cancelled.
            if self._cancelled.is_set():
                raise InfrastructureError("cancelled before it started")
            remote = self._remotes.get(function)
            if remote is None:
                remote = self._remotes[function] = ray.remote(function)
            task = remote.options(
                num_cpus=self.cpus, max_retries=RETRIES, retry_exceptions=False
            ).remote(argument)
            self._in_flight.add(task)
        try:
            return self._value(task)  # type: ignore[no-any-return]
        finally:
            with self._lock:
                self._in_flight.discard(task)

    def cancel(self) -> None:
        """From another thread: cancel every task in flight (its run stops and removes its
        container), wait for them to end, and run no more."""
        self._cancelled.set()
        if not self._connected:
            return
        ray = _ray()
        with self._lock:
            tasks = list(self._in_flight)
        for task in tasks:
            with contextlib.suppress(Exception):
                ray.cancel(task, force=False)
        with contextlib.suppress(Exception):
            ray.wait(tasks, num_returns=len(tasks), timeout=CANCEL_WAIT_S)

    def close(self) -> None:
        with self._lock:
            if self._owned:
                _ray().shutdown()
            self._connected = self._owned = False
        self._owned = False
        """Whether this joined the cluster (and leaves it on `close`), or found this process
        already connected (a driver of its own, or a Ray task calling the Python API)."""

    def _value(self, task: Any) -> Any:
        ray = _ray()
        exceptions = ray.exceptions
        unplaceable_since: float | None = None
        try:
            while True:
                done, _ = ray.wait([task], timeout=_TICK_S)
                if done:
                    return ray.get(task)
                if self.capacity() > 0:
                    unplaceable_since = None
                    continue
                unplaceable_since = unplaceable_since or time.monotonic()
                if time.monotonic() - unplaceable_since >= UNPLACEABLE_S:
                    with contextlib.suppress(Exception):
                        ray.cancel(task, force=True)
                    raise InfrastructureError(self._unplaceable())
        except exceptions.TaskCancelledError:
            raise InfrastructureError("the Ray task was cancelled") from None
        except exceptions.RayTaskError as error:
            # The function raised on its node: our own code's failure there, not the tests'.
            cause = error.cause if isinstance(error.cause, BaseException) else error
            raise InfrastructureError(
                f"the Ray task failed on its node: {type(cause).__name__}: {_first_line(cause)}"
            ) from None
        except exceptions.RayError as error:
            raise InfrastructureError(
                f"Ray could not run the task (after up to {RETRIES} retries): "
                f"{type(error).__name__}: {_first_line(error)}"
            ) from None

    def _node_cpus(self) -> list[float]:
        nodes = _ray().nodes()
        return [
            float(node.get("Resources", {}).get("CPU", 0.0))
            for node in nodes
            if node.get("Alive") or node.get("alive")
        ]

    def _unplaceable(self) -> str:
        largest = max(self._node_cpus(), default=0.0)
        return (
            f"no live node of the Ray cluster at {self.address} has {self.cpus:g} CPUs for the "
            f"task (--cpus); the largest has {largest:g}"
        )


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    line = lines[0] if lines else type(error).__name__
    return line[:_MESSAGE_CHARS]
