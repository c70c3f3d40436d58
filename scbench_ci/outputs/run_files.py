"""A run's own files in its output folder: results.json and summary.md, written here for every
command that runs or merges evaluations (`evaluate`, `check`, `merge`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scbench_ci.outputs.summary import SUMMARY_FILE, render_summary
from scbench_ci.results.file import write_results
from scbench_ci.results.model import RunResult
from scbench_ci.trust.markdown import Markdown
from scbench_ci.trust.output_folder import write_file


def write_run_files(
    run: RunResult,
    output_dir: Path,
    *,
    render: Callable[..., Markdown] = render_summary,
    artifact_name: str | None = None,
) -> Path | None:
    """results.json, unless the run has no problem (a check that `--changed-since` left nothing
    to check), and summary.md as `render` makes it (`render_check_summary` for a check), naming
    the artifact the folder is uploaded as, else the folder as given; results.json's path, or
    None."""
    results_path = write_results(run, output_dir) if run.problems else None
    markdown = render(run, artifact_name=artifact_name, reports_folder=output_dir)
    write_file(output_dir, SUMMARY_FILE, markdown.encode())
    return results_path
