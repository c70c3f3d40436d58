"""`scbench-ci evaluate`: run a problem's tests against a submission and report the verdict."""

from __future__ import annotations

import argparse
import os
import sys

from scbench_ci.cli.arguments import (
    add_comparison_arguments,
    add_option,
    add_options,
    add_run_arguments,
    baseline_file,
    run_options,
    take_pytest_arguments,
    terminal,
    wants_colour,
    warn,
)
from scbench_ci.cli.workflow_step import report_to_workflow
from scbench_ci.commands.evaluate import evaluate
from scbench_ci.options import EvaluationOptions, check_shared_submission, commit_of
from scbench_ci.options.declared import (
    CHECKPOINT,
    CONCURRENCY,
    FLAKY_PASSES,
    INCLUDE_PRIOR_TESTS,
    OUTPUT,
    POLICY,
    PROBLEM,
    QUIET,
    REPEAT,
    RERUNS,
    SAME_SUBMISSION,
    SELECT,
    SKIP_EXISTING,
    SUBMISSION,
    WORKFLOW_REPORT,
)
from scbench_ci.outputs.console import render_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(
        parser,
        (PROBLEM, CHECKPOINT, SUBMISSION, SAME_SUBMISSION, CONCURRENCY, SKIP_EXISTING, SELECT),
    )
    add_option(parser, INCLUDE_PRIOR_TESTS)
    add_run_arguments(parser)
    add_option(parser, POLICY)
    add_comparison_arguments(parser)
    add_options(parser.add_argument_group("flaky tests"), (RERUNS, REPEAT, FLAKY_PASSES))
    add_options(parser, (OUTPUT, QUIET, WORKFLOW_REPORT))
    take_pytest_arguments(parser)


def options(args: argparse.Namespace) -> EvaluationOptions:
    if not args.same_submission:
        check_shared_submission(
            args.submission,
            tuple(args.problems),
            option="--submission",
            allow="give --same-submission",
        )
    run = run_options(args)
    return EvaluationOptions(
        problems=tuple(args.problems),
        checkpoint=args.checkpoint,
        submission=args.submission,
        output_dir=args.output,
        include_prior_tests=args.include_prior_tests,
        policy=args.policy,
        fail_on=args.fail_on,
        details=args.details,
        history=args.history,
        commit=commit_of(os.environ),
        pytest_args=tuple(args.pytest_args),
        concurrency=args.jobs,
        skip_existing=args.skip_existing,
        reruns=args.reruns,
        repeat=args.repeat,
        flaky_passes=args.flaky_passes,
        select=tuple(key for given in args.select for key in given),
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
