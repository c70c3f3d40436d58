"""Run a local command so that every process it starts can be found and killed, and only those.

Runs go side by side (`--jobs`, threads of one process), so a new child of this process may be
any run's. Each command therefore runs under a subreaper of its own (subreaper.py), in a session
of its own: what the command starts, a daemon that left its parent included, stays below that
subreaper, and the run kills exactly the subreaper's descendants (stopping them all first, so
none forks meanwhile), then the subreaper.

The submission can kill its subreaper (it runs as the same user). Then what was below it is
handed to this process, which is a child subreaper itself for that reason, and the run still
claims, among this process's children, those it can tell are its own:

- a process still in the command's session (whose id is the subreaper's pid, kept from reuse as
  long as any process is in that session);
- a process the run saw in its tree while it ran (by pid and start time);
- a process whose environment carries the run's own tag (STEP_VARIABLE), as every process the
  command starts inherits it;

and everything below those. A process it cannot tell (one that left the session and the tree
after the subreaper was killed, unseen, with its environment cleared) is left alone: it may be
another run's. Elsewhere than on Linux there is no subreaper and no /proc: only the command's
process group is reached.

This module also names this process for what it makes on a Docker daemon (owner()).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.standalone import pytest_runner, subreaper
from scbench_ci.trust.reuse import key_folder, reuse_key

OWNER_LABEL = "dev.scbench-ci.owner"
"""The label of every container and volume scbench-ci creates: who created it (owner())."""
MACHINE_LABEL = "dev.scbench-ci.machine"
"""Beside the owner: this machine's (and user's) id, `machine_id()`: what `cleanup` scopes to by
default (a host name is no one's alone: containers, and CI runners, share names)."""
STEP_VARIABLE = "SCBENCH_CI_STEP"
"""Tags every process of a local command with the command's own random value."""

_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_TRACK_S = 0.2
"""How often a waiting run looks at its tree, to know its processes if it loses its subreaper."""
_ROUNDS = 100
_SETTLE_S = 2.0


@functools.cache
def machine_id() -> str:
    """An id of this machine and user, for the labels of what this process makes on a daemon
    that others may share: derived from the key kept in this user's cache folder (made there on
    first use, `trust/reuse.py`), so two machines, two containers (an action's runs) or two users
    never share one, whatever their host names; from the host name only where that folder cannot
    be had (said as `host-...`)."""
    key = reuse_key(key_folder())
    if isinstance(key, bytes):
        return hashlib.sha256(b"scbench-ci machine id\n" + key).hexdigest()[:16]
    return "host-" + hashlib.sha256(this_host().encode()).hexdigest()[:11]


def this_host() -> str:
    """The host part of an owner: this machine's, or this container's, name."""
    return socket.gethostname()


def owner(pid: int | None = None) -> str:
    """`<hostname>/<pid>` of this process (or of `pid` on this host): the owner label's value.
    The hostname tells apart processes in containers that share a Docker daemon (each has pids
    of its own)."""
    return f"{this_host()}/{os.getpid() if pid is None else pid}"


def parse_owner(value: str) -> tuple[str, int] | None:
    """The host and pid of an owner label's value; None if it is not one."""
    host, _, pid = value.rpartition("/")
    return (host, int(pid)) if host and pid.isdigit() and pid.isascii() else None


def running_since(pid: int) -> float | None:
    """When the process `pid` of this host started (seconds since the epoch, to the clock tick);
    None if there is none. Where /proc cannot tell, 0.0 for a process that exists."""
    fields = pytest_runner.stat_fields(pid)
    try:
        boot = next(
            float(line.split()[1])
            for line in (_PROC / "stat").read_text().splitlines()
            if line.startswith("btime ")
        )
    except (OSError, StopIteration):
        return _running_since_without_proc(pid)
    if fields is None:
        return _running_since_without_proc(pid)
    return boot + int(fields[pytest_runner.STARTED_FIELD]) / os.sysconf("SC_CLK_TCK")


def _running_since_without_proc(pid: int) -> float | None:
    if sys.platform.startswith("linux"):
        return None  # /proc has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return 0.0


def become_subreaper() -> bool:
    """Adopt the processes whose parent dies below this one (so a run that lost its subreaper
    can still find them). False where there is no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


@dataclass(frozen=True)
class _Process:
    parent: int
    session: int
    started: int
    """Clock ticks after boot: with the pid, names one process for good."""
    zombie: bool


class ProcessTree:
    """A command started under its own subreaper, with its output on `stdout`; `wait` for it,
    then `kill` what it left (always, also when `wait` raised)."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        tag = secrets.token_hex(16)
        self._tag = f"{STEP_VARIABLE}={tag}".encode()
        read_end, write_end = os.pipe()
        try:
            self._reaper = subprocess.Popen(
                [sys.executable, "-I", subreaper.__file__, str(write_end), *argv],
                cwd=cwd,
                env={**env, STEP_VARIABLE: tag},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(write_end,),
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        assert self._reaper.stdout is not None
        self.stdout = self._reaper.stdout
        os.set_blocking(read_end, False)
        self._reports: int | None = read_end
        self._received = b""
        self._exit_code: int | None = None
        self.lost_subreaper = False
        """The subreaper died before the run was over: the submission killed it."""
        self._seen: set[tuple[int, int]] = set()
        self._tagged: dict[tuple[int, int], bool] = {}

    @property
    def pid(self) -> int:
        """The subreaper's (the command's session and process group)."""
        return self._reaper.pid

    def wait(self, deadline: float) -> int | None:
        """The command's exit code once it ends (the subreaper's, as a negative signal number,
        if the submission killed it); None if the deadline (a monotonic time) comes first."""
        while True:
            self._read_reports()
            if self._exit_code is not None:
                return self._exit_code
            lost = self._subreaper_status()
            if lost is not None:
                self._read_reports()  # what it wrote before it died
                self.lost_subreaper = True
                return self._exit_code if self._exit_code is not None else lost
            self._members(_table(max_age=_TRACK_S))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            timeout = min(remaining, _TRACK_S)
            if self._reports is None:
                time.sleep(timeout)
            else:
                wait_readable(self._reports, timeout)

    def terminate(self) -> None:
        """From another thread: have the subreaper kill the command and everything below it, and
        exit (a cancelled run); `wait` then returns, and `kill` still follows."""
        with contextlib.suppress(ProcessLookupError):
            self._reaper.send_signal(signal.SIGTERM)

    def kill(self) -> int:
        """SIGKILL the command and everything it started, wait for them to be gone, and collect
        those that were handed to this process. Returns how many were running."""
        try:
            if self._subreaper_status() is not None:
                self.lost_subreaper = True
            killed: dict[int, int] = {}
            for _ in range(_ROUNDS):
                # Until a round finds none: a fork under way as its parent was stopped gives a
                # child that only shows once the parent is dead.
                stopped = self._freeze(killed)
                if not stopped:
                    break
                for pid in stopped:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                killed.update(stopped)
                self._settle(stopped, below=False)
            if not sys.platform.startswith("linux"):
                # No /proc: the process group is all there is (the subreaper, not yet collected,
                # keeps its number from reuse).
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)
            self._settle(killed, below=True)
            with contextlib.suppress(ProcessLookupError):
                self._reaper.kill()
            self._reaper.wait()
            self._collect(killed)
            return len(killed)
        finally:
            if self._reports is not None:
                os.close(self._reports)
                self._reports = None

    def _freeze(self, done: dict[int, int]) -> dict[int, int]:
        """SIGSTOP the run's processes (but those in `done`) until none is left running: a
        stopped process cannot fork. The stopped ones, by pid, with their start times."""
        frozen: dict[int, int] = {}
        for _ in range(_ROUNDS):
            table = _table()
            fresh = {
                pid
                for pid in self._members(table)
                if table[pid].started not in (frozen.get(pid), done.get(pid))
            }
            if not fresh:
                break
            for pid in fresh:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)
                frozen[pid] = table[pid].started
        return frozen

    def _settle(self, killed: dict[int, int], below: bool) -> None:
        """Wait (a while) until the `killed` processes are gone or zombies and, with `below`,
        until the subreaper (while it lives) has collected those below it: once it is killed,
        whatever is still below it is handed to this process."""
        deadline = time.monotonic() + _SETTLE_S
        while time.monotonic() < deadline:
            table = _table()
            running = any(
                pid in table and table[pid].started == started and not table[pid].zombie
                for pid, started in killed.items()
            )
            waiting = (
                below
                and not self._subreaper_gone(table)
                and any(process.parent == self.pid for process in table.values())
            )
            if not running and not waiting:
                return
            time.sleep(0.01)

    def _collect(self, frozen: dict[int, int]) -> None:
        """Reap the killed processes that were handed to this process (their subreaper died):
        by pid, and only those whose start time is theirs, never another thread's child."""
        me = os.getpid()
        deadline = time.monotonic() + _SETTLE_S
        while True:
            table = _table()
            ours = [
                pid
                for pid, started in frozen.items()
                if pid in table and table[pid].started == started and table[pid].parent == me
            ]
            for pid in ours:
                if table[pid].zombie:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
            if not ours or time.monotonic() > deadline:
                return
            time.sleep(0.01)

    def _members(self, table: dict[int, _Process]) -> set[int]:
        """The run's living processes in `table` (the subreaper aside), remembered from now on."""
        me = os.getpid()
        # While the subreaper lives, nothing of the run can be handed to this process.
        orphaned = self._subreaper_gone(table)
        roots = set() if orphaned else {self.pid}
        for pid, process in table.items():
            if process.zombie or pid in (me, self.pid):
                continue
            if process.session == self.pid or (
                orphaned
                and process.parent == me
                and ((pid, process.started) in self._seen or self._carries_tag(pid, process))
            ):
                roots.add(pid)
        members = {pid for pid in _descendants(roots, table) if not table[pid].zombie}
        members -= {me, self.pid}
        alive = {(pid, process.started) for pid, process in table.items()}
        self._seen = (self._seen & alive) | {(pid, table[pid].started) for pid in members}
        return members

    def _carries_tag(self, pid: int, process: _Process) -> bool:
        key = (pid, process.started)
        if key not in self._tagged:
            try:
                environ = (_PROC / str(pid) / "environ").read_bytes()
            except OSError:  # gone, or undumpable
                environ = b""
            self._tagged[key] = self._tag in environ.split(b"\0")
        return self._tagged[key]

    def _subreaper_gone(self, table: dict[int, _Process]) -> bool:
        reaper = table.get(self.pid)
        return reaper is None or reaper.zombie

    def _subreaper_status(self) -> int | None:
        """The subreaper's exit code if it has ended (left uncollected, so that its pid, the
        command's session id, is not reused meanwhile); None while it runs."""
        if self._reaper.returncode is not None:
            return self._reaper.returncode
        if not hasattr(os, "waitid"):  # macOS: collect it
            return self._reaper.poll()
        flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
        info = os.waitid(os.P_PID, self.pid, flags)
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def _read_reports(self) -> None:
        """Take in what the subreaper wrote: `exited <code>` once the command has ended."""
        while self._reports is not None:
            try:
                chunk = os.read(self._reports, 4096)
            except BlockingIOError:
                break
            if not chunk:
                os.close(self._reports)
                self._reports = None
                break
            *lines, self._received = (self._received + chunk).split(b"\n")
            self._received = self._received[-64:]
            for line in lines:
                word, _, value = line.partition(b" ")
                valid = value.lstrip(b"-").isdigit() and len(value) < 12
                if word == b"exited" and valid and self._exit_code is None:
                    self._exit_code = int(value)


