"""Find and kill every process a run started, including ones that left its process group.

On Linux this process becomes a child subreaper, so a daemonized grandchild is reparented to us
instead of to init and can still be found by walking parent links in /proc. Elsewhere only the
run's process group is reachable.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def children_of_self(links: dict[int, int] | None = None) -> set[int]:
    """From `links` when given, else from a fresh read of /proc."""
    me = os.getpid()
    return {
        pid for pid, parent in (_parent_links() if links is None else links).items() if parent == me
    }


def _parent_links() -> dict[int, int]:
    links: dict[int, int] = {}
    if not _PROC.is_dir():
        return links
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_text = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and ')'; the rest follows the last ')'.
        fields = stat_text[stat_text.rfind(")") + 2 :].split()
        links[int(entry.name)] = int(fields[1])
    return links


def _descendants(roots: set[int], links: dict[int, int]) -> set[int]:
    found: set[int] = set()
    frontier = {pid for pid in roots if pid in links}
    while frontier:
        found |= frontier
        frontier = {pid for pid, parent in links.items() if parent in frontier} - found
    return found


def kill_run(root_pid: int, preexisting_children: set[int]) -> int:
    """SIGKILL the run's process group and every descendant of it, reparented ones included.

    Returns how many processes were killed. Repeats until nothing is left, since a process may
    fork while its siblings are being killed.
    """
    killed: set[int] = set()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root_pid, signal.SIGKILL)
    for _ in range(50):
        links = _parent_links()
        orphans = children_of_self(links) - preexisting_children
        alive = {pid for pid in _descendants({root_pid} | orphans, links) if pid != os.getpid()}
        alive -= {pid for pid in alive if _is_zombie(pid)}
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= alive
        time.sleep(0.02)
    _reap_orphans(preexisting_children | {root_pid})
    return len(killed)


def _is_zombie(pid: int) -> bool:
    try:
        stat_text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat_text[stat_text.rfind(")") + 2 :].startswith("Z")


def _reap_orphans(keep: set[int]) -> None:
    """Collect the exit status of killed processes that were reparented to us."""
    deadline = time.monotonic() + 1.0
    while True:
        pending = children_of_self() - keep
        for pid in pending:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.02)
