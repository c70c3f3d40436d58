"""A local command's process tree: found whole (daemons included), killed whole, and only its own,
also when the submission kills the subreaper the tree lives under."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scbench_ci.executors import processes
from scbench_ci.executors.processes import ProcessTree, owner, parse_owner, running_since
from scbench_ci.standalone import pytest_runner
from tests.executors.test_local import CANARY

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")


@pytest.fixture(autouse=True)
def subreaper() -> None:
    """As the local executor makes this process one."""
    assert processes.become_subreaper()


@pytest.fixture
def trees() -> Iterator[list[ProcessTree]]:
    """The trees a test starts, killed after it whatever happened."""
    started: list[ProcessTree] = []
    yield started
    for tree in started:
        tree.kill()


def _sleeper(tag: str) -> str:
    """A shell word: a Python process that sleeps five minutes, deaf to SIGTERM, named `tag`."""
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
    return f"{sys.executable} -c '{code}' {tag}"


def _living_canaries(prefix: str) -> list[int]:
    """The sleepers (not zombies) whose name starts with `prefix`."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if len(argv) > 1 and argv[-2].startswith(prefix.encode()) and state != "Z":
            pids.append(int(entry.name))
    return pids


def _start(script: str, tmp_path: Path, trees: list[ProcessTree]) -> ProcessTree:
    trees.append(ProcessTree(["/bin/sh", "-c", script], tmp_path, {"PATH": os.environ["PATH"]}))
    return trees[-1]


def _zombie_children() -> int:
    me = str(os.getpid())
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        count += fields[0] == "Z" and fields[1] == me
    return count


def test_a_daemon_is_killed_and_counted_and_the_exit_code_kept(
    tmp_path: Path, trees: list[ProcessTree]
) -> None:
    tag = f"{CANARY}-tree-daemon-{os.getpid()}"
    # setsid leaves the session; the subshell that started it exits at once, so the daemon is
    # handed to the subreaper.
    tree = _start(f"(setsid {_sleeper(tag)} &) ; exit 3", tmp_path, trees)

    assert tree.wait(time.monotonic() + 30) == 3
    while not _living_canaries(tag):
        time.sleep(0.01)
    assert tree.kill() == 1
    assert _living_canaries(tag) == []
    assert not tree.lost_subreaper


def test_the_deadline_kills_the_command(tmp_path: Path, trees: list[ProcessTree]) -> None:
    tag = f"{CANARY}-tree-deadline-{os.getpid()}"
    tree = _start(f"exec {_sleeper(tag)}", tmp_path, trees)

    assert tree.wait(time.monotonic() + 0.5) is None
    assert tree.kill() == 1
    assert _living_canaries(tag) == []


def test_a_command_that_cannot_start_exits_127(tmp_path: Path) -> None:
    tree = ProcessTree(["no-such-command-here"], tmp_path, {"PATH": "/nonexistent"})

    assert tree.wait(time.monotonic() + 30) == 127
    assert tree.kill() == 0
    assert b"cannot run no-such-command-here" in tree.stdout.read()


@pytest.mark.slow
def test_a_killed_subreaper_still_leaves_nothing_and_touches_no_other_tree(
    tmp_path: Path, trees: list[ProcessTree]
) -> None:
    """The command kills its subreaper. Its processes are handed to this process, among those of
    another tree: its run finds each of its own (by session, by having seen it, by its tag in
    the environment), and nothing of the other tree's."""
    tag = f"{CANARY}-tree-lost-{os.getpid()}"
    other_tag = f"{CANARY}-tree-bystander-{os.getpid()}"
    before = _zombie_children()
    bystander = _start(
        f"(setsid {_sleeper(other_tag)}-daemon &) ; exec {_sleeper(other_tag)}", tmp_path, trees
    )
    script = (
        # Stays in the session.
        f"{_sleeper(tag)}-in-session &\n"
        # Leaves the session with no environment (no tag) before the subreaper dies: its run
        # has seen it in its tree.
        f"(env -i setsid {_sleeper(tag)}-seen &)\n"
        "sleep 1\n"
        "kill -KILL $PPID\n"
        "sleep 0.3\n"
        # Leaves the session after the subreaper died: only the tag tells.
        f"(setsid {_sleeper(tag)}-tagged &)\n"
        "exec sleep 300\n"
    )
    tree = _start(script, tmp_path, trees)

    assert tree.wait(time.monotonic() + 30) == -9
    assert tree.lost_subreaper
    until = time.monotonic() + 10
    while len(_living_canaries(tag)) < 3 and time.monotonic() < until:
        time.sleep(0.01)
    assert len(_living_canaries(tag)) == 3
    assert len(_living_canaries(other_tag)) == 2

    assert tree.kill() == 4  # the command too
    assert _living_canaries(tag) == []
    assert len(_living_canaries(other_tag)) == 2
    assert bystander.wait(time.monotonic() + 0.2) is None
    assert bystander.kill() == 2
    assert _living_canaries(other_tag) == []
    assert _zombie_children() == before


def test_owner_is_host_and_pid() -> None:
    value = owner()
    assert parse_owner(value) == (value.rpartition("/")[0], os.getpid())
    assert parse_owner(owner(42)) == (value.rpartition("/")[0], 42)
    for broken in (
        "",
        "host",
        "/12",
        "host/",
        "host/x1",
        "host/-1",
        "host/\N{FULLWIDTH DIGIT ONE}",
    ):
        assert parse_owner(broken) is None


def test_running_since_is_the_start_time() -> None:
    started = running_since(os.getpid())
    assert started is not None and started <= time.time()
    assert running_since(2**22 + 1) is None  # past the largest pid


@pytest.mark.slow
def test_a_run_does_not_outlive_the_process_that_started_it(tmp_path: Path) -> None:
    """scbench-ci killed hard (SIGKILL) mid-run: the subreaper kills the run and exits."""
    tag = f"{CANARY}-tree-orphaned-{os.getpid()}"
    script = f"(setsid {_sleeper(tag)}-daemon &) ; exec {_sleeper(tag)}-command"
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "from pathlib import Path\n"
            "from scbench_ci.executors.processes import ProcessTree\n"
            f"tree = ProcessTree(['/bin/sh', '-c', {script!r}], Path.cwd(), dict(os.environ))\n"
            "print(tree.pid, flush=True)\n"
            "time.sleep(300)\n",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert starter.stdout is not None
    subreaper = int(starter.stdout.readline())
    until = time.monotonic() + 30
    while len(_living_canaries(tag)) < 2 and time.monotonic() < until:
        time.sleep(0.01)
    assert len(_living_canaries(tag)) == 2

    starter.kill()
    starter.wait()

    until = time.monotonic() + 10
    while (_living_canaries(tag) or _alive(subreaper)) and time.monotonic() < until:
        time.sleep(0.01)
    assert _living_canaries(tag) == []
    assert not _alive(subreaper)


def _alive(pid: int) -> bool:
    fields = pytest_runner.stat_fields(pid)
    return fields is not None and fields[0] not in pytest_runner.DEAD_STATES
