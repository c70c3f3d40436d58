"""Run setup and tests as subprocesses on this machine (no isolation beyond a fresh environment)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

from scbench_ci.executors import processes
from scbench_ci.executors.base import (
    MAX_QUALITY_OUTPUT_BYTES,
    QUALITY_PYTHON,
    SCB_CHECK,
    ExecutionRequest,
    ExecutionResult,
    QualityRun,
    cpu_limited,
    reported,
    timed_out,
)
from scbench_ci.executors.child_env import installer_variables, run_environment
from scbench_ci.executors.choice import NoSettings
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhasePlan, Step, run_phases
from scbench_ci.executors.quality_command import is_evaluators, launcher_argv, staged_sources
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import QUALITY_LOG
from scbench_ci.foundation.scbench_runner import V1_0, ScbenchRunner
from scbench_ci.standalone import pytest_runner
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.untrusted_tree import (
    UntrustedTree,
    UntrustedTreeError,
    copy_tree,
)

_SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def make(settings: NoSettings, cache_scope: str) -> LocalExecutor:
    """The local backend's executor (`executors/choice.py`): no settings, no caches to scope."""
    return LocalExecutor()


class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        # Once, in the thread that makes the executor: sysconfig, which finding uv reads, is not
        # safe to initialize from two threads at once (side by side jobs).
        self.search_path = os.pathsep.join(_search_path())
        self._running = _RunningTrees()

    def cancel(self) -> None:
        self._running.cancel()

    def workspace_dir(self, workspace: Path) -> str:
        return str(workspace)

    def memory_limit(self) -> None:
        return None

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        """Nothing to check: this machine runs the tests, and images are not used."""

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """Nothing is made ahead: a run's scratch folders cost nothing worth it."""

    def close(self) -> None:
        """Each run removed its own folders."""

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        processes.become_subreaper()
        started = time.monotonic()
        with scratch_folder("scbench-home-") as home:
            env = run_environment(
                path=self.search_path,
                home=str(home),
                extra={**installer_variables(os.environ), "UV_CACHE_DIR": str(_uv_cache_dir())},
                variables=request.command.variables,
            )

            def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
                step_env = {**env, **step.extra_env}
                return _run(step.argv, request.workspace, step_env, log, deadline, self._running)

            # uvx builds the runner's environment as it starts the tests.
            test_argv = request.command.uvx_argv(
                pytest_runner.__file__, pytest_runner.KILL_DESCENDANTS
            )
            if not request.quality:
                return run_phases(request, PhasePlan(run, (), test_argv), started)
            with scratch_folder("scbench-quality-") as folder:
                # The submission's files as staged, before any of its code runs.
                source = _copy_submission(request.workspace, folder / "source")
                staged = staged_sources(source)
                result = run_phases(request, PhasePlan(run, (), test_argv), started)
                clock = time.monotonic()
                quality_env = run_environment(
                    path=self.search_path,
                    home=str(home),
                    extra={
                        **installer_variables(os.environ),
                        "UV_CACHE_DIR": str(_uv_cache_dir()),
                        "UV_PYTHON_DOWNLOADS": "never",
                    },
                    variables={},
                )
                quality = self._quality(request, source, folder, quality_env, staged)
                phases = {**result.phases, "quality": time.monotonic() - clock}
                return dataclasses.replace(
                    result,
                    quality=quality,
                    phases=phases,
                    duration_s=time.monotonic() - started,
                )

    def _quality(
        self,
        request: ExecutionRequest,
        source: Path,
        folder: Path,
        env: dict[str, str],
        staged: tuple[str, ...],
    ) -> QualityRun:
        """scb-check through uvx, as the tests' runner is installed here (its environment in
        uv's cache), on a Python 3.12 uv finds (none is downloaded), from a folder of its own
        (so no configuration file of the submission's is read), started as quality_command
        says; its stderr to quality.log. `staged`: the source files in `source`."""
        started = time.monotonic()
        quality_log = request.log_dir / QUALITY_LOG
        argv = [
            "/bin/sh",
            "-c",
            'exec "$@" 2>"$0"',
            str(quality_log),
            *cpu_limited(
                launcher_argv(
                    ["uvx", "--python", QUALITY_PYTHON, "--from", SCB_CHECK, "python"], str(source)
                )
            ),
        ]
        cwd = folder / "cwd"
        cwd.mkdir()
        deadline = started + request.quality_timeout_s
        with LogSink(folder / "report.json", None) as report:
            code, _ = _run(argv, cwd, env, report, deadline, self._running)
            size = report.total_bytes
        seconds = round(time.monotonic() - started, 3)
        if code is None:
            return QualityRun(None, timed_out(request.quality_timeout_s), seconds, staged=staged)
        if size > MAX_QUALITY_OUTPUT_BYTES:
            too_large = f"scb-check's output is larger than {MAX_QUALITY_OUTPUT_BYTES} bytes"
            return QualityRun(None, too_large, seconds, staged=staged)
        with UntrustedTree.opened(request.log_dir) as logs:
            stderr = _tail(logs, QUALITY_LOG, 4096)
        with UntrustedTree.opened(folder) as reports:
            report_bytes = reports.read_file("report.json", MAX_QUALITY_OUTPUT_BYTES)
        got, reason = reported(code, report_bytes, stderr)
        return QualityRun(got, reason, seconds, staged=staged)


