"""The test process's entry point: pytest, hardened against the code it tests, with sealed reports.

This file runs inside the run's test environment, where only the standard library, pytest and its
plugins can be imported (never scbench_ci):
`python -I pytest_runner.py --kill-others|--kill-descendants <pytest arguments>`.

- It makes itself undumpable first, so processes of the same user (the submission) can neither
  attach to it nor open its /proc files (memory, environment, file descriptors).
- It takes the seal key out of its environment, so no child process inherits it, and prints a
  start line keyed with it: from then on, the submission's code may run. Started ahead of its
  run (the key `-`), it imports pytest, then reads the key from its stdin, which it then points
  at /dev/null, as a command started without one has it.
- Started with `-X pycache_prefix=DIR` (a cached runner environment's compiled bytecode), it
  imports pytest from there, then leaves the prefix before pytest starts: what the tests import
  is compiled and cached as under SCBench, and no module, option or `sys` attribute tells the
  tests it was there. (Python images ship their standard library without bytecode, and the tests
  user cannot write it: every start would compile pytest's imports again.)
- When the tests are done, and before any report is written, it kills what the tests left
  running: with `--kill-others` (where it is alone with the tests' processes, as in a container)
  every process it may signal; with `--kill-descendants` every process below it (it becomes a
  child subreaper, so a daemon that left its parent is still below it).
- Then it replaces the reports folder with a fresh one, so nothing the tests put there (a
  read-only file, a fifo, a symlink, a folder under a report's name) is written through.
- It writes pytest-json-report's report itself, from the plugin's data in memory (with each
  test's marks as pytest knows them), and lets the CTRF plugin write its own into the fresh
  folder.
- With pytest-rerunfailures (`--reruns`), it records each failed attempt that is run again: the
  JSON report keeps only a test's last attempt, so the runner adds, to each test that was rerun,
  how many times (`reruns`) and its first failed attempt's stage (`rerun_failure`, as the plugin
  writes a stage). It gives each rerun attempt pytest-timeout's full timeout: that plugin arms one
  timer around all the attempts of a test, so once it fired the later attempts had none.
- With `--scbench-inventory=SPEC` (SCBench 1.0's rules), it also takes the inventory of the tests
  as SCBench 1.0's `--collect-only -q` passes would find it (`inventory_passes`), writes it beside
  the reports once collection is done and prints a line keyed with the secret over its digest, so
  that a run killed afterwards still has a sealed inventory.
- It prints one seal line: an HMAC, keyed with the run's secret, of the exit code, the number of
  processes killed and the reports' digests (the inventory's among them). A report changed after
  it was written, or a forged line, does not match.
- Given `--scbench-ci-shard=<json>` (anywhere among pytest's arguments, which never see it), it runs
  one shard of a checkpoint's tests: once the whole collection is made and every other plugin
  has selected and ordered it, it deals the collection's units (a test file, or an outer class of
  one, never apart what a module- or package-scoped fixture shares) to the shards by their
  weights, the longest first to the least loaded, and deselects the units not dealt to its own.
  Every shard collects the same files and deals alike, so each runs its part and the parts are
  the whole; the report records the collection it dealt from (SHARD_REPORT_KEY), and the
  inventory is the whole collection's, as the unsharded run's.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import termios
import threading
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeGuard  # Python 3.10: the image's may be older

SEAL_KEY_VARIABLE = "SCBENCH_CI_SEAL_KEY"
KEY_FROM_STDIN = "-"
"""SEAL_KEY_VARIABLE's value for a runner started ahead of its run: it imports pytest, then waits
for the key as the one line of its stdin (nothing: it ends at once)."""
SEAL_PREFIX = "[scbench-ci] seal "
START_PREFIX = "[scbench-ci] runner started "
COLLECTED_PREFIX = "[scbench-ci] collected "
KILL_OTHERS = "--kill-others"
KILL_DESCENDANTS = "--kill-descendants"
INVENTORY_OPTION = "--scbench-inventory="
CTRF_OPTION = "--ctrf="
JSON_REPORT_FILE_OPTION = "--json-report-file="
JSON_REPORT_FLAG = "--json-report"
SHARD_OPTION = "--scbench-ci-shard="
"""`--scbench-ci-shard={"index": K, "count": N, "weights": {UNIT: SECONDS}, "warm_up": ARGV}`:
run shard K (from 1) of N; each unit's expected seconds, where known; and, when the collection's
first test is another shard's, a command to run before this shard's first test, as an earlier
test of one whole session would have (the first `uv run` builds the workspace's project, and says
so: the tests that come later see nothing of it)."""
SHARD_REPORT_KEY = "scbench_ci_shard"
"""The JSON report's record of a shard: its index and count, every test of the collection it was
dealt from (`items`, in the order pytest would run them all), and the warm-up's exit code when it
ran (`warmed_up`)."""
MAX_SHARDS = 1024
_WIDER_THAN_A_TEST = ("module", "package")
"""Fixture scopes whose instance tests of more than one class share: they stay in one shard."""
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_KILL_ROUNDS = 100
DEAD_STATES = ("Z", "X")
"""The states (/proc/PID/stat) of a process that has ended: a zombie, not reaped yet, and a dead
one, being removed. Neither runs any more, nor can be killed."""
STARTED_FIELD = 19
"""Where a process's start time (clock ticks after boot) is among stat_fields: the last one read."""
_MAX_CTRF_BYTES = 256 * 1024 * 1024
"""The evaluator's own limit (seal.MAX_REPORT_BYTES); this file cannot import scbench_ci."""
_MAX_PASS_OUTPUT = 64 * 1024 * 1024
"""What is read of a `--collect-only` pass's output; past it, the pass failed."""
_MAX_SEEN_LINES = 100


