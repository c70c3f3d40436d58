"""The code-quality measure (scb-check in the sandbox, after the tests) on problems' reference
solutions, through the real path: every checkpoint's `solutions/<checkpoint>/` evaluated in one
run by the Python API at its defaults (Docker, cached environments, quality on), `--jobs` side by
side. Prints, per checkpoint, verbosity, erosion, the lines and files measured, the source files
left out, the measure's seconds (`phases["quality"]`) and the tests' (`phases["tests"]`), or why
there is no measure; then the totals.

By default no test is run (`-k` selects none: pytest collects and exits), so the figures are the
measure's own cost; `--tests` runs the tests too, for the measure's cost beside theirs. The first
run of an image also builds the measure's cached environment, in the first checkpoint's time.

`--scbench CHECKOUT` also runs SCBench 1.0's own metrics code (a checkout of slop-code-bench,
its package installed from its uv.lock into a virtual environment whose Python
`--scbench-python` names, CHECKOUT/.venv/bin/python by default) on each solution as its
checkpoint's `snapshot/`, and prints its figures beside scbench-ci's, figure by figure: what its
`metrics/checkpoint/driver.py` `_get_scb_check_metrics` returns as it is, and what it returns
when scb-check's exit code 1 (it found something to flag) is not taken for a failure (its
`check=True` discards the report then). Its `uvx scb-check` runs on that Python, none
downloaded.

    python benchmarks/quality.py PROBLEM_OR_FOLDER ... [--tests] [--jobs N] [--output DIR]
        [--scbench CHECKOUT [--scbench-python PYTHON]]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scbench_ci
from scbench_ci.job.plan import Target
from scbench_ci.problem.load import load_problem
from scbench_ci.results.model import CheckpointResult

NO_TEST = ("-k", "scbench_ci_quality_benchmark_selects_no_test")

# Run by SCBench's Python: argv[1] its checkout's src/, argv[2] a JSON list of checkpoint
# folders (each with its `snapshot/`), argv[3] where the figures go (SCBench logs on stdout).
SCBENCH_SIDE = """
import json, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from slop_code.metrics.checkpoint import driver
run = subprocess.run
codes = []
def keeping_findings(command, **options):
    done = run(command, **{**options, "check": False})
    codes.append(done.returncode)
    if done.returncode not in (0, 1):
        raise subprocess.CalledProcessError(done.returncode, command, done.stdout, done.stderr)
    return done
found = []
for folder in json.loads(sys.argv[2]):
    as_it_is = driver._get_scb_check_metrics(Path(folder))
    subprocess.run = keeping_findings
    try:
        kept = driver._get_scb_check_metrics(Path(folder))
    finally:
        subprocess.run = run
    found.append({"driver": as_it_is, "kept": kept, "exit_code": codes[-1] if codes else None})
