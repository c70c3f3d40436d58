"""benchmarks/load.py's generated problem sets: at a tiny size, each reference solution passes a
real `scbench-ci evaluate --jobs 1`, so the generator cannot rot unnoticed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.load import generate_cpu, generate_io
from testing.cli import run_cli

# One problem, one checkpoint, two tests each; short waits and work.
TINY: dict[str, Callable[[Path], Path]] = {
    "io": lambda root: generate_io(root, 1, 1, tests=2, requests=2, wait_s=0.2),
    "cpu": lambda root: generate_cpu(root, 1, 1, tests=2, seconds=1.0),
}


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