def seal_text(key: str, exit_code: int, killed: int, reports: list[bytes | None]) -> str:
    """The seal line's payload (without the prefix), for these reports' bytes (None: absent)."""
    digests = [hashlib.sha256(data).hexdigest() if data is not None else "-" for data in reports]
    fields = f"exit={exit_code} killed={killed}"
    message = f"{fields} {' '.join(digests)}".encode()
    return f"{fields} {hmac.new(key.encode(), message, hashlib.sha256).hexdigest()}"


def collected_text(key: str, inventory: bytes) -> str:
    """The collected line's payload: the inventory's digest, keyed."""
    message = f"inventory {hashlib.sha256(inventory).hexdigest()}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def start_text(key: str) -> str:
    """The start line's payload: proof that this runner, holding the key, began."""
    return hmac.new(key.encode(), b"started", hashlib.sha256).hexdigest()


def leave_pycache_prefix() -> None:
    """No bytecode prefix from now on, as if none had been given: not in `sys.orig_argv`, and
    each module imported so far names the bytecode file it would have had without one
    (`__cached__`, `__spec__.cached`)."""
    prefix = sys.pycache_prefix
    if prefix is None:
        return
    sys.pycache_prefix = None
    sys._xoptions.pop("pycache_prefix", None)
    argv = sys.orig_argv
    for index in range(len(argv) - 1):
        if argv[index] == "-X" and argv[index + 1].startswith("pycache_prefix="):
            del argv[index : index + 2]
            break
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        cached = getattr(module, "__cached__", None)
        if spec is None or not isinstance(cached, str) or not cached.startswith(prefix):
            continue
        spec.cached = None  # recomputed from its origin, without the prefix, when read
        module.__cached__ = spec.cached  # type: ignore[attr-defined]


def mark_names(marks: Iterator[Any]) -> list[str]:
    """A test's marks by name, once each, in pytest's order; `parametrize` is how its cases were
    made, not a mark of the test."""
    return list(dict.fromkeys(mark.name for mark in marks if mark.name != "parametrize"))


def restart_timeout(item: Any) -> None:
    """Arm pytest-timeout's timer for `item` anew, as its `pytest_runtest_protocol` does for the
    first attempt (pytest-dev/pytest-rerunfailures#99). A timeout of the call alone
    (`func_only`) is armed by each attempt's call already."""
    settings_of = getattr(sys.modules.get("pytest_timeout"), "_get_item_settings", None)
    hook = item.config.pluginmanager.hook
    if settings_of is None or not hasattr(hook, "pytest_timeout_set_timer"):
        return
    settings = settings_of(item)
    if settings.timeout and not settings.func_only:
        hook.pytest_timeout_cancel_timer(item=item)
        hook.pytest_timeout_set_timer(item=item, settings=settings)


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


def kill_descendants() -> int:
    """SIGKILL every process below this one (reparented daemons included), until none is left."""
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        alive = living_descendants(os.getpid())
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= alive
        _reap()
    return len(killed)


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


def process_stats() -> dict[int, list[str]]:
    """stat_fields of every process, by pid; none where there is no /proc. The one reader of
    /proc's process table: subreaper.py and scbench_ci.executors.processes read it through this."""
    stats: dict[int, list[str]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            fields = stat_fields(int(entry.name)) if entry.name.isdigit() else None
            if fields is not None:
                stats[int(entry.name)] = fields
    return stats


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (which may hold spaces and ')'): the
    state first, then the parent, ..., the session at 3, the start time at 19 (proc(5) from its
    field 3 on); None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 1 :].split()
    return fields if len(fields) > STARTED_FIELD else None


def below(roots: Iterable[int], parents: Mapping[int, int]) -> set[int]:
    """The processes under `roots` (a root only if it is under another), each one's parent read
    from `parents`."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    frontier = list(roots)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def living_descendants(root: int) -> set[int]:
    """The living processes below `root` (zombies are reaped, not killed; dead ones are gone)."""
    stats = process_stats()
    parents = {pid: int(fields[1]) for pid, fields in stats.items() if fields[0] not in DEAD_STATES}
    return below({root}, parents)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def fresh_folder(path: Path) -> None:
    """Make `path` a new, empty folder of this process's, moving aside whatever is there."""
    if os.path.lexists(path):
        aside = path.with_name(f"{path.name}.discarded-{secrets.token_hex(8)}")
        os.rename(path, aside)
    os.mkdir(path, 0o755)


