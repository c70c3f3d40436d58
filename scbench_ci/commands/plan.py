"""`scbench-ci plan`: print a GitHub Actions matrix (JSON) of the checkpoints to evaluate."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scbench_ci.baseline import load_baseline
from scbench_ci.errors import ExitCode, UsageError
from scbench_ci.matrix import baseline_durations, checkpoint_matrix, shard_matrix
from scbench_ci.plan import plan_jobs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--problem",
        required=True,
        action="append",
        type=Path,
        metavar="DIR",
        help="a problem folder, or a folder of problem folders; may be repeated",
    )
    parser.add_argument(
        "--checkpoint",
        default="all",
        metavar="NAME|all",
        help="the checkpoint of every problem, or all of them (default: %(default)s)",
    )
    parser.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="N matrix jobs of balanced length, instead of one per checkpoint",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="PATH",
        help="an earlier run's results.json (or a folder holding one): its checkpoint "
        "durations balance the shards",
    )


def matrix(args: argparse.Namespace) -> dict[str, Any]:
    plan = plan_jobs(tuple(args.problem), args.checkpoint, ".", Path(".scbench"), None)
    if args.shards is None:
        return checkpoint_matrix(plan.jobs)
    baseline = load_baseline(args.baseline) if args.baseline else None
    return shard_matrix(plan.jobs, args.shards, baseline_durations(baseline))


def run(args: argparse.Namespace) -> int:
    if args.shards is not None and args.shards < 1:
        raise UsageError(f"--shards: must be at least 1, got {args.shards}")
    sys.stdout.write(json.dumps(matrix(args), separators=(",", ":")) + "\n")
    return ExitCode.PASSED
