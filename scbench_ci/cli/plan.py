"""`scbench-ci plan`: print a GitHub Actions matrix (JSON) of the checkpoints to evaluate."""

from __future__ import annotations

import argparse
import json
import sys

from scbench_ci.cli.arguments import add_option, add_options, baseline_file
from scbench_ci.commands.plan import plan
from scbench_ci.errors import ExitCode
from scbench_ci.options import PlanOptions
from scbench_ci.options.declared import BASELINE, EVERY_CHECKPOINT, PROBLEM, SHARDS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, (PROBLEM, EVERY_CHECKPOINT, SHARDS))
    add_option(
        parser,
        BASELINE,
        help="an earlier run's results.json (or a folder holding one): its checkpoint "
        "durations balance the shards",
    )


def options(args: argparse.Namespace) -> PlanOptions:
    return PlanOptions(tuple(args.problems), args.checkpoint, shards=args.shards)


def run(args: argparse.Namespace) -> int:
    matrix = plan(options(args), baseline=baseline_file(args.baseline))
    sys.stdout.write(json.dumps(matrix, separators=(",", ":")) + "\n")
    return ExitCode.PASSED