def write_new(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Create `path` (never through a symlink, never over something already there) with `data`,
    given whole or in chunks."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(descriptor, "wb") as output:
        for chunk in (data,) if isinstance(data, bytes) else data:
            output.write(chunk)


def read_regular(path: Path | str, limit: int, dir_fd: int | None = None) -> bytes | str | None:
    """The content of `path` (in the folder `dir_fd`, if given) when it is a regular file, not a
    link, of at most `limit` bytes; None when nothing is there; else why it was not read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{os.path.basename(path)} could not be read ({error.strerror})"
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return f"{os.path.basename(path)} is not a regular file"
        data = stream.read(limit + 1)
    if len(data) > limit:
        return f"{os.path.basename(path)} is larger than {limit} bytes"
    return data


def split_arguments(args: list[str]) -> tuple[list[str], Path | None, Path | None]:
    """pytest's arguments with the JSON report's file taken over by the runner; where each
    report goes.

    Every `--json-report-file=PATH` gives way to `--json-report-file=none` (the plugin's own way to
    build the report without saving it): the runner writes it. The reports go where the first of
    each option says (scbench-ci's own; extra arguments come after them).
    """
    kept: list[str] = []
    json_path = ctrf_path = None
    for arg in args:
        if arg.startswith(JSON_REPORT_FILE_OPTION):
            json_path = json_path or Path(arg[len(JSON_REPORT_FILE_OPTION) :])
            continue
        if arg.startswith(CTRF_OPTION):
            ctrf_path = ctrf_path or Path(arg[len(CTRF_OPTION) :])
        kept.append(arg)
    if JSON_REPORT_FLAG not in kept:
        return kept, None, ctrf_path
    return [*kept, f"{JSON_REPORT_FILE_OPTION}none"], json_path, ctrf_path


def take_shard(args: list[str]) -> tuple[list[str], dict[str, Any] | None]:
    """pytest's arguments without any SHARD_OPTION, and the first one's shard (None: none given,
    or not one: the run is then whole)."""
    kept = [arg for arg in args if not arg.startswith(SHARD_OPTION)]
    given = next((arg[len(SHARD_OPTION) :] for arg in args if arg.startswith(SHARD_OPTION)), None)
    try:
        shard = json.loads(given) if given is not None else None
    except ValueError:
        shard = None
    if not isinstance(shard, dict):
        return kept, None
    index, count, weights = shard.get("index"), shard.get("count"), shard.get("weights", {})
    if not (_whole(index) and _whole(count) and 1 <= index <= count <= MAX_SHARDS):
        return kept, None
    if not isinstance(weights, dict):
        weights = {}
    seconds = {
        str(unit): float(value)
        for unit, value in weights.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e9
    }
    warm_up = shard.get("warm_up", [])
    if not isinstance(warm_up, list) or not all(isinstance(arg, str) for arg in warm_up):
        warm_up = []
    return kept, {"index": index, "count": count, "weights": seconds, "warm_up": warm_up}


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def units_of(facts: list[tuple[str, str | None, str | None]]) -> list[str]:
    """Each test's unit, from its (file, outer class, widest fixture scope): its folder
    (`dir/`) when a package-scoped fixture is used there, its file when a module-scoped one is
    used in the file, else its outer class (`file::Class`) or the file's tests outside any class
    (`file::`)."""
    whole_folders = {os.path.dirname(file) for file, _, scope in facts if scope == "package"}
    whole_files = {file for file, _, scope in facts if scope == "module"}
    units = []
    for file, outer, _ in facts:
        if os.path.dirname(file) in whole_folders:
            units.append(f"{os.path.dirname(file)}/")
        elif file in whole_files:
            units.append(file)
        else:
            units.append(f"{file}::{outer or ''}")
    return units


def deal_units(sizes: dict[str, int], weights: dict[str, float], count: int) -> dict[str, int]:
    """Each unit's shard (from 1): the heaviest first, each to the least loaded shard (of equals,
    the one with the fewest tests, then the lowest). A unit without a weight weighs its tests at
    the known units' mean per test; with no weight known (or all zero), each test weighs one.
    Only the units and their sizes decide, never their order."""
    known = [unit for unit in sizes if unit in weights]
    known_tests = sum(sizes[unit] for unit in known)
    known_s = sum(weights[unit] for unit in known)
    per_test = known_s / known_tests if known_tests and known_s > 0 else 1.0
    weight = {
        unit: weights[unit] if unit in weights and known_s > 0 else sizes[unit] * per_test
        for unit in sizes
    }
    loads = [0.0] * count
    tests = [0] * count
    dealt = {}
    for unit in sorted(sizes, key=lambda unit: (-weight[unit], unit)):
        shard = min(range(count), key=lambda index: (loads[index], tests[index], index))
        dealt[unit] = shard + 1
        loads[shard] += weight[unit]
        tests[shard] += sizes[unit]
    return dealt


def test_facts(item: Any, class_type: type[Any]) -> tuple[str, str | None, str | None]:
    """An item's file (as its node id names it), outer class (the outermost node of
    `class_type`, pytest's Class) and widest fixture scope beyond a class's."""
    outer: str | None = next(
        (node.name for node in item.listchain() if isinstance(node, class_type)), None
    )
    widest = None
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        scope = getattr(definitions[-1], "scope", None) if definitions else None
        if scope in _WIDER_THAN_A_TEST and widest != "package":
            widest = scope
    return item.nodeid.split("::", 1)[0], outer, widest


def read_key() -> str:
    """The first line of stdin (empty at its end), then stdin is /dev/null."""
    data = b""
    while b"\n" not in data and len(data) < 4096:
        chunk = os.read(0, 4096)
        if not chunk:
            break
        data += chunk
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return data.split(b"\n", 1)[0].decode("ascii", errors="replace").strip()


def warm_up(argv: list[str]) -> int | None:
    """Run `argv` as the tests' own processes run (this process's environment and folder), its
    output thrown away: its exit code (None: it could not start)."""
    import subprocess

    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    except OSError:
        return None
    return done.returncode


def reports_folders(*paths: Path | None) -> set[Path]:
    """The folders of the reports that the runner may replace: below the working directory."""
    folders = {path.parent for path in paths if path is not None}
    return {f for f in folders if not f.is_absolute() and f.parts and ".." not in f.parts}


def as_under_scbench(environ: MutableMapping[str, str], executable: str, cwd: str) -> None:
    """What pytest's process sees under SCBench, which runs `uvx --with=... pytest` from a
    `bash -l` script: uvx puts its environment's bin folder first on PATH (so `python`, `python3`
    and a `uv run` outside any project find the environment's Python, where the test dependencies
    are) and names its uv in UV; bash sets SHLVL, `_` (the command it ran) and PWD."""
    search = environ.get("PATH", "")
    bin_dir = os.path.dirname(executable)
    if search.split(os.pathsep)[0] != bin_dir:
        environ["PATH"] = os.pathsep.join(filter(None, [bin_dir, search]))
    for name, tool in (("UV", "uv"), ("_", "uvx")):
        found = shutil.which(tool, path=search)
        if found is not None:
            environ.setdefault(name, found)
    environ.setdefault("SHLVL", "1")
    environ["PWD"] = cwd


def collected_ids(text: str) -> list[str]:
    """The node ids SCBench 1.0 takes from a `pytest --collect-only -q` pass's output
    (`evaluation/collection.py` `_parse_collect_stdout`): each line, stripped, that holds `::`
    and no space and is neither a `=` rule nor the `collected` line. An id with a space is never
    taken, and a line someone else printed that looks like one is."""
    ids = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("=", "collected ")):
            continue
        if "::" in stripped and " " not in stripped:
            ids.append(stripped)
    return ids


def printed_ids(node_ids: Iterable[str]) -> list[str]:
    """What SCBench 1.0 takes from the lines a `--collect-only -q` pass prints for these items,
    one node id a line."""
    return collected_ids("".join(f"{node_id}\n" for node_id in node_ids))


def _write_all(descriptor: int, data: bytes) -> None:
    while data:
        data = data[os.write(descriptor, data) :]


def _descriptors_of(file: os.stat_result) -> list[int]:
    """This process's open descriptors of `file` (of a pipe: either end)."""
    try:
        candidates = [int(name) for name in os.listdir("/dev/fd")]
    except OSError:  # no /dev/fd: standard output only
        candidates = [1]
    found = []
    for descriptor in candidates:
        try:
            status = os.fstat(descriptor)
        except OSError:  # the listing's own, closed by now
            continue
        if (status.st_dev, status.st_ino) == (file.st_dev, file.st_ino):
            found.append(descriptor)
    return found


