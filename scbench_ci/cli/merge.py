"""`scbench-ci merge`: merge the results.json of many jobs (a matrix's shards) into one run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scbench_ci.cli.arguments import add_options, baseline_file, given, wants_colour
from scbench_ci.options import MergeOptions, commit_of
from scbench_ci.options.declared import MERGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a results.json, or a folder holding them (each artifact that "
        "actions/download-artifact put in a folder of its own)",
    )
    add_options(parser, MERGE)


def options(args: argparse.Namespace) -> MergeOptions:
    from scbench_ci.results.baseline import results_files

    files = tuple(file for path in args.results for file in results_files(path, "merge"))
    return MergeOptions(files, commit=commit_of(os.environ), **given(args, MergeOptions, MERGE))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.merge import run_merge
    from scbench_ci.outputs.console import render_report

    outcome = run_merge(options(args), baseline=baseline_file(args.baseline))
    sys.stdout.write(
        render_report(
            outcome.result, outcome.results_path, fail_on=args.fail_on, colour=wants_colour()
        )
    )
    return outcome.exit_code