class _RunningTrees:
    """The process trees of the steps running now, so that `cancel` can stop them all."""

    def __init__(self) -> None:
        self._trees: set[processes.ProcessTree] = set()
        self._lock = threading.Lock()
        self._cancelled = False

    @contextlib.contextmanager
    def start(
        self, argv: list[str], cwd: Path, env: dict[str, str]
    ) -> Iterator[processes.ProcessTree]:
        with self._lock:
            if self._cancelled:
                raise InfrastructureError("the evaluation was cancelled")
            tree = processes.ProcessTree(argv, cwd, env)
            self._trees.add(tree)
        try:
            yield tree
        finally:
            with self._lock:
                self._trees.discard(tree)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for tree in self._trees:
                tree.terminate()


def _run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    log: LogSink,
    deadline: float,
    running: _RunningTrees,
) -> tuple[int | None, int]:
    """Run to completion or to the deadline.

    Returns the exit code (None when the deadline killed it) and how many processes it left
    behind. Either way, every process it started is dead when this returns (see
    processes.ProcessTree for the one exception), and no other run's process was touched.
    """
    with running.start(argv, cwd, env) as tree:
        return _follow(tree, log, deadline)


def _follow(tree: processes.ProcessTree, log: LogSink, deadline: float) -> tuple[int | None, int]:
    killed_all = threading.Event()
    reader = threading.Thread(target=_copy_output, args=(tree.stdout, log, killed_all), daemon=True)
    reader.start()
    exit_code = None
    try:
        exit_code = tree.wait(deadline)
    finally:
        # Also on KeyboardInterrupt.
        killed = tree.kill()
        killed_all.set()
        reader.join()
        tree.stdout.close()
    if tree.lost_subreaper:
        log.note(
            "the step's subreaper was killed: a process that left the step's session after "
            "that, with its environment cleared, may be left running"
        )
    return (exit_code, killed) if exit_code is not None else (None, 0)


def _copy_output(stream: IO[bytes], log: LogSink, killed_all: threading.Event) -> None:
    """Copy until every writer has closed the pipe or, once `killed_all`, until the pipe runs
    dry: a process the run could not tell as its own may still hold it open."""
    descriptor = stream.fileno()
    while True:
        if not processes.wait_readable(descriptor, 0.1):
            if killed_all.is_set():
                return
            continue
        chunk = os.read(descriptor, 65536)
        if not chunk:
            return
        log.write(chunk)


def _copy_submission(workspace: Path, target: Path) -> Path:
    """The workspace's entries but the evaluator's, links that stay inside as links (staging
    left out those that point outside the submission)."""
    with UntrustedTree.opened(workspace) as tree:
        copy_tree(tree, "", target, skip=is_evaluators)
    return target


def _tail(tree: UntrustedTree, name: str, most: int) -> bytes:
    """The last `most` bytes of the file `name` (of any size), or none when it is not a regular
    file."""
    try:
        with tree.file_content(name, sys.maxsize) as (stream, size):
            stream.seek(max(0, size - most))
            return stream.read(most)
    except UntrustedTreeError:
        return b""


def _search_path() -> list[str]:
    """uv's own folder and this Python's first, so `uv`/`uvx`/`python` resolve to known tools."""
    folders = [str(Path(_uv_binary()).parent), str(Path(sys.executable).parent), *_SYSTEM_PATH]
    return list(dict.fromkeys(folders))


def _uv_binary() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        pass
    else:
        return str(find_uv_bin())
    found = shutil.which("uv")
    if found is None:
        raise InfrastructureError("uv is not installed: `pip install uv` (scbench-ci needs uvx)")
    return found


def _uv_cache_dir() -> Path:
    """The caller's uv cache, shared so repeated runs don't download the test plugins again."""
    if os.environ.get("UV_CACHE_DIR"):
        return Path(os.environ["UV_CACHE_DIR"])
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "uv"
