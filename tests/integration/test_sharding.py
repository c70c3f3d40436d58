"""`--shards`: a checkpoint's tests over several whole runs side by side, merged into the result
one run gives, test by test; the shards' own files kept apart; a checkpoint whose shards do not
add up to one collection is run whole, and says why."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from testing.examples import SharedEvaluations, scbench_evaluate
from testing.problems import ProblemFolder
from testing.results import checkpoint_documents

SHARDED = [
    ("wordstat", "checkpoint_2", "solutions/checkpoint_2"),  # an xfail, an error in setup
    ("wordstat", "checkpoint_2", "submissions/broken"),
    ("kvserver", "checkpoint_2", "solutions/checkpoint_2"),
    ("kvserver", "checkpoint_2", "submissions/leaky"),  # a server left running
    ("marks", "checkpoint_1", "solutions/checkpoint_1"),  # classes, custom marks
]
"""The examples' checkpoints with more than one unit (test file or class) to deal."""
JUDGED = ("name", "passed", "pytest_exit_code", "groups", "totals", "warnings")
"""What a checkpoint's result says that sharding must not change."""
_PER_PROCESS = re.compile(r"0x[0-9a-f]+|scbench-run-[A-Za-z0-9_]+|pytest-[0-9]+")


def _judged(results: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    (checkpoint,) = checkpoint_documents(results)
    failure = checkpoint["failure"]
    tests = [
        {key: _as_any_run(value) for key, value in test.items() if key != "duration_s"}
        for test in checkpoint["tests"]
    ]
    judged = {key: checkpoint[key] for key in JUDGED}
    judged["failure"] = failure and {"kind": failure["kind"]}
    measures = (checkpoint["quality"] or {}).get("measures") or {}
    judged["quality"] = {key: value for key, value in measures.items() if key != "seconds"}
    return judged, tests


def _as_any_run(value: object) -> object:
    """A message or traceback as two whole runs of the same tests agree on it: objects' addresses
    differ from one process to the next, and so do the order of a set's or a dict's items in an
    assertion's diff (hash randomization) and, on this machine, the folders of the workspace and
    of pytest's temporary files."""
    return sorted(_PER_PROCESS.sub("?", value).splitlines()) if isinstance(value, str) else value


@pytest.mark.parametrize(("problem", "checkpoint", "submission"), SHARDED)
def test_sharded_is_the_whole_run_test_by_test(
    problem: str,
    checkpoint: str,
    submission: str,
    test_image: str,
    shared_evaluations: SharedEvaluations,
) -> None:
    args = (problem, checkpoint, submission, "--image", test_image)
    whole = shared_evaluations(*args, executor="docker")
    sharded = shared_evaluations(*args, "--shards", "3", executor="docker")
    assert sharded.run.returncode == whole.run.returncode, sharded.run.stdout
    assert _judged(sharded.results) == _judged(whole.results)
    (result,) = checkpoint_documents(sharded.results)
    shards = sorted(path.name for path in (sharded.output / result["artifacts"]).glob("shard-*"))
    assert len(shards) >= 2, "the checkpoint was not sharded"
    for shard in shards:
        folder = sharded.output / result["artifacts"] / shard
        assert {"pytest.log", "pytest-report.json", "ctrf-report.json"} <= {
            path.name for path in folder.iterdir()
        }
    assert any(f"ran in {len(shards)} shards" in notice for notice in result["notices"])


def test_the_local_executor_shards_alike(
    shared_evaluations: SharedEvaluations,
) -> None:
    args = ("wordstat", "checkpoint_2", "submissions/broken")
    whole = shared_evaluations(*args, executor="local")
    sharded = shared_evaluations(*args, "--shards", "2", executor="local")
    assert sharded.run.returncode == whole.run.returncode == 1
    assert _judged(sharded.results) == _judged(whole.results)


def test_shards_that_collect_different_tests_run_the_checkpoint_whole(tmp_path: Path) -> None:
    """A collection that changes from one session to the next cannot be dealt: each shard
    would run a part of another collection."""
    problem = ProblemFolder(
        tmp_path / "problem",
        {"name": "drifting", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
    )
    problem.write(
        "tests/test_checkpoint_1.py",
        """
        import os

        import pytest

        @pytest.mark.parametrize("n", [os.getpid()])
        def test_drifts(n):
            pass

        class TestSteady:
            def test_a(self):
                pass
        """,
    )
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    run, results = scbench_evaluate(
        str(problem.root),
        "checkpoint_1",
        str(submission),
        tmp_path / "out",
        "--shards",
        "2",
        "--no-quality",
        executor="local",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (checkpoint,) = checkpoint_documents(results)
    assert [test["status"] for test in checkpoint["tests"]] == ["passed", "passed"]
    (warning,) = [w for w in checkpoint["warnings"] if "shards" in w]
    assert "collected different tests" in warning and "ran again in one session" in warning
    folder = tmp_path / "out" / checkpoint["artifacts"]
    assert not list(folder.glob("shard-*")) and (folder / "pytest-report.json").is_file()
    assert json.loads((folder / "pytest-report.json").read_text())["exitcode"] == 0
