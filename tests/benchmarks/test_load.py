"""benchmarks/load.py's generated problem sets: at a tiny size, each reference solution passes a
real `scbench-ci evaluate --jobs 1`, so the generator cannot rot unnoticed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.load import Run, generate_cpu, generate_io, verdicts
from testing.cli import run_cli

# One problem, one checkpoint, two tests each; short waits and work.
TINY: dict[str, Callable[[Path], Path]] = {
    "io": lambda root: generate_io(root, 1, 1, tests=2, requests=2, wait_s=0.2),
    "cpu": lambda root: generate_cpu(root, 1, 1, tests=2, seconds=1.0),
}


# The cpu problem's tests burn a second of CPU within their timeout: alone, not beside other
# workers' evaluations.
@pytest.mark.serial
@pytest.mark.parametrize("kind", TINY)
def test_every_reference_solution_passes(kind: str, tmp_path: Path, test_image: str) -> None:
    problems = TINY[kind](tmp_path / kind)
    output = tmp_path / "output"
    run = run_cli(
        *("evaluate", "--problem", problems, "--checkpoint", "all", "--jobs", "1"),
        *("--submission", f"{problems}/{{problem}}/solutions/{{checkpoint}}"),
        *("--output", output, "--executor", "docker", "--image", test_image, "--quiet"),
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((output / "results.json").read_text())
    ran = [
        (problem["name"], checkpoint["name"], checkpoint["passed"], len(checkpoint["tests"]))
        for problem in results["problems"]
        for checkpoint in problem["checkpoints"]
    ]
    assert ran == [(f"{kind}_01", "checkpoint_1", True, 2)]


def run(mode: str, **passed: bool) -> Run:
    return Run("cpu", mode, wall_s=10.0, idle_share=0.1, jobs=int(mode), passed=passed)


def test_statuses_that_differ_between_modes_are_named_and_fail_the_benchmark() -> None:
    ok, lines = verdicts("cpu", [run("1", a=True, b=True), run("2", a=True, b=False)])
    assert not ok
    assert lines == [
        "cpu: statuses differ between modes:",
        "  b: --jobs 1 passed, --jobs 2 failed",
        "cpu: reference solutions failing: b",
    ]


def test_a_reference_solution_failing_in_every_mode_fails_the_benchmark() -> None:
    ok, lines = verdicts("cpu", [run("1", a=False), run("2", a=False)])
    assert not ok
    assert lines == [
        "cpu: every checkpoint has the same status in every mode (1, 2)",
        "cpu: reference solutions failing: a",
    ]


def test_the_same_passing_statuses_in_every_mode_pass() -> None:
    assert verdicts("cpu", [run("1", a=True), run("2", a=True)]) == (
        True,
        ["cpu: every checkpoint has the same status in every mode (1, 2)"],
    )
