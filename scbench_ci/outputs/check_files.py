"""What a check leaves behind and how it ends: results.json, summary.md, the exit code."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.errors import ExitCode
from scbench_ci.outputs.check_summary import write_check_summary
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, exit_code
from scbench_ci.results.file import write_results
from scbench_ci.results.model import RunResult


def write_check_files(
    run: RunResult, output_dir: Path, *, artifact_name: str | None = None
) -> Path | None:
    """summary.md, and results.json unless no problem was checked; its path, or None."""
    write_check_summary(run, output_dir, artifact_name=artifact_name)
    return write_results(run, output_dir) if run.problems else None


def check_exit_code(run: RunResult, fail_on: str = DEFAULT_FAIL_ON) -> ExitCode:
    """1 when a problem has an error finding, 3 when the infrastructure stopped a run; 0 when
    no problem was checked."""
    return exit_code(run, fail_on) if run.problems else ExitCode.PASSED
