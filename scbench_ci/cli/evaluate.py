"""`scbench-ci evaluate`: run a problem's tests against a submission and report the verdict."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scbench_ci.cli.arguments import (
    add_comparison_arguments,
    add_problem_argument,
    add_run_arguments,
    argument_type,
    at_least,
    baseline_file,
    run_options,
    take_pytest_arguments,
    terminal,
    wants_colour,
    warn,
)
from scbench_ci.cli.workflow_step import add_workflow_report_argument, report_to_workflow
from scbench_ci.commands.evaluate import evaluate
from scbench_ci.options import (
    DEFAULT_JOBS,
    EvaluationOptions,
    check_shared_submission,
    checkpoint_choice,
    commit_of,
    job_count,
    submission_template,
)
from scbench_ci.outputs.console import render_report
from scbench_ci.results import policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_problem_argument(parser)
    parser.add_argument(
        "--checkpoint",
        required=True,
        metavar="NAME|all",
        help="the checkpoint to evaluate, or `all` for every one in order",
    )
    parser.add_argument(
        "--submission",
        required=True,
        type=argument_type("--submission", submission_template),
        metavar="DIR",
        help="the submission folder; `{problem}` is replaced by each problem's folder name and "
        "`{checkpoint}` by each checkpoint's name (runs/x/{problem}/{checkpoint}/snapshot, "
        "problems/{problem}/solutions/{checkpoint}). It is only read, never written.",
    )
    parser.add_argument(
        "--same-submission",
        action="store_true",
        help="evaluate every problem against the one --submission folder, which has no "
        "`{problem}` (without it, several problems need `{problem}`)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=argument_type("--jobs", job_count),
        default=DEFAULT_JOBS,
        metavar="N|auto",
        help="evaluations side by side, each in its own container: a number, or auto (one per "
        "core, and more while the CPU stays idle and memory allows; default: %(default)s)",
    )
    parser.add_argument(
        "--skip-existing",
        action="store_true",
        help="reuse the results in --output of evaluations whose problem files, submission "
        "files and settings are unchanged, instead of running them again",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="PROBLEM/CHECKPOINT",
        help="evaluate only this checkpoint of the problems given (a shard of `scbench-ci "
        "plan`); may be repeated, or hold several separated by spaces",
    )
    prior = parser.add_mutually_exclusive_group()
    prior.add_argument(
        "--include-prior-tests",
        dest="include_prior_tests",
        action="store_true",
        default=None,
        help="also run earlier checkpoints' tests (as Regression)",
    )
    prior.add_argument(
        "--no-include-prior-tests",
        dest="include_prior_tests",
        action="store_false",
        help="run only the checkpoint's own tests",
    )
    add_run_arguments(parser)
    parser.add_argument(
        "--policy",
        default=policy.DEFAULT_POLICY,
        choices=policy.POLICY_NAMES,
        help="what makes a checkpoint pass (default: %(default)s)",
    )
    add_comparison_arguments(parser)
    flaky = parser.add_argument_group("flaky tests")
    flaky.add_argument(
        "--reruns",
        type=at_least("--reruns", 0),
        default=0,
        metavar="N",
        help="rerun a failing test up to N times in its session (no new install); one that "
        "then passes is flaky (default: %(default)s)",
    )
    flaky.add_argument(
        "--repeat",
        type=at_least("--repeat", 1),
        default=1,
        metavar="N",
        help="run each checkpoint whole N times and count each test's passes; a test whose "
        "outcome differs is flaky (default: %(default)s)",
    )
    flaky.add_argument(
        "--flaky-passes",
        action="store_true",
        help="count flaky tests as passed for the policy (default: as failed)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(".scbench"),
        metavar="DIR",
        help="where reports, logs and results.json go (default: ./.scbench)",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="do not stream the test output; print only the report",
    )
    add_workflow_report_argument(parser)
    take_pytest_arguments(parser)


def options(args: argparse.Namespace) -> EvaluationOptions:
    if not args.same_submission:
        check_shared_submission(
            args.submission,
            tuple(args.problem),
            option="--submission",
            allow="give --same-submission",
        )
    run = run_options(args)
    return EvaluationOptions(
        problems=tuple(args.problem),
        checkpoint=checkpoint_choice("--checkpoint", args.checkpoint),
        submission=args.submission,
        output_dir=args.output,
        include_prior_tests=args.include_prior_tests,
        policy=args.policy,
        fail_on=args.fail_on,
        details=args.details,
        history=args.history,
        commit=commit_of(os.environ),
        pytest_args=tuple(args.pytest_args),
        jobs=args.jobs,
        skip_existing=args.skip_existing,
        reruns=args.reruns,
        repeat=args.repeat,
        flaky_passes=args.flaky_passes,
        select=tuple(key for value in args.select for key in value.split()),
        **run,
    )


def run(args: argparse.Namespace) -> int:
    outcome = evaluate(
        options(args), echo=terminal(args.quiet), warn=warn, baseline=baseline_file(args.baseline)
    )
    sys.stdout.write(
        render_report(
            outcome.result, outcome.results_path, fail_on=args.fail_on, colour=wants_colour()
        )
    )
    if args.workflow_report:
        report_to_workflow(
            outcome.result, fail_on=args.fail_on, details=args.details, reports_folder=args.output
        )
    return outcome.exit_code
