"""Hostile submissions laid over wordstat's, run through the real CLI, and the check that
nothing of a test's runs outlives them (the fixture `nothing_survives`, a plugin of the suite's:
`pytest.mark.usefixtures("nothing_survives")`).

Each hostile submission is a folder of tests/threats/hostile/ (see its README.md); where it brings
its own wordstat.py, the one it replaces is kept as wordstat_base.py for it to call.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL, owner
from testing.examples import EXPECTED, scbench_evaluate
from testing.paths import EXAMPLES, REPO_ROOT
from testing.results import checkpoint_documents

HOSTILE = REPO_ROOT / "tests/threats/hostile"
BROKEN = "submissions/broken"
SOLVED = "solutions/checkpoint_1"
BROKEN_COUNTS = EXPECTED[("wordstat", "checkpoint_1", BROKEN)][1]
SOLVED_COUNTS = EXPECTED[("wordstat", "checkpoint_1", SOLVED)][1]
EXECUTORS = ["local", "docker"]


@pytest.fixture
def nothing_survives(
    docker_client: docker.DockerClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Nothing of the test's runs outlives them: no run container or volume owned by the test's
    process (in-process evaluations) or by a CLI it started, no process in a run's folder in the
    test's own TMPDIR (the CLI's) or below the test's process. What other tests, or another test
    session on this machine and daemon, are running is not looked at. Yields that TMPDIR."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # inherited by the CLI
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    started: list[int] = []

    class Recorded(subprocess.Popen):
        """Every process the test starts (the CLI, through subprocess.run), by pid."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self.pid)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    before = _leftovers(docker_client, {owner()}, scratch)
    yield scratch
    owners = {owner(), *map(owner, started)}
    assert _leftovers(docker_client, owners, scratch) - before == set()


def _leftovers(client: docker.DockerClient, owners: set[str], scratch: Path) -> set[str]:
    """The run containers and volumes of these owners, and the test's processes in a run's
    folder (what existed before the test is someone else's)."""
    found = {
        f"{pid}: {cwd}"
        for pid, (cwd, _) in processes_of_the_test(scratch).items()
        if "scbench-run-" in cwd
    }
    for value in owners:
        mine = {"label": [RUN_LABEL, f"{OWNER_LABEL}={value}"]}
        # Another session's container may go between the listing and its inspection.
        containers = client.containers.list(all=True, filters=mine, ignore_removed=True)
        found |= {f"container {container.name}" for container in containers}
        found |= {f"volume {volume.name}" for volume in client.volumes.list(filters=mine)}
    return found


def processes_of_the_test(scratch: Path) -> dict[int, tuple[str, str]]:
    """The processes working in the test's TMPDIR or below the test's process, by pid: their
    working directory and command line."""
    parents: dict[int, int] = {}
    found: dict[int, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
            found[int(entry.name)] = (cwd, cmdline)
    below, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - below
        below |= frontier
    inside = f"{scratch.resolve()}/"
    return {pid: seen for pid, seen in found.items() if pid in below or seen[0].startswith(inside)}


def hostile(tmp_path: Path, overlay: str, base: str = BROKEN) -> Path:
    submission = tmp_path / "submission"
    shutil.copytree(EXAMPLES / "wordstat" / base, submission)
    if (HOSTILE / overlay / "wordstat.py").exists():
        (submission / "wordstat.py").rename(submission / "wordstat_base.py")
    shutil.copytree(HOSTILE / overlay, submission, dirs_exist_ok=True)
    return submission


CHECKPOINT_OUT = "out/wordstat/checkpoint_1"
"""The evaluated checkpoint's folder (reports, logs) in the test's tmp_path."""


def evaluate(
    submission: Path,
    tmp_path: Path,
    executor: str,
    test_image: str,
    *extra: str,
    cwd: Path | None = None,
) -> tuple[int, dict[str, Any], str]:
    """Run the CLI; its exit code, the checkpoint's result, and stdout plus stderr. The
    submission folder must come out as it went in."""
    before = _digest(submission)
    image = ("--image", test_image) if executor == "docker" else ()
    run, results = scbench_evaluate(
        "wordstat",
        "checkpoint_1",
        str(submission),  # absolute: joined onto the problem's folder unchanged
        tmp_path / "out",
        *image,
        *extra,
        executor=executor,
        cwd=cwd,
    )
    assert _digest(submission) == before
    (checkpoint,) = checkpoint_documents(results)
    return run.returncode, checkpoint, run.stdout + run.stderr


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


PARSER_CRASH = "x = " + "(" * 20_000 + "1" + ")" * 20_000 + "\n"
"""Python source that scb-check 0.2.0 crashes on (its tokenizer: too many nested parentheses)."""
MILLION_LINES = "x = 1\n" * 1_000_000
"""A million-line source file: scb-check 0.2.0 takes a few minutes over it (157 s on a busy
machine), within its CPU time limit."""
SLOPPY = (
    "".join(
        f"""
def handle_{number}(data):
    result = []
    for item in data:
        if item is not None:
            if isinstance(item, int):
                result.append(item * 2)
            else:
                result.append(str(item))
    return result
"""
        for number in range(6)
    )
    + '\n\ndef run():\n    print("ok")\n'
)
"""A module that works (`run()` prints `ok`) and that scb-check 0.2.0 finds verbose: six copies of
one function, 0.98 of its lines flagged."""
RUNS_APP = "from app import run\n\nrun()\n"
"""A `main.py` that runs SLOPPY as `app.py` beside it: too short to flag."""
