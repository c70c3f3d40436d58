"""The bundled examples as the suite runs them: `scbench-ci evaluate` in a subprocess, and what
each evaluation must give (exit code, counts per group)."""

import copy
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from testing.cli import run_cli
from testing.paths import EXAMPLES, REPO_ROOT

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())


EXECUTOR = os.environ.get("SCBENCH_TEST_EXECUTOR", "local")


# (passed, failed, skipped, total) per group: Core, Functionality, Error, Regression.
Counts = dict[str, tuple[int, int, int, int]]


# fmt: off
EXPECTED: dict[tuple[str, str, str], tuple[int, Counts]] = {
    # SCBench 1.0's groups (the default, `--scbench 1.0`): its inventory's, so a problem's own
    # markers (marks' `slow` and `strict`, wordstat's `unicode`) leave their tests in Core;
    # wordstat's bad-input tests are `error`, as SCBench 1.0's problems mark them.
    ("wordstat", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (8, 0, 0, 8), "Functionality": (1, 0, 1, 2), "Error": (4, 0, 0, 4),
        "Regression": (1, 0, 0, 1)}),
    ("wordstat", "checkpoint_2", "solutions/checkpoint_2"): (0, {
        "Core": (8, 0, 0, 8), "Functionality": (1, 1, 0, 2), "Error": (4, 0, 0, 4),
        "Regression": (15, 0, 1, 16)}),
    ("wordstat", "checkpoint_3", "solutions/checkpoint_3"): (0, {
        "Core": (8, 0, 0, 8), "Functionality": (1, 0, 0, 1), "Error": (2, 0, 0, 2),
        "Regression": (1, 0, 0, 1)}),
    ("wordstat", "checkpoint_1", "submissions/broken"): (1, {
        "Core": (2, 6, 0, 8), "Functionality": (0, 1, 1, 2), "Error": (3, 1, 0, 4),
        "Regression": (0, 1, 0, 1)}),
    ("wordstat", "checkpoint_2", "submissions/broken"): (1, {
        "Core": (0, 8, 0, 8), "Functionality": (0, 2, 0, 2), "Error": (3, 1, 0, 4),
        "Regression": (4, 11, 1, 16)}),
    ("wordstat", "checkpoint_3", "submissions/broken"): (1, {
        "Core": (0, 8, 0, 8), "Functionality": (0, 1, 0, 1), "Error": (1, 1, 0, 2),
        "Regression": (0, 1, 0, 1)}),
    ("kvserver", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (3, 0, 0, 3),
        "Regression": (0, 0, 0, 0)}),
    ("kvserver", "checkpoint_2", "solutions/checkpoint_2"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (1, 0, 0, 1),
        "Regression": (7, 0, 0, 7)}),
    # Its tests that fail on purpose are `slow` (Functionality) or `strict` (Error) by its own
    # markers, which SCBench 1.0's inventory does not read: in Core, they fail core-cases.
    ("marks", "checkpoint_1", "solutions/checkpoint_1"): (1, {
        "Core": (6, 3, 2, 11), "Functionality": (2, 4, 1, 7), "Error": (2, 0, 1, 3),
        "Regression": (0, 1, 0, 1)}),
    # The tests run the entry from a folder of their own: `uv run` there finds the test
    # dependencies (pyyaml) in the runner's environment, as under SCBench's uvx.
    ("settings", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (1, 0, 0, 1),
        "Regression": (0, 0, 0, 0)}),
    # The tests read stderr as JSON: the first `uv run` after setup prints nothing there.
    ("jsonlog", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (4, 0, 0, 4), "Functionality": (0, 0, 0, 0), "Error": (1, 0, 0, 1),
        "Regression": (0, 0, 0, 0)}),
    # The module is marked slow (Functionality by marks' own markers): Core under SCBench 1.0.
    ("marks", "checkpoint_2", "solutions/checkpoint_2"): (0, {
        "Core": (2, 0, 0, 2), "Functionality": (0, 0, 0, 0), "Error": (1, 0, 0, 1),
        "Regression": (1, 0, 0, 1)}),
}
# fmt: on


