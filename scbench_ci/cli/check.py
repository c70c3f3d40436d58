"""`scbench-ci check`: whether problems are sound: their files, collection, reference solutions,
an empty submission, flaky and slow tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.cli.arguments import (
    add_run_arguments,
    argument_type,
    at_least,
    run_options,
    take_pytest_arguments,
    terminal,
    warn,
)
from scbench_ci.commands.check import check
from scbench_ci.options import (
    DEFAULT_CHECK_REPEAT,
    DEFAULT_JOBS,
    DEFAULT_ORACLE_POLICY,
    CheckOptions,
    EvaluationOptions,
    job_count,
)
from scbench_ci.outputs.check_console import render_check_report
from scbench_ci.results import policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "problems",
        nargs="+",
        type=Path,
        metavar="PROBLEM_OR_FOLDER",
        help="a problem folder (holds config.yaml), or a folder of problem folders (a "
        "repository's problems/) to check every problem in it",
    )
    parser.add_argument(
        "--changed-since",
        metavar="REF",
        help="check only the problems with files changed since this git ref (for a pull "
        "request, its base branch: the diff REF...HEAD, and changes not committed yet)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=argument_type("--jobs", job_count),
        default=DEFAULT_JOBS,
        metavar="N|auto",
        help="runs side by side, each in its own container: a number, or auto (one per "
        "core, and more while the CPU stays idle and memory allows; default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=at_least("--repeat", 1),
        default=DEFAULT_CHECK_REPEAT,
        metavar="N",
        help="run each reference solution N times; a test whose outcome differs is flaky "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--oracle-policy",
        default=DEFAULT_ORACLE_POLICY,
        choices=policy.POLICY_NAMES,
        help="what each reference solution must pass; the tests listed in "
        "tests/known_failures.txt are known to fail (default: %(default)s)",
    )
    add_run_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(".scbench"),
        metavar="DIR",
        help="where the runs' reports and logs, results.json and summary.md go "
        "(default: ./.scbench)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="do not show a line per finished run"
    )
    take_pytest_arguments(parser)


def options(args: argparse.Namespace) -> CheckOptions:
    run = run_options(args)
    runs = EvaluationOptions(
        problems=tuple(args.problems),
        checkpoint="all",
        submission="",
        output_dir=args.output,
        policy=args.oracle_policy,
        pytest_args=tuple(args.pytest_args),
        jobs=args.jobs,
        repeat=args.repeat,
        **run,
    )
    return CheckOptions(runs, changed_since=args.changed_since)


def run(args: argparse.Namespace) -> int:
    checked = options(args)
    outcome = check(checked, echo=terminal(args.quiet), warn=warn)
    fail_on = checked.runs.fail_on
    sys.stdout.write(render_check_report(outcome.result, outcome.results_path, fail_on=fail_on))
    return outcome.exit_code
