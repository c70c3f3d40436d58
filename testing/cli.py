"""`scbench-ci` as a user runs it: `python -m scbench_ci` of this checkout, in a process of its
own, with no standard input."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def cli_argv(*args: str | Path) -> list[str]:
    """The command line that starts it, for a test that drives the process itself (a signal, a
    terminal of its own)."""
    return [sys.executable, "-m", "scbench_ci", *map(str, args)]


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 600,
) -> subprocess.CompletedProcess[str]:
    """Its exit code and output, whatever the exit code."""
    return subprocess.run(
        cli_argv(*args),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        check=False,
    )
