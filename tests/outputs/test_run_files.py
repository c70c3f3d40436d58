"""The one writer of a run's results.json and summary.md."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.outputs.summary import SUMMARY_FILE, render_summary
from scbench_ci.problem.model import Problem
from scbench_ci.results.file import RESULTS_FILE, load_results
from tests.outputs.test_summary import checkpoint_result, document
from tests.outputs.test_summary import problem as problem  # the module's fixture


def test_write_summary(problem: Problem, tmp_path: Path) -> None:
    result = document(problem, checkpoint_result(problem, "checkpoint_1", []))
    path = write_run_files(result, tmp_path, artifact_name="scbench-demo")
    assert path == tmp_path / RESULTS_FILE
    assert load_results(path).problems[0].name == "demo"
    summary = (tmp_path / SUMMARY_FILE).read_text(encoding="utf-8")
    assert summary == render_summary(result, artifact_name="scbench-demo")
