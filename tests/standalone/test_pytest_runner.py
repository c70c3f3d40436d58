"""The test runner's own parts: what it does to pytest's arguments, the reports folder, the files
it writes and reads, and the processes it kills."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scbench_ci.executors import processes
from scbench_ci.standalone import pytest_runner, subreaper
from scbench_ci.standalone.pytest_runner import (
    KEY_FROM_STDIN,
    KILL_DESCENDANTS,
    SEAL_KEY_VARIABLE,
    SHARD_OPTION,
    START_PREFIX,
    as_under_scbench,
    deal_units,
    fresh_folder,
    json_report_bytes,
    read_regular,
    reports_folders,
    split_arguments,
    start_text,
    take_shard,
    units_of,
    write_new,
)
from testing.paths import REPO_ROOT


def test_the_json_report_is_built_but_saved_by_the_runner_alone() -> None:
    args = [
        "tests/",
        "--ctrf=.scbench/ctrf-report.json",
        "--json-report",
        "--json-report-file=.scbench/pytest-report.json",
        "-vv",
        "--json-report-file=elsewhere.json",  # extra arguments come after scbench-ci's
        "--ctrf=elsewhere-ctrf.json",
    ]
    kept, json_path, ctrf_path = split_arguments(args)
    assert kept == [
        "tests/",
        "--ctrf=.scbench/ctrf-report.json",
        "--json-report",
        "-vv",
        "--ctrf=elsewhere-ctrf.json",
        "--json-report-file=none",
    ]
    assert (json_path, ctrf_path) == (
        Path(".scbench/pytest-report.json"),
        Path(".scbench/ctrf-report.json"),
    )


def test_without_the_json_report_there_is_none_to_write() -> None:
    assert split_arguments(["-q", "tests/x.py"]) == (["-q", "tests/x.py"], None, None)


def test_the_json_report_gets_marks_and_what_was_rerun() -> None:
    first = {"outcome": "rerun", "crash": {"message": "AssertionError: attempt 1"}}
    report = {
        "exitcode": 1,
        "tests": [
            {"nodeid": "t.py::flaky", "outcome": "rerun"},
            {"nodeid": "t.py::always", "outcome": "failed"},
            {"nodeid": "t.py::fine", "outcome": "passed"},
        ],
    }
    data = json_report_bytes(
        report,
        {"t.py::fine": ["error"]},
        {"t.py::flaky": 1, "t.py::always": 2},
        {"t.py::flaky": first, "t.py::always": first},
    )
    assert data is not None
    assert json.loads(data)["tests"] == [
        {
            "nodeid": "t.py::flaky",
            "outcome": "rerun",
            "markers": [],
            "reruns": 1,
            "rerun_failure": first,
        },
        {
            "nodeid": "t.py::always",
            "outcome": "failed",
            "markers": [],
            "reruns": 2,
            "rerun_failure": first,
        },
        # A test that was not rerun gets no new field: without reruns, the report is as it was.
        {"nodeid": "t.py::fine", "outcome": "passed", "markers": ["error"]},
    ]


def test_only_folders_below_the_working_directory_are_replaced() -> None:
    paths = [Path(p) for p in ("r.json", "/tmp/r.json", "../r.json", "a/../../r.json", "x/r.json")]
    assert reports_folders(*paths, None) == {Path("x")}


def test_a_fresh_folder_moves_whatever_was_there_aside(tmp_path: Path) -> None:
    for kind in ("folder", "file", "link", "fifo"):
        path = tmp_path / kind / ".scbench"
        path.parent.mkdir()
        if kind == "folder":
            path.mkdir()
            (path / "pytest-report.json").write_text("forged")
            (path / "pytest-report.json").chmod(0o444)
            path.chmod(0o555)
        elif kind == "file":
            path.write_text("x")
        elif kind == "link":
            path.symlink_to(tmp_path)
        else:
            os.mkfifo(path)

        fresh_folder(path)

        assert path.is_dir() and not path.is_symlink() and list(path.iterdir()) == []
        (aside,) = path.parent.glob(".scbench.discarded-*")
        assert os.path.lexists(aside)


def test_write_new_never_writes_over_or_through_anything(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("canary")
    (tmp_path / "link").symlink_to(outside)
    (tmp_path / "there").write_text("first")
    for name in ("link", "there"):
        with pytest.raises(OSError):
            write_new(tmp_path / name, b"second")
    assert outside.read_text() == "canary" and (tmp_path / "there").read_text() == "first"
    write_new(tmp_path / "new", b"data")
    assert (tmp_path / "new").read_bytes() == b"data"


def test_read_regular_reads_only_a_regular_file_within_the_limit(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"12345")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    os.mkfifo(tmp_path / "fifo")  # must not wait for a writer
    assert read_regular(tmp_path / "file", 5) == b"12345"
    assert read_regular(tmp_path / "file", 4) == "file is larger than 4 bytes"
    assert read_regular(tmp_path / "link", 5) == (
        "link could not be read (Too many levels of symbolic links)"
    )
    assert read_regular(tmp_path / "fifo", 5) == "fifo is not a regular file"
    assert read_regular(tmp_path / "missing", 5) is None


HELD_WATCH = """
import json, os, sys, threading
from scbench_ci.standalone import pytest_runner

