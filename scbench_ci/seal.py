"""Whether the reports are the ones pytest wrote in this run, as its runner sealed them.

The runner (`pytest_runner`) prints, as its last line, an HMAC keyed with the run's secret over
pytest's exit code, the processes it killed and both reports' digests. The secret never reaches
the tests' processes, so they can neither forge the line nor change a report unnoticed.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.command import CTRF_REPORT, PYTEST_REPORT
from scbench_ci.pytest_runner import SEAL_PREFIX, seal_text

_KILLED = re.compile(r"killed=(\d+) ")


@dataclass(frozen=True)
class Seal:
    killed: int
    """Processes the runner killed before pytest wrote the reports."""


def check_seal(log: Path, reports_dir: Path, key: str, exit_code: int) -> Seal | str:
    """The seal, when it matches the reports and the exit code; else why they cannot be trusted."""
    line = _last_seal(log)
    if line is None:
        return "pytest ended without sealing its reports: they cannot be trusted"
    killed = _KILLED.search(line)
    reports = [_read(reports_dir / name) for name in (CTRF_REPORT, PYTEST_REPORT)]
    count = int(killed.group(1)) if killed else 0
    if not hmac.compare_digest(line, seal_text(key, exit_code, count, reports)):
        return (
            "the reports are not the ones pytest wrote (their seal does not match): something "
            "changed them after pytest finished, so the results cannot be trusted"
        )
    return Seal(killed=count)


def _last_seal(log: Path) -> str | None:
    try:
        data = log.read_bytes()
    except OSError:
        return None
    start = data.rfind(f"\n{SEAL_PREFIX}".encode())
    if start < 0:
        return None
    line = data[start + 1 + len(SEAL_PREFIX) :].split(b"\n", 1)[0]
    return line.decode(errors="replace").strip()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
