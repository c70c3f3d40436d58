"""A run's history, carried forward: the history of the run it was compared with (its baseline),
the baseline itself when that history does not end with it, then the run, the last `window` of
them that fit every cap of a history (`history_json.fits`). Merged shards carry the history they
share.

The caps are kept here, where the history is made: each run keeps at most MAX_TESTS ids per
checkpoint, but the runs together can hold many more (a suite whose parametrized ids change from
night to night), so the oldest runs are dropped until the history fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from itertools import islice

from scbench_ci.results.history_json import fits
from scbench_ci.results.history_model import (
    MAX_CHECKPOINTS,
    MAX_TESTS,
    CheckpointRecord,
    History,
    RunRecord,
    checkpoint_key,
    keeps,
    kept_fingerprint,
)
from scbench_ci.results.model import CheckpointResult, RunResult
from scbench_ci.results.policy import GroupCounts


def record_of(run: RunResult, commit: str | None) -> RunRecord:
    """The run as a history keeps it: its first MAX_CHECKPOINTS checkpoints, and of each its
    first MAX_TESTS tests whose ids a history can keep."""
    keyed = (
        (checkpoint_key(problem.name, checkpoint.name), checkpoint)
        for problem, checkpoint in run.checkpoints()
    )
    kept = islice(((key, c) for key, c in keyed if keeps(key)), MAX_CHECKPOINTS)
    return RunRecord(
        started_at=run.started_at,
        commit=commit,
        checkpoints={key: _checkpoint_record(checkpoint) for key, checkpoint in kept},
    )


def _checkpoint_record(checkpoint: CheckpointResult) -> CheckpointRecord:
    measures = None if checkpoint.quality is None else checkpoint.quality.measures
    return CheckpointRecord(
        passed=checkpoint.passed,
        groups={
            group: GroupCounts(counts.passed, counts.failed, counts.skipped, counts.total)
            for group, counts in checkpoint.groups.items()
        },
        outcomes=dict(
            islice(
                ((test.id, test.status) for test in checkpoint.tests if keeps(test.id)),
                MAX_TESTS,
            )
        ),
        fingerprint=kept_fingerprint(checkpoint.fingerprint),
        verbosity=None if measures is None else measures.verbosity,
        erosion=None if measures is None else measures.erosion,
    )


def with_history(
    run: RunResult, window: int, commit: str | None, before: tuple[RunRecord, ...]
) -> RunResult:
    """The run with its history: the runs `before` it, then the run (`commit`: what it
    evaluated), at most `window` of them; none for a window of 0."""
    if window == 0:
        return replace(run, history=None)
    return replace(run, history=_capped(window, (*before, record_of(run, commit))))


def carried(baseline: RunResult | None) -> tuple[RunRecord, ...]:
    """What a run compared with `baseline` carries forward: the baseline's history, ending
    with the baseline itself."""
    if baseline is None:
        return ()
    before = baseline.history.runs if baseline.history is not None else ()
    if before and before[-1].started_at == baseline.started_at:
        return before
    return (*before, record_of(baseline, None))


def carried_by_shards(shards: Iterable[RunResult]) -> tuple[RunRecord, ...]:
    """What merged shards carry when the merge has no baseline of its own: the history before
    their own records (they were compared with the same baseline), the longest if they differ."""
    befores = (shard.history.runs[:-1] for shard in shards if shard.history is not None)
    return max(befores, key=len, default=())


def _capped(window: int, runs: tuple[RunRecord, ...]) -> History | None:
    """The most recent of the last `window` runs that fit; None when even the run alone does
    not (past MAX_BYTES)."""
    runs = runs[-window:]

    def newest(count: int) -> History:
        return History(window, runs[len(runs) - count :])

    # A run more never makes a history fit that did not (it only adds ids, checkpoints and
    # bytes), so the longest that fits is found by halving.
    if not runs or not fits(newest(1)):
        return None
    fitting, too_many = 1, len(runs) + 1
    while too_many - fitting > 1:
        middle = (fitting + too_many) // 2
        fitting, too_many = (middle, too_many) if fits(newest(middle)) else (fitting, middle)
    return newest(fitting)
