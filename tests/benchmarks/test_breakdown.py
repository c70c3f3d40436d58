"""benchmarks/breakdown.py: its figures from known runs, and the whole benchmark on a tiny set
(one generated checkpoint of one test), every mode, against the real daemon."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.breakdown import (
    MODES,
    Evaluation,
    ModeRun,
    breakdown,
    differing_verdicts,
    p90,
    per_minute,
    report,
)
from testing.paths import REPO_ROOT

PHASES = {"container": 0.4, "setup": 0.2, "tests": 1.5}


def test_p90_is_the_nearest_rank() -> None:
    assert p90([1.0]) == 1.0
    assert p90([float(n) for n in range(1, 11)]) == 9.0
    assert p90([float(n) for n in range(20, 0, -1)]) == 18.0


def test_each_figure_per_checkpoint() -> None:
    """A loop's call of 3.0 s, 2.1 s in phases, 1.0 s of them pytest's; a batch of two, one at a
    time, in 5.0 s."""
    loop = ModeRun("api", 10.0, (Evaluation("p/c", True, 1.0, PHASES, wall_s=3.0),), serial=True)
    rows = breakdown([loop])
    assert rows["tests - pytest"] == [pytest.approx(0.5)]
    assert rows["outside pytest"] == [pytest.approx(1.1)]
    assert rows["outside the tests"] == [pytest.approx(2.0)]
    assert rows["process's own"] == [pytest.approx(0.9)]
    batch = ModeRun(
        "batch-1",
        5.0,
        (Evaluation("p/a", True, 1.0, PHASES), Evaluation("p/b", True, 1.0, PHASES)),
        serial=True,
    )
    rows = breakdown([batch])
    assert rows["outside the tests"] == [pytest.approx((5.0 - 2.0) / 2)]
    assert rows["process's own"] == [pytest.approx((5.0 - 4.2) / 2)]
    assert per_minute([batch, batch]) == pytest.approx(24.0)
    # Side by side, a batch's wall time is no checkpoint's: no figure outside the tests.
    side_by_side = ModeRun("batch-2", 5.0, batch.evaluations, serial=False)
    assert "outside the tests" not in breakdown([side_by_side])
    lines = report([loop, side_by_side])
    assert lines[-2].split() == ["api", "1", "10.0", "6.0", "2.000"]
    assert lines[-1].split() == ["batch-2", "2", "5.0", "24.0", "-"]


def test_a_verdict_that_moves_between_modes_is_named() -> None:
    one = ModeRun(
        "batch-1", 1.0, (Evaluation("p/a", True, 1.0), Evaluation("p/b", True, 1.0)), True
    )
    two = ModeRun("api", 1.0, (Evaluation("p/a", True, 1.0), Evaluation("p/b", False, 1.0)), True)
    scbench = ModeRun("scbench", 1.0, (Evaluation("p/a", None, 1.0),), True)
    assert differing_verdicts([one, two, scbench]) == ["p/b"]
    assert differing_verdicts([one, scbench]) == []


def _tiny_set(root: Path, *options: str) -> list[str]:
    """The benchmark on one generated checkpoint of one test, once per mode: its output lines."""
    run = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benchmarks/breakdown.py"),
            *("--examples", "none", "--problems", "1", "--checkpoints", "1", "--tests", "1"),
            *("--repeat", "1", "--jobs", "2", "--root", str(root), *options),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout.splitlines()


def test_the_benchmark_runs_every_mode_on_a_tiny_set(
    tmp_path: Path, docker_client: object, evaluation_image: str
) -> None:
    lines = _tiny_set(tmp_path)
    assert lines[0].startswith("1 checkpoints, with the quality measure; load average ")
    for mode in (name.replace("-N", "-2") for name in MODES):  # batch-N is --jobs 2 here
        assert f"{mode}: seconds per checkpoint" in lines
        [row] = [line.split() for line in lines if line.startswith(f"  {mode} ")]
        # One evaluation (the reward loop's calls after the first), some per minute.
        assert row[1] == ("3" if mode == "reward" else "1") and float(row[3]) > 0
    # The phases of scbench-ci's five modes, the measure's among them (on by default), and
    # pytest's duration under every mode.
    assert sum(line.startswith("  setup ") for line in lines) == 5
    assert sum(line.startswith("  quality ") for line in lines) == 5
    assert sum(line.startswith("  pytest ") for line in lines) == len(MODES)


def test_without_the_measure_no_mode_has_its_phase(
    tmp_path: Path, docker_client: object, evaluation_image: str
) -> None:
    lines = _tiny_set(tmp_path, "--no-quality", "--modes", "batch-1,session")
    assert lines[0].startswith("1 checkpoints, without the quality measure; load average ")
    assert sum(line.startswith("  setup ") for line in lines) == 2
    assert not any(line.startswith("  quality ") for line in lines)