def _bytes_waiting(read_end: int) -> int:
    return int.from_bytes(fcntl.ioctl(read_end, termios.FIONREAD, bytes(4)), sys.byteorder)


class OutputWatch:
    """Standard output (descriptor 1) through a pipe while the tests are collected and once they
    have run, every byte passed on to the log unchanged. pytest's terminal reporter writes to the
    log itself (`take_reporter`), so what comes through the pipe is everyone else's: a conftest's
    print, a process it started. The lines of it that SCBench 1.0 would take for node ids had they
    been printed in its `--collect-only -q` passes are kept in `seen`.

    While the tests run (`pause`), standard output is the log itself, as without the watch: a
    pass runs no test, so nothing printed then is one of its lines; and what a test's process
    writes is in the log even when pytest is killed the moment after, where the pipe would lose
    what its pump, in pytest's process, had not passed on yet."""

    def __init__(self) -> None:
        self.log = os.dup(1)
        self.stream = open(  # noqa: SIM115 (the log's, for the terminal reporter, until the end)
            self.log, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False
        )
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        os.dup2(write_end, 1)
        os.close(write_end)
        os.set_blocking(read_end, False)
        self.seen: list[str] = []
        self.reporter_taken = False
        self._read_end = read_end
        self._pipe = os.fstat(read_end)
        self._lock = threading.Lock()
        """Held while a chunk is read from the pipe and passed on: by the pump, and by `pause`
        to pass on what is in the pipe before the log is written to directly."""
        self._unended = b""
        self._ended = False
        self._paused: list[int] = []
        self._write_end: int | None = None
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def take_reporter(self, config: Any) -> None:
        """pytest's terminal reporter writes to the log, not through the pipe."""
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        if writer is not None and hasattr(writer, "_file"):
            writer._file = self.stream
            self.reporter_taken = True

    def pause(self) -> None:
        """Every descriptor of this process that writes into the pipe (standard output, and the
        copy pytest's capture keeps of it and puts back after each test) writes to the log; what
        is in the pipe by then is passed on first."""
        sys.stdout.flush()
        self.stream.flush()
        with self._lock:
            if self._ended:  # nothing writes into the pipe any more
                return
            self._paused = [d for d in _descriptors_of(self._pipe) if d != self._read_end]
            if not self._paused:
                return
            self._write_end = os.dup(self._paused[0])
            for descriptor in self._paused:
                os.dup2(self.log, descriptor)
            waiting = _bytes_waiting(self._read_end)
            while waiting > 0 and (chunk := self._read(min(waiting, 65536))):
                self._pass_on(chunk)
                waiting -= len(chunk)

    def resume(self) -> None:
        """The descriptors `pause` pointed at the log write into the pipe again (those that
        still write to the log)."""
        if self._write_end is None:
            return
        sys.stdout.flush()
        log = os.fstat(self.log)
        for descriptor in set(self._paused) & set(_descriptors_of(log)):
            os.dup2(self._write_end, descriptor)
        os.close(self._write_end)
        self._write_end = None

    def _read(self, most: int) -> bytes | None:
        """Up to `most` bytes of the pipe; b"" at its end, None when it is empty."""
        try:
            return os.read(self._read_end, most)
        except BlockingIOError:
            return None

    def _pump(self) -> None:
        ready = select.poll()
        ready.register(self._read_end, select.POLLIN)
        try:
            while True:
                ready.poll()
                with self._lock:
                    chunk = self._read(65536)
                    if chunk == b"":
                        break
                    if chunk is not None:  # else `pause` passed it on
                        self._pass_on(chunk)
        except OSError:
            pass
        finally:
            with self._lock:
                self._note(self._unended)
                os.close(self._read_end)
                self._ended = True

    def _pass_on(self, chunk: bytes) -> None:
        _write_all(self.log, chunk)
        lines, _, self._unended = (self._unended + chunk).rpartition(b"\n")
        if len(self._unended) > 1024 * 1024:  # no end of line for long: a line of its own
            lines, self._unended = lines + b"\n" + self._unended, b""
        self._note(lines)

    def _note(self, data: bytes) -> None:
        found = collected_ids(data.decode("utf-8", errors="replace"))
        self.seen += found[: _MAX_SEEN_LINES - len(self.seen)]

    def close(self) -> None:
        """Standard output is the log again; what was written before is through."""
        sys.stdout.flush()
        self.stream.flush()
        os.dup2(self.log, 1)
        if self._write_end is not None:
            os.close(self._write_end)
            self._write_end = None
        self._thread.join(5)


