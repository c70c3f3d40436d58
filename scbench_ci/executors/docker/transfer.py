"""Files into a run's container and out of it, as tar archives (nothing is mounted): the
workspace, the tests user's home and the runner's folders go in; after the tests, the reports
come out, with the counters of the limits the run reached."""

from __future__ import annotations

import contextlib
import os
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from docker.models.containers import Container

from scbench_ci.executors import archive
from scbench_ci.executors.docker import exec_output
from scbench_ci.executors.docker.container_layout import (
    HOME_DIR,
    QUALITY_DIR,
    QUALITY_SOURCE,
    RUN_DIR,
    RUNNER_DIR,
    RUNNER_GID,
    RUNNER_HOME,
    RUNNER_OWNED,
    RUNNER_SCRIPT,
    RUNNER_UID,
    RUNNER_UV_CACHE_DIR,
    TestsPlace,
)
from scbench_ci.executors.docker.daemon import say
from scbench_ci.executors.docker.exec import KILL_LEFTOVERS, api
from scbench_ci.foundation.layout import EVALUATOR_NAMES, REPORTS_DIR
from scbench_ci.standalone import pytest_runner
from scbench_ci.trust.seal import MAX_REPORT_BYTES, REPORT_NAMES


def _after_tests_script(workdir: str) -> str:
    """After the tests, as the tests user, in one round trip: kill what they left (and count
    it, first line); the container's cgroup counters (v2, else v1): processes the OOM killer
    ended, forks refused; the run's folders that are full (`full <folder>`); then each report
    that is a regular file (of at most the size that is taken), as `report <name> <size>` and its
    bytes, or `report <name> -` for anything else there. Nothing of the tests user is alive by
    then to get in the way. `workdir` is an environment file's checked path (no quoting needed)."""
    limit_counters = (
        "for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control "
        "/sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; "
        'do [ -r "$f" ] && sed "s|^|${f##*/} |" "$f"; done; '
        f"df -P {workdir} /tmp | awk 'NR > 1 && $4 < 1024 {{print \"full\", $6, 1}}'; true"
    )
    return (
        f"{KILL_LEFTOVERS}; {limit_counters}; "
        f"for name in {' '.join(REPORT_NAMES)}; do "
        f'f="{workdir}/{REPORTS_DIR}/$name"; '
        'if [ -L "$f" ]; then echo "report $name -"; '
        'elif [ -f "$f" ]; then size=$(($(wc -c < "$f"))); '
        f'if [ "$size" -gt {MAX_REPORT_BYTES} ]; then echo "report $name +"; '
        'else echo "report $name $size"; head -c "$size" "$f"; fi; '
        'elif [ -e "$f" ]; then echo "report $name -"; fi; done'
    )


def copy_in(
    container: Container,
    workspace: Path,
    *,
    installs_runner: bool,
    place: TestsPlace,
    quality_source: bool = False,
) -> None:
    """The workspace into its volume, and what the run needs besides (`prepare_container`)."""
    prepare_container(container, installs_runner=installs_runner, place=place)
    copy_workspace(container, workspace, place, quality_source=quality_source)


class StagedTooLarge(Exception):
    """The workspace would take more of the run's memory than there is room for."""

    def __init__(self, staged: int, room: int) -> None:
        super().__init__(f"{staged} bytes, with room for {room}")
        self.staged = staged
        self.room = room


def copy_workspace(
    container: Container,
    workspace: Path,
    place: TestsPlace,
    *,
    quality_source: bool = False,
    room: int | None = None,
    restored: bytes | None = None,
) -> int:
    """The workspace into its volume (the submission's files the tests user's), then, in the
    same archive, the `restored` entries (`cache_use.restored_entries`); with
    `quality_source`, the submission's files as staged for the quality measure too, into the
    run's volume (after `prepare_container`). What they take of the container's folders, which
    are memory (archive.in_memory_bytes); StagedTooLarge, and nothing copied, when that is more
    than `room`. The daemon unpacks them, so the container's memory limit does not count them:
    the caller lowers it by that much."""
    uid, gid = place.ids

    def fill(tar: tarfile.TarFile) -> None:
        _add_workspace(tar, workspace, uid, gid)
        if restored is not None:
            archive.add_archive(tar, restored)

    with contextlib.ExitStack() as stack:
        archives = [(place.workdir, stack.enter_context(_archive(fill)))]
        if quality_source:
            made = _archive(lambda tar: _add_quality_source(tar, workspace))
            archives.append((RUN_DIR, stack.enter_context(made)))
        staged = sum(size for _, (_, size) in archives)
        if room is not None and staged > room:
            raise StagedTooLarge(staged, room)
        for target, (buffer, _) in archives:
            container.put_archive(target, buffer)
    return staged


def prepare_container(container: Container, *, installs_runner: bool, place: TestsPlace) -> None:
    """What a run's container needs before its workspace, the same for every submission: the
    tests user's home into /tmp, the runner's folders into the run's volume (with the uv cache
    of its own when it installs the runner in the run)."""
    uid, gid = place.ids
    put_directories(container, "/tmp", [(_under(HOME_DIR, "/tmp"), uid, gid, 0o700)])

    def runner_folders(tar: tarfile.TarFile) -> None:
        folders = [RUNNER_DIR, RUNNER_HOME, *([RUNNER_UV_CACHE_DIR] if installs_runner else [])]
        for folder in folders:
            mode = 0o755 if folder == RUNNER_DIR else 0o700
            archive.add_directory(tar, _under(folder, RUN_DIR), RUNNER_UID, RUNNER_GID, mode)
        script = Path(pytest_runner.__file__).read_bytes()
        archive.add_file(tar, _under(RUNNER_SCRIPT, RUN_DIR), script, RUNNER_UID, RUNNER_GID, 0o644)

    _put_archive(container, RUN_DIR, runner_folders)


