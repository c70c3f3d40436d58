"""Every benchmark script starts: its imports of scbench_ci still resolve and its arguments
parse, so a moved module or a changed signature is caught here, not on the next measurement.
benchmarks/scbench_checkpoint.py runs in SCBench's own environment (tests/integration/
test_against_scbench.py runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
IN_SCBENCH_ENVIRONMENT = {"scbench_checkpoint.py"}
SCRIPTS = sorted(
    path.name
    for path in BENCHMARKS.glob("*.py")
    if path.name not in IN_SCBENCH_ENVIRONMENT and 'if __name__ == "__main__"' in path.read_text()
)


def test_there_are_scripts() -> None:
    assert "breakdown.py" in SCRIPTS and "overhead.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_starts(script: str) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage:"), run.stdout