class InventoryTaker:
    """SCBench 1.0's inventory of the tests (`--scbench-inventory=SPEC`): for each of its
    `--collect-only -q` passes (`-k <checkpoint>`, with `-m error`, `-m functionality`,
    `-m regression` or none, and one per prior checkpoint), the node ids it would print, and its
    exit code.

    Taken in this session where that gives the same: each pass's items are those pytest's own
    `-k`/`-m` deselection keeps, applied where pytest applies it (after the conftests' and
    plugins' `pytest_collection_modifyitems`, before pytest's), of the items that are still there
    once every hook has run. Taken by running the passes as SCBench builds them (`argv` of each,
    in this container, this runner's pytest) where it may not be: when the spec says so (the
    user's pytest arguments may change what a pass prints or keeps), when something other than
    pytest printed a line a pass would take for a node id, when a warning pytest would show holds
    one, or when pytest's deselection could not be reproduced."""

    def __init__(self, spec: dict[str, Any], watch: OutputWatch | None) -> None:
        self.passes: list[dict[str, Any]] = spec["passes"]
        self.path = Path(spec["file"])
        self.watch = watch
        self.collected = 0
        self.found: list[dict[str, Any]] | None = None
        self.selections: list[list[Any] | None] | None = None
        self.collection_failed = False
        self.reasons: list[str] = [spec["passes_because"]] if spec.get("passes_because") else []
        self.taken_by = "passes" if self.reasons else "session"
        self.dealt_from: list[Any] | None = None
        """The whole collection a shard dealt its part from: the inventory is the checkpoint's,
        as an unsharded run's, not the shard's part."""

    def run_passes(self, reason: str) -> None:
        self.found = run_passes(self.passes)
        self.taken_by = "passes"
        if reason not in self.reasons:
            self.reasons.append(reason)

    def pytest_sessionstart(self, session: Any) -> None:
        if self.watch is not None:
            self.watch.take_reporter(session.config)
            if not self.watch.reporter_taken:
                self.reasons.append("pytest's terminal reporter could not be told from others")

    def pytest_collectreport(self, report: Any) -> None:
        import pytest

        self.collected += sum(isinstance(each, pytest.Item) for each in report.result)

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str) -> None:
        if when not in ("config", "collect"):
            return
        try:
            from _pytest.warnings import warning_record_to_str

            text = warning_record_to_str(warning_message)
        except Exception:  # pytest's own formatting, whatever it raises
            text = str(getattr(warning_message, "message", ""))
        if collected_ids(f"{nodeid}\n{text}"):
            self.reasons.append("a warning of the collection holds a line like a node id")

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        """Where pytest's own `-k`/`-m` deselection would come next: each pass's items."""
        if self.found is not None:
            return
        self.collection_failed = session.testsfailed > 0
        try:
            self.selections = [
                selected_by(items, one["keyword"], one["marker"], config) for one in self.passes
            ]
        except Exception as error:  # an item pytest's matchers cannot read
            self.reasons.append(f"pytest's -k/-m could not be applied here ({repr(error)[:200]})")

    def pytest_collection_finish(self, session: Any) -> None:
        if self.found is None and self.selections is not None:
            whole = self.dealt_from if self.dealt_from is not None else session.items
            kept = {id(item) for item in whole}
            self.found = []
            for one, chosen in zip(self.passes, self.selections, strict=True):
                node_ids = [i.nodeid for i in chosen or () if id(i) in kept]
                # pytest's exit codes: interrupted by collection errors, a usage error (the
                # expression), no tests collected.
                code = (
                    2 if self.collection_failed else 4 if chosen is None else 0 if node_ids else 5
                )
                self.found.append(_pass_found(one, code, node_ids))

    def must_run_passes(self) -> str | None:
        """Why the session's inventory may not be SCBench's, if it may not."""
        if self.taken_by == "passes":
            return None
        if self.watch is not None and self.watch.seen:
            seen = self.watch.seen[0][:200]
            return f"a line like a node id was printed besides pytest's: {seen!r}"
        return self.reasons[0] if self.reasons else None

    def document(self, exit_code: int | None) -> bytes:
        """The inventory as the evaluator reads it; before the collection is done (or after it
        failed), each pass as the session ended."""
        found = self.found
        if found is None:
            code = 2 if exit_code is None else exit_code
            found = [_pass_found(one, code, []) for one in self.passes]
        return json.dumps(
            {
                "collected": self.collected,
                "taken_by": self.taken_by,
                "reasons": self.reasons,
                "passes": found,
            }
        ).encode()


