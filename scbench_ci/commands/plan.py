"""`scbench-ci plan`: print a GitHub Actions matrix (JSON) of the checkpoints to evaluate."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scbench_ci.commands.evaluate import add_problem_argument, at_least
from scbench_ci.errors import ExitCode
from scbench_ci.matrix import baseline_durations, checkpoint_matrix, shard_matrix
from scbench_ci.plan import plan_jobs
from scbench_ci.results.baseline import load_baseline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_problem_argument(parser)
    parser.add_argument(
        "--checkpoint",
        default="all",
        metavar="NAME|all",
        help="the checkpoint of every problem, or all of them (default: %(default)s)",
    )
    parser.add_argument(
        "--shards",
        type=at_least(1),
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
    sys.stdout.write(json.dumps(matrix(args), separators=(",", ":")) + "\n")
    return ExitCode.PASSED
