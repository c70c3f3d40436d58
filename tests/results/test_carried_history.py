"""A history carried forward night after night stays within every cap the schema puts on it (the
runs, each checkpoint's test ids over the runs, the checkpoints over the runs, the bytes): its
oldest runs are dropped until it fits, so an accepted baseline and a valid run always write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scbench_ci.job.reports import Status
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.history_json import encoded_size, history_to_json
from scbench_ci.results.history_model import (
    MAX_BYTES,
    MAX_CHECKPOINTS,
    MAX_ID_CHARS,
    MAX_TESTS,
    MAX_WINDOW,
    History,
    checkpoint_key,
)
from scbench_ci.results.model import RunResult
from testing.paths import REPO_ROOT
from testing.results import make_checkpoint, make_run, make_test

IDS_A_NIGHT = 500


def started(night: int) -> str:
    return f"2026-{1 + night // 28:02d}-{1 + night % 28:02d}T02:00:00+00:00"


def night_of_fresh_ids(night: int, count: int = IDS_A_NIGHT, id_chars: int = 0) -> RunResult:
    """A suite whose parametrized ids change from night to night: none is seen twice."""
    tests = [
        make_test(f"test_case[{night}-{number}]".ljust(id_chars, "x"), Status.PASSED)
        for number in range(count)
    ]
    return make_run(make_checkpoint(*tests), started_at=started(night))


def assert_within_caps(history: History) -> None:
    document = history_to_json(history)
    assert len(document["runs"]) <= history.window
    assert len(document["tests"]) <= MAX_CHECKPOINTS
    assert all(len(ids) <= MAX_TESTS for ids in document["tests"].values())
    assert encoded_size(document) <= MAX_BYTES


# Forty writes and loads of a history at its caps (5,000 ids): about 30 s on 2 cores.
@pytest.mark.slow
def test_forty_nights_of_fresh_ids_always_write_and_drop_the_oldest(tmp_path: Path) -> None:
    baseline: RunResult | None = None
    for night in range(40):
        run = with_history(night_of_fresh_ids(night), 30, None, carried(baseline))
        folder = tmp_path / f"night{night}"
        folder.mkdir()
        baseline = load_results(write_results(run, folder))
        assert baseline.history is not None
        assert_within_caps(baseline.history)
        kept = [record.started_at for record in baseline.history.runs]
        # Ten nights of 500 fresh ids fill MAX_TESTS: the oldest beyond them are dropped.
        first = max(0, night - MAX_TESTS // IDS_A_NIGHT + 1)
        assert kept == [started(n) for n in range(first, night + 1)]


def test_checkpoints_renamed_each_night_drop_the_oldest_runs() -> None:
    def nightly_checkpoints(night: int) -> RunResult:
        checkpoints = [
            make_checkpoint(make_test("test_a", Status.PASSED), name=f"n{night}_{number}")
            for number in range(400)
        ]
        return make_run(*checkpoints, started_at=started(night))

    runs = ()
    for night in range(5):
        history = with_history(nightly_checkpoints(night), 30, None, runs).history
        assert history is not None
        assert_within_caps(history)
        runs = history.runs
    assert [record.started_at for record in runs] == [started(n) for n in (3, 4)]
    assert checkpoint_key("demo", "n4_0") in runs[-1].checkpoints


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nights=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=MAX_TESTS + 200),
            st.integers(min_value=0, max_value=MAX_ID_CHARS),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    ),
    window=st.integers(min_value=1, max_value=100),
)
def test_any_nights_carried_forward_stay_within_every_cap(
    nights: list[tuple[int, int, bool]], window: int
) -> None:
    """Nights of any number of tests, ids of any length up to the cap, fresh or repeated: the
    history each night carries is never past a cap, and it always ends with that night."""
    runs = ()
    for night, (count, id_chars, fresh) in enumerate(nights):
        run = night_of_fresh_ids(night if fresh else 0, count, id_chars)
        run = make_run(*run.problems[0].checkpoints, started_at=started(night))
        history = with_history(run, window, None, runs).history
        if history is None:  # the night alone is past the byte cap
            runs = ()
            continue
        assert_within_caps(history)
        assert history.runs[-1].started_at == started(night)
        runs = history.runs


def test_the_caps_kept_are_the_schema_s() -> None:
    """What `fits` holds a history to is what the schema refuses past."""
    schema = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
    history, run = schema["$defs"]["history"], schema["$defs"]["history_run"]
    assert history["properties"]["tests"]["maxProperties"] == MAX_CHECKPOINTS
    assert history["properties"]["tests"]["additionalProperties"]["maxItems"] == MAX_TESTS
    assert history["properties"]["runs"]["maxItems"] == MAX_WINDOW
    assert history["properties"]["window"]["maximum"] == MAX_WINDOW
    assert run["properties"]["checkpoints"]["maxProperties"] == MAX_CHECKPOINTS
    outcomes = run["properties"]["checkpoints"]["additionalProperties"]["properties"]["outcomes"]
    assert outcomes["maxLength"] == MAX_TESTS
