"""A job's run sent to another machine and its outcome sent back, as bytes (`--engine ray`).

Nothing assumes a shared filesystem: the staged workspace travels as a tar archive with the run's
settings; on the node that runs it, it is unpacked into a scratch folder, run by the same
executor there with a seal secret made there (`sealed.run_sealed`), and what comes back is the
execution, the reports as read and sealed on that node, and the logs. The driver writes the logs
into the job's own log folder and judges the run as a local one.
"""

from __future__ import annotations

import io
import socket
import tarfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from scbench_ci.executors import archive
from scbench_ci.executors.base import ExecutionRequest, Executor
from scbench_ci.executors.choice import ExecutorSettings, make_executor
from scbench_ci.executors.sealed import SealedRun, run_sealed
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.foundation.version import __version__
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import write_file

_WORKSPACE = "workspace"
_LOGS = (SETUP_LOG, PYTEST_LOG)
_POLL_S = 0.2


@dataclass(frozen=True)
class ShippedJob:
    """A run as it travels: its request without the local paths, the workspace as a tar
    archive, and which executor of the node is to run it, with which settings."""

    request: ExecutionRequest
    """Its workspace and log folder are the driver's, and mean nothing on the node."""
    workspace: bytes
    executor: str
    settings: ExecutorSettings
    cache_scope: str
    version: str = __version__
    """The driver's scbench-ci: a node running another refuses the job."""


@dataclass(frozen=True)
class ShippedRun:
    """What comes back: the sealed run, or the node's infrastructure failure; the logs either
    way, and which node ran it."""

    sealed: SealedRun | None
    failure: str | None
    logs: dict[str, bytes]
    node: str
    seconds: float = 0.0
    """How long the node took, from the archive's arrival to the run's outcome."""

    def size(self) -> int:
        """The bytes of the reports and logs sent back."""
        files = self.sealed.files if self.sealed else None
        reports = (files.ctrf, files.pytest, files.inventory) if files else ()
        return sum(map(len, self.logs.values())) + sum(len(r) for r in reports if r)


def ship(
    request: ExecutionRequest, executor: str, settings: ExecutorSettings, cache_scope: str
) -> ShippedJob:
    """Pack the request's workspace (through the guarded tree reader, links as links)."""
    buffer = io.BytesIO()
    with archive.open_writer(buffer) as tar:
        archive.add_tree(tar, request.workspace, _WORKSPACE, 0, 0)
    workspace = buffer.getvalue()
    return ShippedJob(replace(request, echo=None), workspace, executor, settings, cache_scope)


def run_shipped(job: ShippedJob) -> ShippedRun:
    """On the node: unpack, run sealed, send back. Any InfrastructureError (the node's Docker
    daemon or image, another scbench-ci version) is the returned failure. A notice of the
    executor's is the driver's to say, not the node's."""
    started = time.monotonic()
    node = socket.gethostname()
    if job.version != __version__:
        mismatch = f"node {node} runs scbench-ci {__version__}, the driver {job.version}"
        return ShippedRun(None, mismatch, {}, node)
    with scratch_folder("scbench-shipped-") as scratch:
        with tarfile.open(fileobj=io.BytesIO(job.workspace), mode="r:") as tar:
            # Our own archive, made by `ship`: links are kept as links, nothing lands outside.
            tar.extractall(scratch, filter="tar")
        log_dir = scratch / "logs"
        log_dir.mkdir()
        request = replace(job.request, workspace=scratch / _WORKSPACE, log_dir=log_dir)
        executor = make_executor(job.executor, job.settings, lambda _: None, job.cache_scope)
        sealed: SealedRun | None = None
        failure: str | None = None
        try:
            sealed = _cancellable(executor, request)
        except InfrastructureError as error:
            failure = f"on node {node}: {error}"
        logs = {name: (log_dir / name).read_bytes() for name in _LOGS if (log_dir / name).is_file()}
    return ShippedRun(sealed, failure, logs, node, time.monotonic() - started)


def _cancellable(executor: Executor, request: ExecutionRequest) -> SealedRun:
    """The run in a thread of its own while this one waits in short steps: Ray cancels a task
    by raising KeyboardInterrupt in its thread at its next Python instruction, which a run
    blocked in a socket read would not reach until its tests end. Cancelled, it kills this
    process's containers, waits for the run to remove them, and lets the interrupt go on."""
    outcome: list[SealedRun | BaseException] = []

    def run() -> None:
        try:
            outcome.append(run_sealed(executor, request))
        except BaseException as error:  # handed to the waiting thread, raised there
            outcome.append(error)

    runner = threading.Thread(target=run, name="scbench-shipped-run", daemon=True)
    runner.start()
    try:
        while runner.is_alive():
            runner.join(_POLL_S)
    except BaseException:
        executor.cancel()
        runner.join()
        raise
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def landed(run: ShippedRun, log_dir: Path) -> SealedRun:
    """Back on the driver: the logs into the job's log folder; the sealed run, or the node's
    failure as InfrastructureError."""
    for name, content in run.logs.items():
        if name in _LOGS:
            write_file(log_dir, name, content)
    if run.sealed is None:
        raise InfrastructureError(run.failure or f"node {run.node} sent back no run")
    return run.sealed
