"""`--baseline`: a results.json, or the one folder holding one; a bad baseline is one clear error
before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.cli.main import main
from scbench_ci.results.baseline import load_baseline, results_file
from scbench_ci.results.file import ResultsError, write_results
from testing.paths import EXAMPLES
from testing.results import make_checkpoint, make_run


def test_a_folder_holding_one_results_file_at_most_two_levels_down(tmp_path: Path) -> None:
    artifact = tmp_path / "shards" / "scbench-nightly"
    artifact.mkdir(parents=True)
    write_results(make_run(make_checkpoint()), artifact)
    assert results_file(tmp_path / "shards", "--baseline") == artifact / "results.json"
    assert load_baseline(tmp_path).source == str(artifact / "results.json")
    (tmp_path / "deeper" / "a" / "b" / "c").mkdir(parents=True)
    write_results(make_run(make_checkpoint()), tmp_path / "deeper" / "a" / "b" / "c")
    with pytest.raises(ResultsError, match=r"holds no results\.json"):
        results_file(tmp_path / "deeper", "--baseline")


def test_two_results_files_are_named_not_guessed(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        write_results(make_run(make_checkpoint()), tmp_path / name)
    with pytest.raises(ResultsError, match=r"holds 2 results\.json files .*; name one"):
        results_file(tmp_path, "--baseline")


def test_a_bad_baseline_stops_the_run_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results.json").write_text('{"schema_version": 3}')
    problem = ("--problem", str(EXAMPLES / "wordstat"), "--checkpoint", "checkpoint_1")
    where = (
        "--submission",
        str(tmp_path / "nothing/{checkpoint}"),
        "--output",
        str(tmp_path / "out"),
    )
    code = main(["evaluate", *problem, *where, "--baseline", str(tmp_path), "--executor", "local"])
    assert code == 2
    assert "not a scbench-ci results file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
