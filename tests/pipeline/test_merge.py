"""`scbench-ci merge`: shards put back together as one run, or refused with the reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scbench_ci.foundation.errors import UsageError
from scbench_ci.pipeline.merge import Shard, merge_runs
from scbench_ci.results.findings import CheckReport
from scbench_ci.results.model import ProblemResult
from testing.results import make_checkpoint, make_run

ORDER = ("checkpoint_1", "checkpoint_2", "checkpoint_3")


def _shard(problem: str, *names: str, started_at: str, duration_s: float) -> Shard:
    checkpoints = tuple(make_checkpoint(name=name) for name in names)
    result = ProblemResult(problem, f"/p/{problem}", 1, checkpoints, ORDER)
    run = replace(make_run(), problems=(result,), started_at=started_at, duration_s=duration_s)
    return Shard(f"{problem}-{names[0]}.json", run)


def test_checkpoints_go_back_in_their_order_and_problems_by_name() -> None:
    merged = merge_runs(
        [
            _shard("zeta", "checkpoint_3", started_at="2026-01-01T00:00:10+00:00", duration_s=5),
            _shard("alpha", "checkpoint_2", started_at="2026-01-01T00:00:00+00:00", duration_s=3),
            _shard("zeta", "checkpoint_1", started_at="2026-01-01T00:00:02+00:00", duration_s=20),
        ]
    )
    assert [(p.name, [c.name for c in p.checkpoints]) for p in merged.problems] == [
        ("alpha", ["checkpoint_2"]),
        ("zeta", ["checkpoint_1", "checkpoint_3"]),
    ]
    assert (merged.started_at, merged.duration_s, merged.jobs) == (
        "2026-01-01T00:00:00+00:00",
        22.0,
        3,
    )


def test_one_checkpoint_in_two_shards_or_different_rules_cannot_be_merged() -> None:
    one = _shard("a", "checkpoint_1", started_at="2026-01-01T00:00:00+00:00", duration_s=1)
    with pytest.raises(UsageError, match=r"a / checkpoint_1 is in both a-checkpoint_1\.json and b"):
        merge_runs([one, replace(one, source="b")])
    other = _shard("a", "checkpoint_2", started_at="2026-01-01T00:00:00+00:00", duration_s=1)
    with pytest.raises(UsageError, match="was judged with policy 'any'"):
        merge_runs([one, replace(other, run=replace(other.run, policy="any"))])
    with pytest.raises(UsageError, match="was judged with scbench 'paper'"):
        merge_runs([one, replace(other, run=replace(other.run, scbench="paper"))])


def test_a_check_runs_results_are_refused() -> None:
    """A check's verdict is its findings: merged as checkpoints, 5 of 7 would read as passed."""
    one = _shard("a", "checkpoint_1", started_at="2026-01-01T00:00:00+00:00", duration_s=1)
    problem = replace(one.run.problems[0], check=CheckReport(()))
    checked = Shard("check/results.json", replace(one.run, problems=(problem,)))
    with pytest.raises(UsageError, match=r"check/results\.json is a `check` run's results"):
        merge_runs([one, checked])
