"""The parent of one local command: everything the command starts stays below it.

This file runs as `python -I subreaper.py FD COMMAND...` and imports only the standard library
(never scbench_ci), like pytest_runner.py, whose walk of /proc it loads from beside it when it
kills. scbench-ci starts it for each setup command and for the tests
(scbench_ci.executors.processes.ProcessTree), in a session of its own.

- It becomes a child subreaper (Linux): a process whose parent dies, such as a daemon that left
  its parent, is reparented to it rather than to scbench-ci, where it would sit among the
  processes of every other run of scbench-ci's. So a run's processes are this one's descendants,
  and only that run's.
- It makes itself undumpable, so the command's processes cannot open its file descriptors.
- It starts the command, reaps every process reparented to it as it ends, and writes
  `exited <code>` to FD when the command ends (negative for a signal, as subprocess gives it;
  127 when the command could not be started).
- Then it stays, reaping, until scbench-ci has killed whatever the command left running and
  kills it in turn: it never exits by itself while scbench-ci runs, so nothing of the run is
  handed up.
- If scbench-ci dies first (or anyone sends it SIGTERM), it kills everything below it and exits:
  a run never outlives the evaluation.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import sys
import time
from types import FrameType, ModuleType

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_IDLE_S = 0.05
_KILL_ROUNDS = 100


def main() -> None:
    report = int(sys.argv[1])
    command = sys.argv[2:]
    parent = os.getppid()
    signal.signal(signal.SIGTERM, _kill_all_and_exit)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # scbench-ci died before the line above
        _kill_all_and_exit(signal.SIGTERM, None)
    os.set_inheritable(report, False)
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the command gets them back, as subprocess does.
        child = os.posix_spawnp(
            command[0], command, os.environ, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    except OSError as error:
        sys.stderr.write(f"[scbench-ci] cannot run {command[0]}: {error.strerror}\n")
        sys.stderr.flush()
        code = 127
    else:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                code = os.waitstatus_to_exitcode(status)
                break
    os.write(report, f"exited {code}\n".encode())
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:  # none now; a process may still be reparented here
            time.sleep(_IDLE_S)
        if os.getppid() != parent:  # without PR_SET_PDEATHSIG
            _kill_all_and_exit(signal.SIGTERM, None)


def _kill_all_and_exit(signum: int, frame: FrameType | None) -> None:
    living_descendants = _runner().living_descendants
    for _ in range(_KILL_ROUNDS):
        alive = living_descendants(os.getpid())
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
    if not sys.platform.startswith("linux"):  # no /proc: the process group is all there is
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(128 + signum)


def _runner() -> ModuleType:
    """pytest_runner.py, beside this file, which holds the one walk of /proc: loaded by its path
    when there is something to kill, since `-I` puts no folder of this file's on sys.path and
    this process imports nothing of the package."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytest_runner.py")
    spec = importlib.util.spec_from_file_location("pytest_runner", path)
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    return runner


if __name__ == "__main__":
    main()
