"""The `summary` core: an evaluation's or a check's summary, returned and written where asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.commands.summary import run_summary
from scbench_ci.foundation.errors import UsageError
from scbench_ci.options import SummaryOptions
from scbench_ci.outputs.summary import render_summary
from scbench_ci.results.file import load_results, write_results
from testing.results import make_checkpoint, make_run


def test_the_markdown_is_returned_and_written_to_the_file(tmp_path: Path) -> None:
    results = write_results(make_run(make_checkpoint()), tmp_path)
    run = load_results(results)  # as the core reads it: verdicts judged again
    expected = render_summary(run, artifact_name="scbench-demo")
    assert run_summary(SummaryOptions(results, artifact_name="scbench-demo")) == expected
    target = tmp_path / "summary.md"
    # No artifact: the reports are beside the results.json.
    beside = render_summary(run, reports_folder=tmp_path)
    assert f"the `{tmp_path}/` folder" in beside
    assert run_summary(SummaryOptions(results, output=target)) == beside
    assert target.read_text(encoding="utf-8") == beside


def test_a_folder_is_not_a_file_to_write(tmp_path: Path) -> None:
    results = write_results(make_run(make_checkpoint()), tmp_path)
    with pytest.raises(UsageError, match="is a folder; give a file"):
        run_summary(SummaryOptions(results, output=tmp_path))