def _pass_found(one: dict[str, Any], exit_code: int, node_ids: list[str]) -> dict[str, Any]:
    ids = printed_ids(node_ids) if exit_code in (0, 5) else []
    return {"marker": one["marker"], "keyword": one["keyword"], "exit": exit_code, "ids": ids}


def selected_by(
    items: list[Any], keyword: str, marker: str | None, config: Any
) -> list[Any] | None:
    """The items `pytest -k keyword [-m marker]` keeps of `items`, by pytest's own deselection
    (`_pytest.mark`); None when pytest refuses the expression (a usage error, exit code 4)."""
    import pytest
    from _pytest.mark import deselect_by_keyword, deselect_by_mark

    kept = list(items)
    asked = _AskedFor(keyword, marker or "", config)
    try:
        deselect_by_keyword(kept, asked)  # type: ignore[arg-type]
        deselect_by_mark(kept, asked)  # type: ignore[arg-type]
    except pytest.UsageError:
        return None
    return kept


class _AskedFor:
    """The parts of pytest's config its `-k`/`-m` deselection reads, for one pass; deselecting
    here tells no plugin."""

    def __init__(self, keyword: str, marker: str, config: Any) -> None:
        self.option = _Options(keyword, marker)
        self.hook = _NoHooks()
        self.getini = config.getini
        self._iter_registered_markers = config._iter_registered_markers


class _Options:
    def __init__(self, keyword: str, marker: str) -> None:
        self.keyword = keyword
        self.markexpr = marker


class _NoHooks:
    def pytest_deselected(self, items: Sequence[Any]) -> None:
        pass


