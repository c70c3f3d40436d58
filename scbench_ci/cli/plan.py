"""`scbench-ci plan`: print a GitHub Actions matrix (JSON) of the checkpoints to evaluate."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scbench_ci.cli.arguments import add_problem_argument, at_least, baseline_file
from scbench_ci.commands.plan import plan
from scbench_ci.errors import ExitCode
from scbench_ci.options import PlanOptions


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
        type=at_least("--shards", 1),
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


def options(args: argparse.Namespace) -> PlanOptions:
    return PlanOptions(tuple(args.problem), args.checkpoint, shards=args.shards)


def run(args: argparse.Namespace) -> int:
    matrix = plan(options(args), baseline=baseline_file(args.baseline))
    sys.stdout.write(json.dumps(matrix, separators=(",", ":")) + "\n")
    return ExitCode.PASSED
