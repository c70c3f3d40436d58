"""Time `scbench-ci evaluate` on every bundled example and print the counts and wall times.

    python benchmarks/evaluate_examples.py [--executor local|docker|...] [--repeat N]

Each evaluation runs as a separate CLI process, as a user would run it; the figure is the median
wall time over the repeats. The first repeat also warms uv's cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUNS = (
    ("wordstat", "checkpoint_1", "solutions/checkpoint_1"),
    ("wordstat", "checkpoint_2", "solutions/checkpoint_2"),
    ("wordstat", "checkpoint_3", "solutions/checkpoint_3"),
    ("wordstat", "checkpoint_1", "submissions/broken"),
    ("wordstat", "checkpoint_2", "submissions/broken"),
    ("wordstat", "checkpoint_3", "submissions/broken"),
    ("kvserver", "checkpoint_1", "solutions/checkpoint_1"),
    ("kvserver", "checkpoint_2", "solutions/checkpoint_2"),
    ("kvserver", "checkpoint_1", "submissions/leaky"),
    ("kvserver", "checkpoint_2", "submissions/leaky"),
)
GROUPS = ("Core", "Functionality", "Error", "Regression")


def evaluate_once(
    problem: str, checkpoint: str, submission: str, executor: str, extra: list[str]
) -> tuple[float, int, dict]:
    with tempfile.TemporaryDirectory() as output:
        started = time.perf_counter()
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
                output,
                "--executor",
                executor,
                "--quiet",
                *extra,
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        elapsed = time.perf_counter() - started
        results = json.loads((Path(output) / "results.json").read_text())
    return elapsed, run.returncode, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executor", default="local")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the examples whose problem is this")
    args, extra = parser.parse_known_args()

    header = (
        f"{'problem / checkpoint / submission':<52}{'exit':>5}  "
        + "  ".join(f"{g[:5]:>7}" for g in GROUPS)
        + f"{'median s':>10}{'min s':>8}{'max s':>8}"
    )
    print(f"executor: {args.executor}, repeats: {args.repeat}")
    print(header)
    for problem, checkpoint, submission in RUNS:
        if args.only and problem != args.only:
            continue
        times = []
        for _ in range(args.repeat):
            elapsed, code, results = evaluate_once(
                problem, checkpoint, submission, args.executor, extra
            )
            times.append(elapsed)
        groups = results["checkpoints"][0]["groups"]
        counts = "  ".join(f"{groups[g]['passed']:>3}/{groups[g]['total']:<3}" for g in GROUPS)
        label = f"{problem} / {checkpoint} / {submission}"
        print(
            f"{label:<52}{code:>5}  {counts}{statistics.median(times):>10.2f}"
            f"{min(times):>8.2f}{max(times):>8.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