Path(sys.argv[3]).write_text(json.dumps(found))
"""
FIGURES = (
    ("verbosity", "verbosity"),
    ("erosion", "erosion"),
    ("cloned_sloc_lines", "clone_loc"),
    ("verbosity_flagged_sloc_lines", "verbosity_flagged_loc"),
    ("cloned_pct", "cloned_pct"),
    ("verbosity_flagged_pct", "verbosity_flagged_pct"),
)
"""SCBench 1.0's metric, and the figure of scbench-ci's it is compared with."""


def targets(paths: list[Path]) -> list[Target]:
    """Every checkpoint with a reference solution, problem by problem, in checkpoint order."""
    found = []
    for path in paths:
        for folder in [path] if (path / "config.yaml").is_file() else sorted(path.iterdir()):
            if not (folder / "config.yaml").is_file():
                continue
            problem = load_problem(folder)
            for checkpoint in problem.checkpoints:
                solution = folder / "solutions" / checkpoint.name
                if solution.is_dir():
                    found.append(Target(folder, checkpoint.name, solution))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="+", type=Path)
    parser.add_argument("--tests", action="store_true", help="run the tests too")
    parser.add_argument("--jobs", type=int, default=1, help="checkpoints side by side")
    parser.add_argument("--output", type=Path, help="keep the results here")
    parser.add_argument("--scbench", type=Path, help="a checkout of SCBench 1.0 to compare with")
    parser.add_argument("--scbench-python", type=Path, help="its environment's Python")
    arguments = parser.parse_args()
    chosen = targets(arguments.problems)
    print(
        f"{len(chosen)} checkpoint(s) in one run, {arguments.jobs} side by side; tests "
        f"{'run' if arguments.tests else 'not run'}",
        flush=True,
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="scbench-quality-") as scratch:
        evaluated = scbench_ci.evaluate(
            chosen,
            output=arguments.output or Path(scratch) / "output",
            jobs=arguments.jobs,
            pytest_args=() if arguments.tests else NO_TEST,
        )
        wall = time.monotonic() - started
        results = list(zip(chosen, evaluated.checkpoints, strict=True))
        print_measures(results, wall)
        if arguments.scbench is not None:
            python = arguments.scbench_python or arguments.scbench / ".venv/bin/python"
            side = under_scbench(chosen, arguments.scbench, python, Path(scratch) / "scbench")
            print_side_by_side(results, side)


def print_measures(results: list[tuple[Target, CheckpointResult]], wall: float) -> None:
    header = f"{'problem/checkpoint':44} {'verb':>6} {'erosion':>7} {'lines':>6} {'files':>5}"
    print(f"{header} {'left out':>8} {'measure s':>9} {'tests s':>8}")
    measured, seconds, tests_seconds = 0, [], []
    for target, result in results:
        name = f"{target.problem.name}/{target.checkpoint}"
        quality_s = result.phases.get("quality", 0.0)
        tests_s = result.phases.get("tests", 0.0)
        seconds.append(quality_s)
        tests_seconds.append(tests_s)
        outcome = result.quality
        if outcome is None or outcome.measures is None:
            reason = outcome.reason if outcome else "not measured"
            print(
                f"{name:44} {'-':>6} {'-':>7} {'-':>6} {'-':>5} {'-':>8} {quality_s:9.1f} "
                f"{tests_s:8.1f}  ({reason})"
            )
            continue
        measured += 1
        m = outcome.measures
        left_out = "?" if outcome.unmeasured is None else str(outcome.unmeasured.count)
        print(
            f"{name:44} {m.verbosity:6.3f} {m.erosion:7.3f} {m.total_loc:6d} "
            f"{m.files_scanned:5d} {left_out:>8} {quality_s:9.1f} {tests_s:8.1f}"
            + (
                f"  ({outcome.unmeasured.named(3)})"
                if outcome.unmeasured and outcome.unmeasured.count
                else ""
            )
        )
    ordered = sorted(seconds)
    median = ordered[len(ordered) // 2] if ordered else 0.0
    print(
        f"measured {measured} of {len(results)}; measure seconds: total {sum(seconds):.1f}, "
        f"median {median:.1f}, max {max(seconds, default=0.0):.1f}; tests seconds: total "
        f"{sum(tests_seconds):.1f}; wall {wall:.0f} s"
    )


def under_scbench(
    chosen: list[Target], checkout: Path, python: Path, scratch: Path
) -> list[dict[str, Any]]:
    """SCBench 1.0's figures for each solution, copied as its checkpoint's `snapshot/`."""
    folders = []
    for number, target in enumerate(chosen):
        folder = scratch / f"{number:03}"
        shutil.copytree(target.submission, folder / "snapshot", symlinks=True)
        folders.append(str(folder))
    figures = scratch / "figures.json"
    environment = {
        **os.environ,
        "UV_PYTHON": str(python),
        "UV_PYTHON_DOWNLOADS": "never",
        "PATH": os.pathsep.join([str(Path(shutil.which("uvx") or "uvx").parent), os.defpath]),
    }
    version = subprocess.run(
        ["uvx", "scb-check", "--version"], env=environment, capture_output=True, text=True
    )
    print(f"\nSCBench 1.0 ({checkout}): `uvx scb-check` is scb-check {version.stdout.strip()}")
    started = time.monotonic()
    ran = subprocess.run(
        [str(python), "-c", SCBENCH_SIDE, str(checkout / "src"), json.dumps(folders), figures],
        env=environment,
        capture_output=True,
        text=True,
    )
    if ran.returncode != 0:
        raise SystemExit(f"SCBench's metrics code failed:\n{ran.stderr[-3000:]}")
    print(
        f"its metrics code took {time.monotonic() - started:.0f} s (each checkpoint twice); it "
        f"logged {ran.stderr.count('scb-check failed')} 'scb-check failed' warnings"
    )
    found: list[dict[str, Any]] = json.loads(figures.read_text())
    return found


def print_side_by_side(
    results: list[tuple[Target, CheckpointResult]], side: list[dict[str, Any]]
) -> None:
    """Each checkpoint's figures, scbench-ci's against SCBench 1.0's (its report kept)."""
    print(
        f"{'problem/checkpoint':44} {'verbosity ci / 1.0':>19} {'erosion ci / 1.0':>17} "
        f"{'clone ci/1.0':>12} {'flagged ci/1.0':>14}  equal  1.0's driver"
    )
    equal, discarded = 0, 0
    for (target, result), theirs in zip(results, side, strict=True):
        name = f"{target.problem.name}/{target.checkpoint}"
        measures = None if result.quality is None else result.quality.measures
        kept: dict[str, Any] = theirs["kept"]
        driver = "figures" if theirs["driver"] else f"none (scb-check exit {theirs['exit_code']})"
        discarded += not theirs["driver"]
        if measures is None or not kept:
            print(f"{name:44} ci: {measures and 'measured'}, 1.0: {kept or 'no figures'}")
            continue
        differ = [metric for metric, ours in FIGURES if kept.get(metric) != getattr(measures, ours)]
        equal += not differ
        print(
            f"{name:44} {measures.verbosity:9.4f}/{kept['verbosity']:<9.4f} "
            f"{measures.erosion:8.4f}/{kept['erosion']:<8.4f} "
            f"{measures.clone_loc:>6}/{kept['cloned_sloc_lines']:<5} "
            f"{measures.verbosity_flagged_loc:>7}/{kept['verbosity_flagged_sloc_lines']:<6}  "
            f"{'yes' if not differ else 'NO: ' + ', '.join(differ):5}  {driver}"
        )
    print(
        f"figure by figure ({', '.join(metric for metric, _ in FIGURES)}) equal on {equal} of "
        f"{len(results)} checkpoints; SCBench 1.0's driver as it is recorded no scb-check figure "
        f"on {discarded} (scb-check exits 1 when it flags anything, and check=True discards it)"
    )


if __name__ == "__main__":
    main()