def run_passes(passes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pass run as SCBench 1.0 runs it (`argv`: `--collect-only -q`, its `-m` and `-k`, the
    user's arguments), here, with this environment's pytest; its node ids read from its output as
    SCBench reads them."""
    script = os.path.join(os.path.dirname(sys.executable), "pytest")
    command = [script] if os.path.isfile(script) else [sys.executable, "-m", "pytest"]
    found = []
    for one in passes:
        exit_code, output = _collect([*command, *one["argv"]])
        found.append(
            {
                "marker": one["marker"],
                "keyword": one["keyword"],
                "exit": exit_code,
                "ids": collected_ids(output) if exit_code in (0, 5) else [],
            }
        )
    return found


def _collect(argv: list[str]) -> tuple[int, str]:
    """A pass's exit code (a signal as a shell reports it) and its standard output."""
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:
        return 127, ""
    assert process.stdout is not None
    output = process.stdout.read(_MAX_PASS_OUTPUT + 1)
    if len(output) > _MAX_PASS_OUTPUT:
        process.kill()
    process.stdout.close()
    code = process.wait()
    if len(output) > _MAX_PASS_OUTPUT:
        return 137, ""
    return (128 - code if code < 0 else code), output.decode("utf-8", errors="replace")


def main() -> int:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    key = os.environ.pop(SEAL_KEY_VARIABLE, "")
    as_under_scbench(os.environ, sys.executable, os.getcwd())
    # As uvx starts it: the environment's `pytest` script.
    sys.argv[0] = os.path.join(os.path.dirname(sys.executable), "pytest")
    args = sys.argv[1:]
    mode = args[0] if args[:1] in ([KILL_OTHERS], [KILL_DESCENDANTS]) else None
    if mode is not None:
        args = args[1:]
    if mode == KILL_DESCENDANTS and sys.platform.startswith("linux"):
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    args, shard = take_shard(args)
    spec = None
    if args[:1] and args[0].startswith(INVENTORY_OPTION):
        spec = json.loads(args[0][len(INVENTORY_OPTION) :])
        args = args[1:]
    pytest_args, json_path, ctrf_path = split_arguments(args)
    if key == KEY_FROM_STDIN:
        # Ahead of the run, which has not begun: pytest, never a plugin of another package's
        # (entry point `pytest11`). pytest marks those for assertion rewriting as it starts, and
        # one imported before is not rewritten and is warned of in the tests' output (a
        # PytestAssertRewriteWarning each), which a run started at its time does not show.
        import pytest

        key = read_key()
        if not key:
            return 0
    sys.stdout.write(f"{START_PREFIX}{start_text(key)}\n")
    sys.stdout.flush()

    def kill_leftovers() -> int:
        if mode == KILL_OTHERS:
            return kill_others()
        return kill_descendants() if mode == KILL_DESCENDANTS else 0

    import pytest

    leave_pycache_prefix()
    taker = None
    if spec is not None:
        taker = InventoryTaker(spec, None if spec.get("passes_because") else OutputWatch())
    killed_before = 0
    if taker is not None and taker.taken_by == "passes":
        # As SCBench 1.0 takes it: before the tests, each pass a session of its own.
        taker.found = run_passes(taker.passes)
        killed_before = kill_leftovers()

    class Guard:
        """Records each test's marks; at the end, kills what is left and clears the reports'
        folder before the report plugins' own session-finish hooks write anything."""

        def __init__(self) -> None:
            self.killed = 0
            self.marks: dict[str, list[str]] = {}
            self.json_report: dict[str, Any] | None = None
            self.rerun_attempts: dict[str, set[object]] = {}
            self.rerun_failures: dict[str, dict[str, Any]] = {}
            self.config: pytest.Config | None = None

        def pytest_configure(self, config: pytest.Config) -> None:
            self.config = config

        def pytest_collection_finish(self, session: pytest.Session) -> None:
            for item in session.items:
                self.marks[item.nodeid] = mark_names(item.iter_markers())
            if taker is not None:
                # Sealed now: a run killed later has its inventory all the same.
                inventory = taker.document(None)
                try:
                    write_new(taker.path, inventory)
                except OSError as error:
                    _note(f"could not write {taker.path}: {error}")
                    return
                # Where pytest writes: a line of its own, wherever pytest's output is.
                log = sys.stdout if taker.watch is None else taker.watch.stream
                log.write(f"\n{COLLECTED_PREFIX}{collected_text(key, inventory)}\n")
                log.flush()

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtestloop(self) -> Iterator[None]:
            watch = taker.watch if taker is not None else None
            if watch is not None:
                watch.pause()
            yield
            if watch is not None:
                watch.resume()

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
            yield
            # Marks a test added to itself while it ran count too.
            self.marks[item.nodeid] = mark_names(item.iter_markers())

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item: pytest.Item) -> None:
            if item.nodeid in self.rerun_attempts:
                restart_timeout(item)

        @pytest.hookimpl(trylast=True)  # after pytest-json-report's, which prepares the report
        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            # pytest-rerunfailures' outcome of a failed attempt that it runs again.
            if str(report.outcome) != "rerun":
                return
            # One attempt may log two (its call and its teardown failed): pytest-rerunfailures
            # numbers the attempts.
            self.rerun_attempts.setdefault(report.nodeid, set()).add(getattr(report, "rerun", 0))
            if report.nodeid in self.rerun_failures or self.config is None:
                return
            make_stage = getattr(self.config.hook, "pytest_json_runtest_stage", None)
            stage = make_stage(report=report) if make_stage is not None else None
            if isinstance(stage, dict):
                self.rerun_failures[report.nodeid] = stage

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_sessionfinish(self) -> Iterator[None]:
            self.killed = kill_leftovers()
            inventory_path = taker.path if taker is not None else None
            for folder in reports_folders(json_path, ctrf_path, inventory_path):
                try:
                    fresh_folder(folder)
                except OSError as error:  # a full disk: the reports cannot be written
                    _note(f"could not make a fresh {folder}/: {error}")
            yield

        @pytest.hookimpl(optionalhook=True)
        def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
            """pytest-json-report's report, built and about to be saved (it is not: `none`)."""
            self.json_report = json_report

    class Shard:
        """Deals the whole collection, as every other plugin left it, and keeps this shard's."""

        def __init__(self, shard: dict[str, Any]) -> None:
            self.shard = shard
            self.record: dict[str, Any] | None = None

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(
            self, config: pytest.Config, items: list[pytest.Item]
        ) -> None:
            units = units_of([test_facts(item, pytest.Class) for item in items])
            sizes: dict[str, int] = {}
            for unit in units:
                sizes[unit] = sizes.get(unit, 0) + 1
            dealt = deal_units(sizes, self.shard["weights"], self.shard["count"])
            index = self.shard["index"]
            kept: list[pytest.Item] = []
            left: list[pytest.Item] = []
            for item, unit in zip(items, units):  # noqa: B905 (the image's Python may be older)
                (kept if dealt[unit] == index else left).append(item)
            if taker is not None:
                taker.dealt_from = list(items)
            self.record = {
                "index": index,
                "count": self.shard["count"],
                "items": [item.nodeid for item in items],
            }
            if kept and dealt[units[0]] != index and self.shard["warm_up"]:
                self.record["warmed_up"] = warm_up(self.shard["warm_up"])
            if left:
                config.hook.pytest_deselected(items=left)
                items[:] = kept

    guard = Guard()
    sharding = Shard(shard) if shard is not None else None
    plugins: list[object] = [guard, *(one for one in (taker, sharding) if one is not None)]
    exit_code = int(pytest.main(pytest_args, plugins=plugins))
    killed = killed_before + guard.killed
    ctrf = read_regular(ctrf_path, _MAX_CTRF_BYTES) if ctrf_path is not None else None
    ctrf_bytes = ctrf if isinstance(ctrf, bytes) else None
    inventory = None
    if taker is not None:
        if taker.watch is not None:
            taker.watch.close()
        reason = taker.must_run_passes()
        if reason is not None:
            # After the tests (their CTRF report read already): what the session printed may
            # have been taken for node ids by SCBench's passes.
            taker.run_passes(reason)
            killed += kill_leftovers()
        inventory = taker.document(exit_code)
    reruns = {node_id: len(attempts) for node_id, attempts in guard.rerun_attempts.items()}
    if sharding is not None and guard.json_report is not None and sharding.record is not None:
        guard.json_report[SHARD_REPORT_KEY] = sharding.record
    json_bytes = json_report_bytes(guard.json_report, guard.marks, reruns, guard.rerun_failures)
    if json_path is not None and json_bytes is not None:
        try:
            write_new(json_path, json_bytes)
        except OSError as error:
            _note(f"could not write {json_path}: {error}")
            json_bytes = None
    if taker is not None and inventory is not None:
        try:
            write_new(taker.path, inventory)
        except OSError as error:
            _note(f"could not write {taker.path}: {error}")
            inventory = None
    sys.stdout.flush()
    seal = seal_text(key, exit_code, killed, [ctrf_bytes, json_bytes, inventory])
    sys.stdout.write(f"\n{SEAL_PREFIX}{seal}\n")
    sys.stdout.flush()
    return exit_code


def _note(text: str) -> None:
    sys.stdout.write(f"\n[scbench-ci] {text}\n")
    sys.stdout.flush()


def json_report_bytes(
    report: dict[str, Any] | None,
    marks: dict[str, list[str]],
    reruns: dict[str, int],
    rerun_failures: dict[str, dict[str, Any]],
) -> bytes | None:
    """The report as the plugin saves it (`default=str`), each test with its `markers`, and a
    test that was rerun with its `reruns` and `rerun_failure`."""
    if report is None:
        return None
    for test in report.get("tests", []):
        node_id = test.get("nodeid")
        test["markers"] = marks.get(node_id, [])
        if node_id in reruns:
            test["reruns"] = reruns[node_id]
        if node_id in rerun_failures:
            test["rerun_failure"] = rerun_failures[node_id]
    try:
        return json.dumps(report, default=str).encode()
    except (TypeError, ValueError, RecursionError) as error:  # a test's metadata, say
        _note(f"pytest-json-report's report could not be written as JSON: {error}")
        return None


if __name__ == "__main__":
    sys.exit(main())