released = threading.Event()


class HeldWatch(pytest_runner.OutputWatch):
    def _pump(self):  # passes nothing on until it is released
        released.wait()
        super()._pump()


watch = HeldWatch()
copy = os.dup(1)  # as pytest's capture keeps one of standard output
os.write(1, b"a/test_x.py::before_the_tests\\n")
watch.pause()
os.write(1, b"a/test_x.py::a_test\\n")
os.write(copy, b"a/test_x.py::through_the_copy\\n")
watch.resume()
os.write(copy, b"a/test_x.py::after_the_tests\\n")
os.close(copy)
released.set()
watch.close()
print(json.dumps(watch.seen), file=sys.stderr)
"""


def test_the_watch_steps_aside_while_the_tests_run(tmp_path: Path) -> None:
    """Paused, every descriptor that wrote into the watch's pipe writes to the log, after what
    was in the pipe (its pump held off here); resumed, into the pipe again. What is written
    while paused is not the watch's."""
    log = tmp_path / "log"
    with log.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-c", HELD_WATCH],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    lines = ["before_the_tests", "a_test", "through_the_copy", "after_the_tests"]
    assert log.read_text() == "".join(f"a/test_x.py::{line}\n" for line in lines)
    seen = ["a/test_x.py::before_the_tests", "a/test_x.py::after_the_tests"]
    assert json.loads(done.stderr) == seen


DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        time.sleep(600)
    os._exit(0)
os.wait()
"""


def test_kill_descendants_reaches_a_daemon_that_left_its_parent() -> None:
    """As the runner does it: a child subreaper, so the daemon is reparented to it."""
    script = (
        "import ctypes, subprocess, sys\n"
        "from scbench_ci.standalone.pytest_runner import kill_descendants\n"
        "ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n"
        f"daemon = subprocess.run([sys.executable, '-c', {DAEMON!r}], capture_output=True,"
        " text=True).stdout.strip()\n"
        "print(daemon, kill_descendants(), flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    daemon, killed = int(out[0]), int(out[1])
    try:
        assert killed == 1
        deadline = time.monotonic() + 5
        while _alive(daemon) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(daemon)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Running, not a zombie: a killed daemon may wait to be reaped by whichever subreaper
    inherited it (this test process is one, once a local executor has run in it)."""
    return _state(pid) not in (None, *pytest_runner.DEAD_STATES)