def wait_readable(fd: int, timeout: float) -> bool:
    """Whether `fd` has something to read (or its end) within `timeout` seconds."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _descendants(roots: set[int], table: dict[int, _Process]) -> set[int]:
    """`roots` in `table`, and every process under them, zombies included."""
    parents = {pid: process.parent for pid, process in table.items()}
    return {pid for pid in roots if pid in table} | pytest_runner.below(roots, parents)


_latest: tuple[float, dict[int, _Process]] = (0.0, {})
_latest_lock = threading.Lock()


def _table(max_age: float = 0.0) -> dict[int, _Process]:
    """Every process of this machine; from a read of /proc at most `max_age` seconds old (the
    runs waiting side by side share one)."""
    global _latest
    now = time.monotonic()
    with _latest_lock:
        if now - _latest[0] <= max_age:
            return _latest[1]
    table = _read_table()
    with _latest_lock:
        if now > _latest[0]:
            _latest = (now, table)
    return table


def _read_table() -> dict[int, _Process]:
    return {
        pid: _Process(
            parent=int(fields[1]),
            session=int(fields[3]),
            started=int(fields[pytest_runner.STARTED_FIELD]),
            zombie=fields[0] in pytest_runner.DEAD_STATES,
        )
        for pid, fields in pytest_runner.process_stats().items()
    }