def put_directories(
    container: Container, target: str, folders: list[tuple[str, int, int, int]]
) -> None:
    """Make folders (relative name, uid, gid, mode) under `target` in the container."""

    def add(tar: tarfile.TarFile) -> None:
        for name, uid, gid, mode in folders:
            archive.add_directory(tar, name, uid, gid, mode)

    _put_archive(container, target, add)


def _put_archive(
    container: Container, target: str, fill: Callable[[tarfile.TarFile], None]
) -> None:
    """One tar archive, made by `fill`, extracted under `target` in the container."""
    with _archive(fill) as (buffer, _):
        container.put_archive(target, buffer)


@contextlib.contextmanager
def _archive(fill: Callable[[tarfile.TarFile], None]) -> Iterator[tuple[BinaryIO, int]]:
    """A tar archive made by `fill`, in a temporary file, ready to be read; and what its entries
    take unpacked in memory."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            fill(tar)
            size = archive.in_memory_bytes(tar.getmembers())
        buffer.seek(0)
        yield buffer, size


def _under(path: str, folder: str) -> str:
    return path.removeprefix(f"{folder}/")


def _add_workspace(tar: tarfile.TarFile, workspace: Path, uid: int, gid: int) -> None:
    """The submission's files owned by the tests user; the tests and pytest.ini by the runner
    (the workspace volume is the runner's and sticky: the tests user may add entries, but not
    rename or remove the runner's)."""
    for entry in sorted(os.scandir(workspace), key=lambda entry: entry.name):
        if entry.name in RUNNER_OWNED:
            owner, mask = (RUNNER_UID, RUNNER_GID), 0o755
        else:
            owner, mask = (uid, gid), 0o777
        archive.add_tree(tar, Path(entry.path), entry.name, *owner, mask)


def _add_quality_source(tar: tarfile.TarFile, workspace: Path) -> None:
    """The submission's files (the workspace's entries but the evaluator's), the runner's and
    read-only, readable by the tests user who measures them."""
    for folder in (QUALITY_DIR, QUALITY_SOURCE):
        archive.add_directory(tar, _under(folder, RUN_DIR), RUNNER_UID, RUNNER_GID, 0o755)
    for entry in sorted(os.scandir(workspace), key=lambda entry: entry.name):
        if entry.name not in EVALUATOR_NAMES:
            name = f"{_under(QUALITY_SOURCE, RUN_DIR)}/{entry.name}"
            archive.add_tree(
                tar, Path(entry.path), name, RUNNER_UID, RUNNER_GID, 0o755, readable=True
            )


@dataclass(frozen=True)
class Collected:
    """What a run leaves to be taken out: the limit counters, and each report there is, as its
    bytes or why it is not taken."""

    counters: dict[str, int]
    reports: dict[str, bytes | str]


def after_tests(container: Container, place: TestsPlace) -> tuple[int, Collected]:
    """Kill what the tests left running, and take the counters and the reports: how many
    processes were killed, and what was taken."""
    client = api(container)
    script = _after_tests_script(place.workdir)
    exec_id = client.exec_create(container.id, ["/bin/sh", "-c", script], user=place.user)
    stdout, _ = exec_output.captured(client, exec_id["Id"])
    first, _, rest = stdout.partition(b"\n")
    count = first.decode(errors="replace").strip()
    counters: dict[str, int] = {}
    reports: dict[str, bytes | str] = {}
    while rest:
        line, _, rest = rest.partition(b"\n")
        match line.decode(errors="replace").split():
            case ["report", name, size] if name in REPORT_NAMES:
                if size == "-":
                    reports[name] = f"{name} is not a regular file"
                elif size == "+":
                    reports[name] = f"{name} is larger than {MAX_REPORT_BYTES} bytes"
                elif size.isdigit() and len(rest) >= int(size):
                    reports[name], rest = rest[: int(size)], rest[int(size) :]
                else:
                    reports[name] = f"{name} could not be read"
                    break
            case words:
                _count_limit(words, counters)
    return (int(count) if count.isdigit() else 0), Collected(counters, reports)


def collect_now(container: Container, place: TestsPlace) -> Collected | None:
    """What a run whose tests never ended by themselves left (a failed setup), taken as after
    the tests: None when the container is stopped (the session timeout), and its volume gone."""
    container.reload()
    if container.status != "running":
        return None
    return after_tests(container, place)[1]


def write_reports(collected: Collected, target: Path, echo: TextIO | None) -> None:
    """Each report taken, as a regular file, into the empty folder `target`."""
    for name, content in collected.reports.items():
        if isinstance(content, str):
            say(echo, f"warning: {REPORTS_DIR}/{name} was not copied back: {content}")
        else:
            pytest_runner.write_new(target / name, content)


def _count_limit(words: list[str], counters: dict[str, int]) -> None:
    """One line of _LIMIT_COUNTERS's output into `counters`."""
    match words:
        case [_, ("oom_kill" | "max") as name, value] if value.isdigit():
            counters[name] = int(value)
        case ["full", folder, _]:
            counters[f"full {folder}"] = 1