def test_the_environment_is_what_uvx_and_bash_give_pytest_under_scbench(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("uv", "uvx"):
        (tools / tool).write_text("#!/bin/sh\n")
        (tools / tool).chmod(0o755)
    environ = {"PATH": f"{tools}:/usr/bin"}
    as_under_scbench(environ, "/env/bin/python", "/workspace")
    # The runner environment's bin first, as uvx puts it; uv and uvx found where they were.
    assert environ == {
        "PATH": f"/env/bin:{tools}:/usr/bin",
        "UV": str(tools / "uv"),
        "_": str(tools / "uvx"),
        "SHLVL": "1",
        "PWD": "/workspace",
    }
    # Under uvx (the local executor), its bin is first already, and UV is uvx's own.
    again = {"PATH": f"/env/bin:{tools}", "UV": "/elsewhere/uv"}
    as_under_scbench(again, "/env/bin/python", "/w")
    assert again["PATH"] == f"/env/bin:{tools}" and again["UV"] == "/elsewhere/uv"


SEES_THE_BYTECODE = """
import json, os, sys


def test_what_it_sees():
    misplaced = sorted(
        name
        for name, module in list(sys.modules.items())
        if isinstance(getattr(module, "__cached__", None), str)
        and os.path.dirname(module.__cached__)
        != os.path.join(os.path.dirname(module.__file__), "__pycache__")
    )
    seen = {
        "prefix": sys.pycache_prefix,
        "xoptions": sorted(sys._xoptions),
        "misplaced": misplaced,
        "in_argv": [arg for arg in sys.orig_argv if "pycache_prefix" in arg],
    }
    with open("seen.json", "w") as file:
        json.dump(seen, file)
"""


def test_pytest_comes_from_the_prefix_and_the_tests_see_no_prefix(tmp_path: Path) -> None:
    """As a cached runner environment starts it: `-X pycache_prefix`. pytest's imports read and
    write the prefix; from the first test module on, nothing does, and no module names it."""
    prefix, tests = tmp_path / "prefix", tmp_path / "tests"
    tests.mkdir()
    (tests / "test_bytecode.py").write_text(SEES_THE_BYTECODE)
    runner = [sys.executable, "-X", f"pycache_prefix={prefix}", "-I", pytest_runner.__file__]
    subprocess.run(
        [*runner, KILL_DESCENDANTS, "-q", "-p", "no:cacheprovider", "test_bytecode.py"],
        cwd=tests,
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert json.loads((tests / "seen.json").read_text()) == {
        "prefix": None,
        "xoptions": [],
        "misplaced": [],
        "in_argv": [],
    }
    in_prefix = [path.name for path in prefix.rglob("*.pyc")]
    assert any(name.startswith("python.cpython-") for name in in_prefix)  # _pytest/python.py
    assert not any("test_bytecode" in name for name in in_prefix)
    assert any(path.name.startswith("test_bytecode.") for path in (tests / "__pycache__").iterdir())


def test_a_shard_is_taken_out_of_pytests_arguments() -> None:
    told = '{"index": 2, "count": 3, "weights": {"t.py": 1.5, "u.py": "x", "v.py": -1}}'
    kept, shard = take_shard(["-q", f"{SHARD_OPTION}{told}", "tests/", f"{SHARD_OPTION}{{}}"])
    assert kept == ["-q", "tests/"]
    assert shard == {"index": 2, "count": 3, "weights": {"t.py": 1.5}, "warm_up": []}
    assert take_shard(["-q"]) == (["-q"], None)


@pytest.mark.parametrize(
    "told",
    [
        "not json",
        "[]",
        '{"index": 0, "count": 2}',
        '{"index": 3, "count": 2}',
        '{"index": true, "count": 2}',
        '{"index": 1, "count": 100000}',
        '{"index": 1.0, "count": 2}',
    ],
)
def test_a_shard_that_is_not_one_leaves_the_run_whole(told: str) -> None:
    assert take_shard([f"{SHARD_OPTION}{told}", "-q"]) == (["-q"], None)


def test_units_keep_together_what_shares_a_fixture_wider_than_a_class() -> None:
    facts: list[tuple[str, str | None, str | None]] = [
        ("t/a.py", None, None),
        ("t/a.py", "TestX", None),
        ("t/a.py", "TestX", "session"),
        ("t/a.py", "TestY", None),
        ("t/a.py", None, None),
        ("t/b.py", "TestZ", None),
        ("t/b.py", None, "module"),
        ("p/c.py", "TestW", None),
        ("p/d.py", None, "package"),
    ]
    assert units_of(facts) == [
        "t/a.py::",
        "t/a.py::TestX",
        "t/a.py::TestX",
        "t/a.py::TestY",
        "t/a.py::",
        "t/b.py",
        "t/b.py",
        "p/",
        "p/",
    ]


def test_units_are_dealt_heaviest_first_to_the_least_loaded_shard() -> None:
    sizes = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}
    weights = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    assert deal_units(sizes, weights, 2) == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 2}
    # Whatever order the collection gave them in.
    reordered = dict(reversed(list(sizes.items())))
    assert deal_units(reordered, weights, 2) == deal_units(sizes, weights, 2)
    # More shards than units: the last ones get none.
    assert sorted(deal_units({"a": 3, "b": 1}, {}, 3).values()) == [1, 2]


