"""`scbench-ci merge`: merge the results.json of many jobs (a matrix's shards) into one run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.commands.evaluate import add_comparison_arguments
from scbench_ci.merge import merged_output
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.results.baseline import compared, load_baseline, results_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a results.json, or a folder holding them (each artifact that "
        "actions/download-artifact put in a folder of its own)",
    )
    add_comparison_arguments(parser)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(".scbench"),
        metavar="DIR",
        help="where the merged results.json, summary.md and each checkpoint's reports go "
        "(default: ./.scbench)",
    )


def run(args: argparse.Namespace) -> int:
    files = [file for path in args.results for file in results_files(path, "merge")]
    baseline = load_baseline(args.baseline) if args.baseline else None
    result, results_path = merged_output(files, args.output, lambda run: compared(run, baseline))
    sys.stdout.write(render_report(result, results_path))
    return exit_code(result, args.fail_on)
