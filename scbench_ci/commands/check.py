"""`scbench-ci check`: whether problems are sound: their files, collection, reference solutions,
an empty submission, flaky and slow tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.check.run import DEFAULT_ORACLE_POLICY, DEFAULT_REPEAT, check_request, run_check
from scbench_ci.commands.evaluate import add_run_arguments, at_least, run_options, streamed
from scbench_ci.executors import REVIEW_CACHE_SCOPE
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.check_console import render_check_report
from scbench_ci.outputs.check_files import check_exit_code, write_check_files
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
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="runs side by side, each in its own container (default: as many as the cores "
        "hold at --cpus each, at least 1)",
    )
    parser.add_argument(
        "--repeat",
        type=at_least(1),
        default=DEFAULT_REPEAT,
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
        "--output",
        type=Path,
        default=Path(".scbench"),
        metavar="DIR",
        help="where the runs' reports and logs, results.json and summary.md go "
        "(default: ./.scbench)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="do not stream the tests' output or show progress"
    )


def run(args: argparse.Namespace) -> int:
    options = EvaluationOptions(
        problems=tuple(args.problems),
        checkpoint="all",
        submission="",
        output_dir=args.output,
        pytest_args=tuple(args.pytest_args),
        jobs=args.jobs,
        **run_options(args),
    )
    request = check_request(
        options,
        oracle_policy=args.oracle_policy,
        repeat=args.repeat,
        changed_since=args.changed_since,
    )
    executor = options.make_executor(
        warn=lambda notice: print(f"scbench-ci: {notice}", file=sys.stderr),
        cache_scope=REVIEW_CACHE_SCOPE,
    )
    result = streamed(lambda echo: run_check(request, executor, echo), args.quiet)
    results_path = write_check_files(result, args.output)
    sys.stdout.write(render_check_report(result, results_path))
    return check_exit_code(result)
