"""`scbench-ci history`: print the trends of the runs a results.json's history holds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.errors import ExitCode
from scbench_ci.options import HistoryOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        type=Path,
        metavar="RESULTS_JSON",
        help="a results.json of `scbench-ci evaluate` or `scbench-ci merge`",
    )


def options(args: argparse.Namespace) -> HistoryOptions:
    return HistoryOptions(args.results)


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.history import history
    from scbench_ci.outputs.history_console import render_trends

    chosen = options(args)
    sys.stdout.write(render_trends(history(chosen), str(chosen.results)))
    return ExitCode.PASSED
