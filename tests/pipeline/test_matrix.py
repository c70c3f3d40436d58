"""`scbench-ci plan`: a matrix of checkpoints, or shards balanced by a baseline's durations."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.cli.main import main
from scbench_ci.foundation.errors import UsageError
from scbench_ci.job.plan import plan_jobs
from scbench_ci.pipeline.matrix import checkpoint_matrix, shard_matrix
from scbench_ci.results.file import write_results
from scbench_ci.results.model import ProblemResult
from testing.paths import EXAMPLES
from testing.results import make_checkpoint, make_run

KEYS = [
    "jsonlog/checkpoint_1",
    "kvserver/checkpoint_1",
    "kvserver/checkpoint_2",
    "marks/checkpoint_1",
    "marks/checkpoint_2",
    "settings/checkpoint_1",
    "wordstat/checkpoint_1",
    "wordstat/checkpoint_2",
    "wordstat/checkpoint_3",
]


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--problem", str(EXAMPLES), *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_one_entry_per_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _plan(capsys)
    assert [entry["select"] for entry in matrix["include"]] == KEYS
    assert matrix["include"][0] == {
        "name": "jsonlog-checkpoint_1",
        "problem": "jsonlog",
        "checkpoint": "checkpoint_1",
        "select": "jsonlog/checkpoint_1",
    }


def test_shards_are_balanced_by_the_baselines_durations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    durations = dict(zip(KEYS, [2.0, 30.0, 1.0, 1.0, 1.0, 2.0, 10.0, 10.0, 9.0], strict=True))
    problems = []
    for name in ("jsonlog", "kvserver", "marks", "settings", "wordstat"):
        checkpoints = tuple(
            replace(make_checkpoint(name=key.split("/")[1]), duration_s=seconds)
            for key, seconds in durations.items()
            if key.startswith(f"{name}/")
        )
        problems.append(ProblemResult(name, f"/p/{name}", 1, checkpoints))
    baseline = replace(make_run(), problems=tuple(problems))
    write_results(baseline, tmp_path)
    matrix = _plan(capsys, "--shards", "2", "--baseline", str(tmp_path))
    assert matrix["include"] == [
        {
            "name": "shard-1-of-2",
            "shard": 1,
            "select": "kvserver/checkpoint_1 marks/checkpoint_1 settings/checkpoint_1",
            "checkpoints": 3,
            "estimated_s": 33.0,
        },
        {
            "name": "shard-2-of-2",
            "shard": 2,
            "select": " ".join([KEYS[0], KEYS[2], KEYS[4], *KEYS[6:]]),
            "checkpoints": 6,
            "estimated_s": 33.0,
        },
    ]


def test_without_a_baseline_shards_take_turns() -> None:
    jobs = plan_jobs((EXAMPLES,), "all", ".", Path(".scbench"), None).jobs
    matrix = shard_matrix(jobs, 3, {})
    assert [entry["checkpoints"] for entry in matrix["include"]] == [3, 3, 3]
    selected = [key for entry in matrix["include"] for key in entry["select"].split()]
    assert sorted(selected) == KEYS
    assert len(shard_matrix(jobs, 50, {})["include"]) == 9  # never an empty shard


def test_more_checkpoints_than_a_matrix_holds_is_an_error() -> None:
    jobs = plan_jobs((EXAMPLES,), "all", ".", Path(".scbench"), None).jobs
    with pytest.raises(UsageError, match="more matrix jobs than GitHub allows"):
        checkpoint_matrix(jobs * 40)
