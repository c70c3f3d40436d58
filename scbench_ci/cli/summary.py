"""`scbench-ci summary`: render the markdown job summary of a results.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.cli.arguments import add_options, given
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.options import SummaryOptions
from scbench_ci.options.declared import SUMMARY
from scbench_ci.trust.terminal import inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        type=Path,
        metavar="RESULTS_JSON",
        help="a results.json of `scbench-ci evaluate` or `scbench-ci check`",
    )
    add_options(parser, SUMMARY)


def options(args: argparse.Namespace) -> SummaryOptions:
    return SummaryOptions(args.results, **given(args, SummaryOptions, SUMMARY))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.summary import run_summary

    chosen = options(args)
    markdown = run_summary(chosen)
    if chosen.output is None:
        # Inert for a terminal and a workflow's log too: the markdown shows a test's output,
        # escapes, `::` lines and all.
        sys.stdout.write(inert(markdown))
    return ExitCode.PASSED