def test_units_without_a_weight_weigh_their_tests_at_the_known_mean() -> None:
    sizes = {"known": 2, "new": 10, "small": 1}
    # 2 tests took 8 s: 4 s a test, so `new` weighs 40 s and goes first.
    dealt = deal_units(sizes, {"known": 8.0}, 2)
    assert dealt["new"] == 1 and dealt["known"] == 2 and dealt["small"] == 2
    # Nothing known, or all of it zero: by the number of tests.
    assert deal_units({"a": 5, "b": 3, "c": 2}, {}, 2) == {"a": 1, "b": 2, "c": 2}
    assert deal_units({"a": 5, "b": 3, "c": 2}, {"a": 0.0, "b": 0.0}, 2) == {
        "a": 1,
        "b": 2,
        "c": 2,
    }


SHARDED_TESTS = {
    "conftest.py": """
def pytest_collection_modifyitems(items):
    items.reverse()  # a problem's own order: the shards keep it
""",
    "test_a.py": """
import pytest

def test_one(): pass

@pytest.mark.parametrize("n", range(3))
def test_many(n): pass

class TestX:
    def test_x1(self): pass
    def test_x2(self): pass

class TestY:
    class TestInner:
        def test_inner(self): pass
    def test_y(self): pass
""",
    "test_b.py": """
import pytest

@pytest.fixture(scope="module")
def shared():
    return []

def test_uses(shared): pass

class TestZ:
    def test_z(self): pass
""",
    "test_c.py": """
def test_c1(): pass
def test_c2(): pass
""",
}


