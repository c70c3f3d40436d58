"""`scbench-ci check`: whether problems are sound: their files, collection, reference solutions,
an empty submission, flaky and slow tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.cli.arguments import add_options, given, take_pytest_arguments, terminal, warn
from scbench_ci.options import CheckOptions, EvaluationOptions
from scbench_ci.options.declared import CHECK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "problems",
        nargs="+",
        type=Path,
        metavar="PROBLEM_OR_FOLDER",
        help="a problem folder (holds config.yaml), or a folder of problem folders (a "
        "repository's problems/) to check every problem in it",
    )
    add_options(parser, CHECK)
    take_pytest_arguments(parser)


def options(args: argparse.Namespace) -> CheckOptions:
    runs = EvaluationOptions(
        problems=tuple(args.problems),
        checkpoint="all",
        submission="",
        pytest_args=tuple(args.pytest_args),
        **given(args, EvaluationOptions, CHECK),
    )
    return CheckOptions(runs, **given(args, CheckOptions, CHECK))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.check import run_check
    from scbench_ci.outputs.check_console import render_check_report

    checked = options(args)
    outcome = run_check(checked, echo=terminal(args.quiet), warn=warn)
    fail_on = checked.runs.fail_on
    sys.stdout.write(render_check_report(outcome.result, outcome.results_path, fail_on=fail_on))
    return outcome.exit_code
