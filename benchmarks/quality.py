"""The code-quality measure (scb-check in the sandbox, after the tests) on problems' reference
solutions, through the real path: every checkpoint's `solutions/<checkpoint>/` evaluated in one
run by the Python API at its defaults (Docker, cached environments, quality on), `--jobs` side by
side. Prints, per checkpoint,
verbosity, erosion, the lines and files measured, the measure's seconds (`phases["quality"]`)
and the tests' (`phases["tests"]`), or why there is no measure; then the totals.

By default no test is run (`-k` selects none: pytest collects and exits), so the figures are the
measure's own cost; `--tests` runs the tests too, for the measure's cost beside theirs. The first
run of an image also builds the measure's cached environment, in the first checkpoint's time.

    python benchmarks/quality.py PROBLEM_OR_FOLDER ... [--tests] [--jobs N] [--output DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scbench_ci
from scbench_ci.plan import Target
from scbench_ci.problem.load import load_problem

NO_TEST = ("-k", "scbench_ci_quality_benchmark_selects_no_test")


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
            output=arguments.output or Path(scratch),
            jobs=arguments.jobs,
            pytest_args=() if arguments.tests else NO_TEST,
        )
    wall = time.monotonic() - started
    header = f"{'problem/checkpoint':44} {'verb':>6} {'erosion':>7} {'lines':>6} {'files':>5}"
    print(f"{header} {'measure s':>9} {'tests s':>8}")
    measured, seconds, tests_seconds = 0, [], []
    for target, result in zip(chosen, evaluated.checkpoints, strict=True):
        name = f"{target.problem.name}/{target.checkpoint}"
        quality_s = result.phases.get("quality", 0.0)
        tests_s = result.phases.get("tests", 0.0)
        seconds.append(quality_s)
        tests_seconds.append(tests_s)
        outcome = result.quality
        if outcome is None or outcome.measures is None:
            reason = outcome.reason if outcome else "not measured"
            print(
                f"{name:44} {'-':>6} {'-':>7} {'-':>6} {'-':>5} {quality_s:9.1f} "
                f"{tests_s:8.1f}  ({reason})"
            )
            continue
        measured += 1
        m = outcome.measures
        print(
            f"{name:44} {m.verbosity:6.3f} {m.erosion:7.3f} {m.total_loc:6d} "
            f"{m.files_scanned:5d} {quality_s:9.1f} {tests_s:8.1f}"
        )
    ordered = sorted(seconds)
    median = ordered[len(ordered) // 2] if ordered else 0.0
    print(
        f"measured {measured} of {len(chosen)}; measure seconds: total {sum(seconds):.1f}, "
        f"median {median:.1f}, max {max(seconds, default=0.0):.1f}; tests seconds: total "
        f"{sum(tests_seconds):.1f}; wall {wall:.0f} s"
    )


if __name__ == "__main__":
    main()
