"""`scbench-ci summary`: render the markdown job summary of a results.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.check.console import checked
from scbench_ci.check.summary import render_check_summary
from scbench_ci.errors import ExitCode, UsageError
from scbench_ci.results_file import load_results
from scbench_ci.summary import render_summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        type=Path,
        metavar="RESULTS_JSON",
        help="a results.json of `scbench-ci evaluate` or `scbench-ci check`",
    )
    parser.add_argument(
        "--artifact-url", metavar="URL", help="link the summary to the artifact with the reports"
    )
    parser.add_argument(
        "--artifact-name",
        metavar="NAME",
        help="the name of that artifact (default: point to the .scbench/ folder)",
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="write the markdown to FILE (default: stdout)"
    )


def run(args: argparse.Namespace) -> int:
    results = load_results(args.results)
    render = render_check_summary if checked(results) else render_summary
    try:
        markdown = render(results, artifact_url=args.artifact_url, artifact_name=args.artifact_name)
    except ValueError as error:
        raise UsageError(f"--artifact-url: {error}") from None
    if args.output is None:
        sys.stdout.write(markdown)
    else:
        try:
            args.output.write_text(markdown, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"--output: {args.output}: {error.strerror}") from None
    return ExitCode.PASSED
