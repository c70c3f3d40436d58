"""`scbench-ci plan`: print a GitHub Actions matrix (JSON) of the checkpoints to evaluate."""

from __future__ import annotations

import argparse
import json
import sys

from scbench_ci.cli.arguments import add_options, baseline_file, given
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.options import PlanOptions
from scbench_ci.options.declared import PLAN


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, PLAN)


def options(args: argparse.Namespace) -> PlanOptions:
    return PlanOptions(**given(args, PlanOptions, PLAN))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.plan import run_plan

    matrix = run_plan(options(args), baseline=baseline_file(args.baseline))
    sys.stdout.write(json.dumps(matrix, separators=(",", ":")) + "\n")
    return ExitCode.PASSED
