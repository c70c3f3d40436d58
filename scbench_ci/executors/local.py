"""Run setup and tests as subprocesses on this machine (no isolation beyond a fresh environment)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from scbench_ci import processes, pytest_runner
from scbench_ci.child_env import installer_variables, run_environment
from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import Plan, Step, run_phases
from scbench_ci.files import scratch_folder

_SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


class LocalExecutor:
    name = "local"

    def workspace_dir(self, workspace: Path) -> str:
        return str(workspace)

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        processes.become_subreaper()
        started = time.monotonic()
        with scratch_folder("scbench-home-") as home:
            env = run_environment(
                path=os.pathsep.join(_search_path()),
                home=str(home),
                extra={**installer_variables(os.environ), "UV_CACHE_DIR": str(_uv_cache_dir())},
                variables=request.command.variables,
            )

            def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
                return _run(step.argv, request.workspace, {**env, **step.extra_env}, log, deadline)

            # uvx builds the runner's environment as it starts the tests.
            test_argv = request.command.uvx_argv(
                pytest_runner.__file__, pytest_runner.KILL_DESCENDANTS
            )
            return run_phases(request, Plan(run, (), test_argv), started)


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], log: LogSink, deadline: float
) -> tuple[int | None, int]:
    """Run to completion or to the deadline.

    Returns the exit code (None when the deadline killed it) and how many processes it left
    behind. Either way, every process it started is dead when this returns.
    """
    preexisting = processes.children_of_self()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    reader = threading.Thread(target=_copy_output, args=(process.stdout, log), daemon=True)
    reader.start()
    exited = False
    try:
        exited = _wait_unreaped(process, deadline)
    finally:
        # Also on KeyboardInterrupt. The root is not reaped yet, so its pid cannot be reused by
        # an unrelated process while the tree is being killed.
        killed = processes.kill_run(process.pid, preexisting)
        exit_code = process.wait()
        reader.join()
    return (exit_code, killed) if exited else (None, 0)


def _wait_unreaped(process: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait until the process exits or the deadline passes; leave its exit status uncollected."""
    if not hasattr(os, "waitid"):  # not on macOS: fall back to reaping
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    while os.waitid(os.P_PID, process.pid, flags) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _copy_output(stream: object, log: LogSink) -> None:
    read = stream.read1  # type: ignore[attr-defined]
    while chunk := read(65536):
        log.write(chunk)


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