def scbench_evaluate(
    problem: str,
    checkpoint: str,
    submission: str,
    output: Path,
    *extra: str,
    executor: str = EXECUTOR,
    cwd: Path | None = None,
    tmpdir: Path | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`tmpdir`: the TMPDIR of the run, where its scratch folders (the workspace) go."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            "--problem",
            str(EXAMPLES / problem),
            "--checkpoint",
            checkpoint,
            "--submission",
            str(EXAMPLES / problem / submission),
            "--output",
            str(output),
            "--executor",
            executor,
            "--quiet",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=None if tmpdir is None else {**os.environ, "TMPDIR": str(tmpdir)},
    )
    results = json.loads((output / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return run, results


def group_counts(checkpoint: dict) -> Counts:
    return {
        name: (g["passed"], g["failed"], g["skipped"], g["total"])
        for name, g in checkpoint["groups"].items()
    }


@dataclass(frozen=True)
class Evaluated:
    """One `scbench_evaluate` and the folder it wrote."""

    run: subprocess.CompletedProcess[str]
    results: dict[str, Any]
    output: Path


EVERY_SOLUTION_LIMITS = ("--cpus", "1")
"""The container limits of `SharedEvaluations.every_solution`: one CPU, as a task of the Ray
tests' cluster has."""


@dataclass
class SharedEvaluations:
    """`scbench_evaluate`, run once a test session for each set of arguments: tests that read
    the same evaluation (the same problem, checkpoint, submission, executor and options) share
    it, whichever pytest-xdist worker they run on. `root` is the session's own folder, shared by
    its workers: each evaluation is a folder named for its arguments, made under a lock by the
    first worker to need it, its process's outcome beside it. Readers never write to it; each
    gets its own copy of results.json's document."""

    root: Path
    done: dict[tuple[str, ...], Evaluated] = field(default_factory=dict)

    def __call__(
        self, problem: str, checkpoint: str, submission: str, *extra: str, executor: str = EXECUTOR
    ) -> Evaluated:
        def evaluate(output: Path) -> subprocess.CompletedProcess[str]:
            run, _ = scbench_evaluate(
                problem, checkpoint, submission, output, *extra, executor=executor
            )
            return run

        return self._once((problem, checkpoint, submission, executor, *extra), evaluate)

    def every_solution(self, image: str) -> Evaluated:
        """Every bundled problem's reference solutions in one `evaluate --checkpoint all`, in
        Docker in `image`, two evaluations at a time, each with `EVERY_SOLUTION_LIMITS` (the
        fingerprints hash them: a run compared with this one has them too); not quiet: its
        console shows a line per finished evaluation."""

        def evaluate(output: Path) -> subprocess.CompletedProcess[str]:
            return run_cli(
                *("evaluate", "--problem", EXAMPLES, "--checkpoint", "all", "--jobs", "2"),
                *("--submission", EXAMPLES / "{problem}/solutions/{checkpoint}"),
                *("--output", output, "--executor", "docker", "--image", image),
                *EVERY_SOLUTION_LIMITS,
                timeout=900,
            )

        return self._once(("every solution", "docker", image), evaluate)

    def _once(
        self, key: tuple[str, ...], evaluate: Callable[[Path], subprocess.CompletedProcess[str]]
    ) -> Evaluated:
        if key not in self.done:
            self.done[key] = self._shared(key, evaluate)
        evaluated = self.done[key]
        return Evaluated(evaluated.run, copy.deepcopy(evaluated.results), evaluated.output)

    def _shared(
        self, key: tuple[str, ...], evaluate: Callable[[Path], subprocess.CompletedProcess[str]]
    ) -> Evaluated:
        folder = self.root / hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        output, outcome = folder / "output", folder / "run.json"
        with (folder / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not outcome.exists():
                run = evaluate(output)
                fields = ("args", "returncode", "stdout", "stderr")
                outcome.write_text(json.dumps({name: getattr(run, name) for name in fields}))
        run = subprocess.CompletedProcess(**json.loads(outcome.read_text()))
        return Evaluated(run, json.loads((output / "results.json").read_text()), output)
