"""`scbench-ci history`: print the trends of the runs a results.json's history holds, its
failing tests by checkpoint and by cause."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.foundation.errors import ExitCode
from scbench_ci.options import HistoryOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        type=Path,
        metavar="RESULTS_JSON",
        help="a results.json of `scbench-ci evaluate` or `scbench-ci merge`, or a folder holding "
        "one (an output folder, a downloaded artifact)",
    )


def options(args: argparse.Namespace) -> HistoryOptions:
    return HistoryOptions(args.results)


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.history import run_history
    from scbench_ci.outputs.history_console import render_trends

    recorded = run_history(options(args))
    sys.stdout.write(render_trends(recorded.trends, recorded.source, recorded.run))
    return ExitCode.PASSED
