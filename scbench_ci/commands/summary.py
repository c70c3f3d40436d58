"""`scbench-ci summary`: render the markdown job summary of a results.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scbench_ci.errors import ExitCode, UsageError
from scbench_ci.outputs.check_console import checked
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.summary import render_summary
from scbench_ci.problem.model import real_path
from scbench_ci.results.file import load_results
from scbench_ci.trust.output_folder import write_file


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
        return ExitCode.PASSED
    if args.output.is_dir() and not args.output.is_symlink():
        raise UsageError(f"--output: {args.output} is a folder; give a file")
    # A link, fifo or read-only file there is replaced, never written through.
    folder = real_path(args.output.parent)
    if not folder.is_dir():
        raise UsageError(f"--output: {args.output.parent} is not a folder")
    write_file(folder, args.output.name, markdown.encode())
    return ExitCode.PASSED