def _collected(folder: Path, *args: str) -> list[str]:
    runner = [sys.executable, "-I", pytest_runner.__file__, KILL_DESCENDANTS]
    done = subprocess.run(
        [*runner, "-q", "--collect-only", "-p", "no:cacheprovider", "-k", "not test_c2", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_shard_deals_the_same_collection_and_keeps_its_part(tmp_path: Path) -> None:
    for name, source in SHARDED_TESTS.items():
        (tmp_path / name).write_text(source)
    whole = _collected(tmp_path)
    assert len(whole) == 11 and "test_c.py::test_c2" not in whole  # -k deselected it first
    weights = '{"test_a.py::": 9.0}'
    parts = [
        _collected(tmp_path, f'{SHARD_OPTION}{{"index": {k}, "count": 3, "weights": {weights}}}')
        for k in (1, 2, 3)
    ]
    # Each test in exactly one shard, each shard in the whole's order.
    assert sorted(test for part in parts for test in part) == sorted(whole)
    for part in parts:
        assert part == [test for test in whole if test in part]
    where = {test: index for index, part in enumerate(parts) for test in part}
    # The module-scoped fixture's file stays whole; a class, with its inner class, is one unit.
    assert len({where[test] for test in whole if test.startswith("test_b.py")}) == 1
    assert len({where[test] for test in whole if "TestY" in test}) == 1
    # The heaviest unit, told: the module-level tests of test_a.py, alone in the first shard.
    assert parts[0] == [test for test in whole if test.startswith("test_a.py::test_")]


STDIN_SEEN = """
import os

def test_stdin():
    key = os.environ.get("SCBENCH_CI_SEAL_KEY", "none")
    with open("seen.txt", "w") as file:
        file.write(os.readlink("/proc/self/fd/0") + "\\n" + key)
"""


def _started_ahead(folder: Path, stdin: bytes) -> subprocess.CompletedProcess[str]:
    runner = [sys.executable, "-I", pytest_runner.__file__, KILL_DESCENDANTS]
    return subprocess.run(
        [*runner, "-q", "-s", "-p", "no:cacheprovider", "test_stdin.py"],
        cwd=folder,
        input=stdin,
        capture_output=True,
        env={**os.environ, SEAL_KEY_VARIABLE: KEY_FROM_STDIN},
        timeout=120,
        check=False,
    )


def test_a_runner_started_ahead_takes_its_key_from_stdin_then_has_none(tmp_path: Path) -> None:
    (tmp_path / "test_stdin.py").write_text(STDIN_SEEN)
    done = _started_ahead(tmp_path, b"the-key\n")
    out = done.stdout.decode()
    assert done.returncode == 0, out
    assert out.startswith(f"{START_PREFIX}{start_text('the-key')}\n")
    # The tests see stdin as a command started without one has it, and no key.
    assert (tmp_path / "seen.txt").read_text().splitlines() == ["/dev/null", "none"]


def test_a_runner_started_ahead_and_never_given_its_key_ends_quietly(tmp_path: Path) -> None:
    (tmp_path / "test_stdin.py").write_text(STDIN_SEEN)
    done = _started_ahead(tmp_path, b"")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (tmp_path / "seen.txt").exists()


def test_below_walks_every_process_under_the_roots() -> None:
    parents = {2: 1, 3: 2, 4: 3, 5: 1, 6: 9, 7: 6, 1: 0}
    assert pytest_runner.below({1}, parents) == {2, 3, 4, 5}
    assert pytest_runner.below({2, 6}, parents) == {3, 4, 7}
    assert pytest_runner.below({1, 3}, parents) == {2, 3, 4, 5}  # a root under another
    assert pytest_runner.below({8}, parents) == set()


def test_the_walk_leaves_out_an_ended_process_and_reads_a_name_with_parentheses(
    tmp_path: Path,
) -> None:
    """A zombie (ended, not reaped) is not alive, for the runner, the subreaper and the host
    alike; a command's name may hold ') (' and spaces."""
    odd = tmp_path / "a) 1 2 (b"
    odd.symlink_to(sys.executable)
    sleeper = subprocess.Popen([str(odd), "-c", "import time; time.sleep(60)"])
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while _state(ended.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.02)
        fields = pytest_runner.stat_fields(sleeper.pid)
        assert fields is not None
        assert fields[1] == str(os.getpid())
        assert _state(ended.pid) in pytest_runner.DEAD_STATES
        below = pytest_runner.living_descendants(os.getpid())
        assert sleeper.pid in below
        assert ended.pid not in below
        table = processes._read_table()
        assert table[ended.pid].zombie
        assert not table[sleeper.pid].zombie
        assert table[sleeper.pid].parent == os.getpid()
    finally:
        sleeper.kill()
        sleeper.wait()
        ended.wait()


def test_the_subreaper_walks_with_the_runner_beside_it() -> None:
    """subreaper.py runs under `-I`, importing nothing of the package: it loads the runner's walk
    from the file beside it."""
    runner = subreaper._runner()
    assert runner.__file__ == pytest_runner.__file__
    assert runner.DEAD_STATES == ("Z", "X")
    assert os.getpid() not in runner.living_descendants(os.getpid())


def _state(pid: int) -> str | None:
    fields = pytest_runner.stat_fields(pid)
    return fields[0] if fields else None
