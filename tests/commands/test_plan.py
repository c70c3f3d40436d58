"""The `plan` core: the matrix of an evaluation's jobs; the baseline read only to balance
shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.commands.plan import run_plan
from scbench_ci.foundation.errors import UsageError
from scbench_ci.options import PlanOptions
from scbench_ci.results.baseline import Baseline
from testing.paths import EXAMPLES
from testing.problems import ProblemFolder


def _unread() -> Baseline | None:
    raise AssertionError("the baseline was read")


def test_one_entry_per_checkpoint_without_reading_the_baseline() -> None:
    options = PlanOptions((EXAMPLES / "wordstat",), "checkpoint_2")
    assert run_plan(options, baseline=_unread) == {
        "include": [
            {
                "name": "wordstat-checkpoint_2",
                "problem": "wordstat",
                "checkpoint": "checkpoint_2",
                "select": "wordstat/checkpoint_2",
            }
        ]
    }


def test_shards_ask_for_the_baseline() -> None:
    asked: list[bool] = []

    def baseline() -> Baseline | None:
        asked.append(True)
        return None

    matrix = run_plan(PlanOptions((EXAMPLES / "wordstat",), shards=2), baseline=baseline)
    assert [entry["name"] for entry in matrix["include"]] == ["shard-1-of-2", "shard-2-of-2"]
    assert asked == [True]


def test_a_submission_folder_out_of_the_confining_folder_is_refused(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "workspace/p")
    (tmp_path / "workspace/solutions").mkdir()
    (tmp_path / "workspace/solutions/checkpoint_1").symlink_to(tmp_path)
    options = PlanOptions(
        (tmp_path / "workspace/p",),
        "checkpoint_1",
        str(tmp_path / "workspace/solutions/{checkpoint}"),
        confine_submissions_to=tmp_path / "workspace",
    )
    with pytest.raises(UsageError, match="input submission: 'solutions/checkpoint_1' leaves"):
        run_plan(options)
