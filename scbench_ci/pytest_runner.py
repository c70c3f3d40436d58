"""The test process's entry point: pytest, hardened against the code it tests, with sealed reports.

This file runs inside the run's test environment, where only the standard library and pytest can
be imported (never scbench_ci): `python -I pytest_runner.py [--kill-others] <pytest arguments>`.

- It makes itself undumpable first, so processes of the same user (the submission) can neither
  attach to it nor open its /proc files (memory, environment, file descriptors).
- It takes the seal key out of its environment, so no child process inherits it.
- With `--kill-others` (only where this process is alone with the tests' processes, as in a
  container), every other process it may signal is killed before the reports are written, so
  nothing can rewrite them afterwards.
- When pytest is done, it prints one seal line: an HMAC, keyed with the run's secret, of the exit
  code, the number of processes killed and both reports' digests. A report changed after pytest
  wrote it, or a forged line, does not match.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

SEAL_KEY_VARIABLE = "SCBENCH_CI_SEAL_KEY"
SEAL_PREFIX = "[scbench-ci] seal "
KILL_OTHERS = "--kill-others"
_PR_SET_DUMPABLE = 4
_KILL_ROUNDS = 100


def seal_text(key: str, exit_code: int, killed: int, reports: list[bytes | None]) -> str:
    """The seal line's payload (without the prefix), for these reports' bytes (None: absent)."""
    digests = [hashlib.sha256(data).hexdigest() if data is not None else "-" for data in reports]
    fields = f"exit={exit_code} killed={killed}"
    message = f"{fields} {' '.join(digests)}".encode()
    return f"{fields} {hmac.new(key.encode(), message, hashlib.sha256).hexdigest()}"


def kill_others() -> int:
    """SIGKILL every process this one may signal, until none is left; how many there were."""
    me = os.getpid()
    others = {pid for pid in _own_processes() if pid != me}
    for _ in range(_KILL_ROUNDS):
        try:
            os.kill(-1, signal.SIGKILL)  # never reaches the caller itself
        except ProcessLookupError:
            break
        others |= {pid for pid in _own_processes() if pid != me}
    _reap()
    return len(others)


def _own_processes() -> set[int]:
    uid = os.getuid()
    pids = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.add(int(entry.name))
            except OSError:
                pass
    return pids


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _report_paths(args: list[str]) -> list[Path]:
    """The CTRF and pytest-json-report files as given on the command line, in that order."""
    paths = []
    for option in ("--ctrf=", "--json-report-file="):
        given = [arg[len(option) :] for arg in args if arg.startswith(option)]
        paths.append(Path(given[-1]) if given else Path(os.devnull))
    return paths


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def main() -> int:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    key = os.environ.pop(SEAL_KEY_VARIABLE, "")
    args = sys.argv[1:]
    killing = args[:1] == [KILL_OTHERS]
    if killing:
        args = args[1:]

    import pytest

    class KillBeforeReports:
        """Runs before the report plugins' own session-finish hooks write their files."""

        killed = 0

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_sessionfinish(self) -> Iterator[None]:
            self.killed = kill_others()
            yield

    killer = KillBeforeReports()
    exit_code = int(pytest.main(args, plugins=[killer] if killing else []))
    killed = killer.killed
    reports = [_read(path) for path in _report_paths(args)]
    sys.stdout.flush()
    sys.stdout.write(f"\n{SEAL_PREFIX}{seal_text(key, exit_code, killed, reports)}\n")
    sys.stdout.flush()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
