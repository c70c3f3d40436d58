"""`scbench-ci evaluate`: run a problem's tests against a submission and report the verdict."""

from __future__ import annotations

import argparse
import os
import sys

from scbench_ci.cli.arguments import (
    add_options,
    baseline_file,
    given,
    take_pytest_arguments,
    terminal,
    wants_colour,
    warn,
)
from scbench_ci.options import EvaluationOptions, check_shared_submission, commit_of
from scbench_ci.options.declared import EVALUATE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, EVALUATE)
    take_pytest_arguments(parser)


def options(args: argparse.Namespace) -> EvaluationOptions:
    if not args.same_submission:
        check_shared_submission(
            args.submission,
            tuple(args.problems),
            option="--submission",
            allow="give --same-submission",
        )
    return EvaluationOptions(
        commit=commit_of(os.environ),
        pytest_args=tuple(args.pytest_args),
        **given(args, EvaluationOptions, EVALUATE),
    )


def run(args: argparse.Namespace) -> int:
    from scbench_ci.cli.workflow_step import report_to_workflow
    from scbench_ci.commands.evaluate import run_evaluate
    from scbench_ci.outputs.console import render_report

    outcome = run_evaluate(
        options(args),
        echo=terminal(args.quiet, args.verbose),
        warn=warn,
        baseline=baseline_file(args.baseline),
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
