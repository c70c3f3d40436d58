"""Whether the reports are the ones pytest's runner wrote in this run, as it sealed them.

The runner (`pytest_runner`) prints a start line keyed with the run's secret before any of the
submission's code can run, and as its last line an HMAC keyed with the same secret over pytest's
exit code, the processes it killed and the reports' digests (both reports', and the inventory's
under SCBench 1.0's rules). The secret never reaches the tests' processes, so they can neither
forge the lines nor change a report unnoticed. The inventory is also sealed as soon as the tests
are collected (a line keyed over its digest), so that it holds for a run killed afterwards.

The reports are read once, here, without following links, and the same bytes are what is sealed
and then parsed.
"""

from __future__ import annotations

import hmac
import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from scbench_ci.standalone.pytest_runner import (
    COLLECTED_PREFIX,
    SEAL_PREFIX,
    START_PREFIX,
    collected_text,
    read_regular,
    seal_text,
    start_text,
)

CTRF_REPORT = "ctrf-report.json"
PYTEST_REPORT = "pytest-report.json"
INVENTORY = "inventory.json"
"""SCBench 1.0's inventory of the tests, as the runner took it (`--scbench 1.0`)."""
MAX_REPORT_BYTES = 256 * 1024 * 1024
REPORT_NAMES = (CTRF_REPORT, PYTEST_REPORT, INVENTORY)
_KILLED = re.compile(r"killed=(\d{1,9}) ")
_HEAD_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ReportFiles:
    """The bytes of each report (None: absent, not a regular file, or too large)."""

    ctrf: bytes | None
    pytest: bytes | None
    problems: tuple[str, ...]
    """Why a report that is there was not read."""
    inventory: bytes | None = None


@dataclass(frozen=True)
class Seal:
    killed: int
    """Processes the runner killed before the reports were written."""


class Broken(Enum):
    NOT_STARTED = "the test runner did not start"
    UNSEALED = "the test runner ended without sealing its reports"
    MISMATCH = "the reports are not the ones the test runner wrote (their seal does not match)"


def read_report_files(reports_dir: Path, limit: int = MAX_REPORT_BYTES) -> ReportFiles:
    """Read both reports from `reports_dir`, a folder the evaluator made, never through a link."""
    problems: list[str] = []
    contents: list[bytes | None] = []
    try:
        folder = os.open(reports_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return ReportFiles(None, None, (f"{reports_dir.name}/ is not a folder",))
    try:
        for name in REPORT_NAMES:
            content = read_regular(name, limit, dir_fd=folder)
            if isinstance(content, str):
                problems.append(content)
            contents.append(content if isinstance(content, bytes) else None)
    finally:
        os.close(folder)
    return ReportFiles(contents[0], contents[1], tuple(problems), contents[2])


def check_seal(log: Path, reports: ReportFiles, key: str, exit_code: int | None) -> Seal | Broken:
    """The seal, when it matches the reports and the exit code; else what is wrong."""
    if not _runner_started(log, key):
        return Broken.NOT_STARTED
    line = _last_line(log, SEAL_PREFIX)
    if line is None or exit_code is None:
        return Broken.UNSEALED
    killed = _KILLED.search(line)
    count = int(killed.group(1)) if killed else 0
    expected = seal_text(key, exit_code, count, [reports.ctrf, reports.pytest, reports.inventory])
    if not hmac.compare_digest(line.encode(), expected.encode()):
        return Broken.MISMATCH
    return Seal(killed=count)


def sealed_inventory(
    log: Path, reports: ReportFiles, key: str, seal: Seal | Broken
) -> bytes | None:
    """The inventory, when the seal covers it or, for a run that ended unsealed, the line the
    runner printed once the tests were collected does; else None."""
    if reports.inventory is None or seal is Broken.NOT_STARTED:
        return None
    if isinstance(seal, Seal):
        return reports.inventory
    line = _last_line(log, COLLECTED_PREFIX)
    expected = collected_text(key, reports.inventory)
    return reports.inventory if line and hmac.compare_digest(line, expected) else None


def _runner_started(log: Path, key: str) -> bool:
    """The runner prints its start line first (after uvx's own output, locally); only it can
    key it."""
    try:
        with log.open("rb") as stream:
            head = stream.read(_HEAD_BYTES)
    except OSError:
        return False
    return f"{START_PREFIX}{start_text(key)}\n".encode() in head


def _last_line(log: Path, prefix: str) -> str | None:
    try:
        data = log.read_bytes()
    except OSError:
        return None
    start = data.rfind(f"\n{prefix}".encode())
    if start < 0:
        return None
    line = data[start + 1 + len(prefix) :].split(b"\n", 1)[0]
    return line.decode(errors="replace").strip()
