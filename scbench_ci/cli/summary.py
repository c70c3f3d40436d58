"""`scbench-ci summary`: render the markdown job summary of a results.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.cli.arguments import add_option, add_options
from scbench_ci.commands.summary import summary
from scbench_ci.errors import ExitCode
from scbench_ci.options import SummaryOptions
from scbench_ci.options.declared import (
    ARTIFACT_NAME,
    ARTIFACT_URL,
    DETAILS,
    FAIL_ON,
    SUMMARY_OUTPUT,
)
from scbench_ci.trust.terminal import terminal_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        type=Path,
        metavar="RESULTS_JSON",
        help="a results.json of `scbench-ci evaluate` or `scbench-ci check`",
    )
    add_options(parser, (ARTIFACT_URL, ARTIFACT_NAME, SUMMARY_OUTPUT))
    add_option(
        parser,
        FAIL_ON,
        help="the run's --fail-on, which the headline follows (default: %(default)s)",
    )
    add_option(parser, DETAILS)


def options(args: argparse.Namespace) -> SummaryOptions:
    return SummaryOptions(
        args.results,
        args.artifact_url,
        args.artifact_name,
        args.output,
        fail_on=args.fail_on,
        details=args.details,
    )


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    markdown = summary(chosen)
    if chosen.output is None:
        # Escaped for a terminal too: the markdown shows a test's output, escapes and all.
        sys.stdout.write(terminal_text(markdown))
    return ExitCode.PASSED
