"""Ten nightly runs, each compared with the night before as read back from its results.json:
the history each carries forward, and exactly the trends it gives (flip rates, newly flaky
tests, failing since)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.history_model import History
from scbench_ci.results.model import RunResult
from scbench_ci.results.trends import FailingStreak, TestTrend, trends
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured

P, F, E, S = Status.PASSED, Status.FAILED, Status.ERROR, Status.SKIPPED
NIGHTS = 10
# Each test's status night by night (None: the test did not exist yet).
SCHEDULE: dict[str, list[Status | None]] = {
    "steady": [P] * 10,
    "flaky": [P, P, F, P, P, P, F, P, P, P],
    "breaks": [P] * 7 + [F] * 3,
    "newly_flaky": [P] * 6 + [F, P, F, P],
    "skipped": [S] * 10,
    "added_broken": [None] * 8 + [E, E],
}
KEY = "demo/checkpoint_1"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
# What each night tested: the code of nights 1-7, then a change on night 8 (`breaks` broke and
# `added_broken` came with it).
FIRST_CODE, SECOND_CODE = "a" * 64, "b" * 64


def night(number: int) -> RunResult:
    tests = [
        make_test(name, statuses[number - 1])
        for name, statuses in SCHEDULE.items()
        if statuses[number - 1] is not None
    ]
    inputs = FIRST_CODE if number <= 7 else SECOND_CODE
    checkpoint = replace(make_checkpoint(*tests), fingerprint=inputs)
    return make_run(checkpoint, started_at=started(number))


def started(number: int) -> str:
    return f"2026-03-{number:02d}T02:00:00+00:00"


def node_id(name: str) -> str:
    return f"tests/test_checkpoint_1.py::{name}"


def nightly(tmp_path: Path, window: int = 30, nights: int = NIGHTS) -> RunResult:
    """Each night compared with the night before, read back from its results.json."""
    baseline = None
    for number in range(1, nights + 1):
        run = with_history(night(number), window, COMMIT if number % 2 else None, carried(baseline))
        folder = tmp_path / f"night{number}"
        folder.mkdir()
        baseline = load_results(write_results(run, folder))
        assert baseline == run
    assert baseline is not None
    return baseline


def test_ten_nights_give_exactly_these_trends(tmp_path: Path) -> None:
    last = nightly(tmp_path)
    assert last.history is not None
    assert [record.started_at for record in last.history.runs] == [started(n) for n in range(1, 11)]
    assert [record.commit for record in last.history.runs] == [COMMIT, None] * 5
    found = trends(last.history)
    assert (found.runs, found.window) == (10, 30)
    # `flaky` flipped on nights 3, 4 and 7 with the first code; `newly_flaky` on night 7 with
    # the first and on nights 9 and 10 with the second, all in the last five runs.
    assert found.flaky == (
        TestTrend(KEY, node_id("flaky"), runs=10, failed=2, flips=3),
        TestTrend(KEY, node_id("newly_flaky"), runs=10, failed=2, flips=3),
    )
    assert found.newly_flaky == (TestTrend(KEY, node_id("newly_flaky"), 10, 2, 3),)
    assert found.failing == (
        FailingStreak(KEY, node_id("breaks"), since=started(8), runs=3),
        FailingStreak(KEY, node_id("added_broken"), since=started(9), runs=2),
    )
    core = [rates.rates[Group.CORE] for rates in found.pass_rates]
    assert core == [0.8, 0.8, 0.6, 0.8, 0.8, 0.8, 0.4, 0.6, 0.3333, 0.5]
    assert {rates.rates[Group.ERROR] for rates in found.pass_rates} == {None}


def test_a_test_that_broke_once_is_failing_not_flaky(tmp_path: Path) -> None:
    found = trends(nightly(tmp_path).history)  # type: ignore[arg-type]
    assert node_id("breaks") not in {trend.test for trend in found.flaky}


def test_the_window_keeps_the_last_runs_and_the_trends_follow_it(tmp_path: Path) -> None:
    last = nightly(tmp_path, window=4)
    assert last.history is not None
    assert [r.started_at for r in last.history.runs] == [started(n) for n in range(7, 11)]
    found = trends(last.history)
    # Nights 7 to 10: `flaky` failed with the first code, then passed with the second (no flip);
    # `newly_flaky` flipped twice with the second code, in the last five runs, but it had no
    # outcome before them.
    assert found.flaky == (TestTrend(KEY, node_id("newly_flaky"), 4, 2, 2),)
    assert found.newly_flaky == ()
    assert found.failing[0] == FailingStreak(KEY, node_id("breaks"), started(8), 3)


def test_a_baseline_without_a_history_is_its_first_run(tmp_path: Path) -> None:
    old = replace(night(1), history=None)
    run = with_history(night(2), 30, None, carried(old))
    assert run.history is not None
    assert [r.started_at for r in run.history.runs] == [started(1), started(2)]


def test_no_history_with_a_window_of_0(tmp_path: Path) -> None:
    baseline = nightly(tmp_path, nights=2)
    assert with_history(night(3), 0, None, carried(baseline)).history is None


def test_tests_a_history_cannot_keep_are_left_out() -> None:
    odd = replace(make_test("x", P), id="tests/test_checkpoint_1.py::x[\x1b]")
    long = replace(make_test("y", P), id="tests/test_checkpoint_1.py::" + "y" * 600)
    run = with_history(make_run(make_checkpoint(odd, long, make_test("z", F))), 30, None, ())
    assert run.history is not None
    assert dict(run.history.runs[0].checkpoints[KEY].outcomes) == {node_id("z"): F}


def _history_of(runs: list[tuple[str | None, Status]]) -> History:
    """One test `t`, run after run: each run's fingerprint (None: unknown) and its status."""
    history = None
    for number, (inputs, status) in enumerate(runs, start=1):
        checkpoint = replace(make_checkpoint(make_test("t", status)), fingerprint=inputs)
        before = history.runs if history is not None else ()
        history = with_history(
            make_run(checkpoint, started_at=started(number)), 30, None, before
        ).history
    assert history is not None
    return history


def test_a_break_then_a_fix_with_other_code_is_not_flaky() -> None:
    """Reference, broken, reference: each change of outcome came with a change of code."""
    reference, broken = "1" * 64, "2" * 64
    runs = [(reference, P), (broken, F), (reference, P)]
    assert trends(_history_of(runs)).flaky == ()


def test_the_same_inputs_with_another_outcome_are_flaky_and_so_are_disagreeing_reruns() -> None:
    same = "3" * 64
    outcomes = [(same, P), (same, F), (None, P), (None, Status.FLAKY)]
    history = _history_of(outcomes)
    # Night 2 (the same inputs failed) and night 4 (its reruns disagreed); night 3's inputs are
    # unknown, so they are nobody's same.
    assert trends(history).flaky == (TestTrend(KEY, node_id("t"), runs=4, failed=2, flips=2),)


def test_a_baseline_s_fingerprint_that_is_no_sha256_is_kept_as_unknown() -> None:
    forged = replace(make_checkpoint(make_test("t", P)), fingerprint="not-a-hash")
    run = with_history(make_run(forged), 30, None, ())
    assert run.history is not None
    assert run.history.runs[0].checkpoints[KEY].fingerprint is None


def quality_night(number: int, measures: list[tuple[float, float] | None]) -> RunResult:
    """A night of one checkpoint per entry: measured with (verbosity, erosion), or not (None)."""
    checkpoints = []
    for index, figures in enumerate(measures, start=1):
        made = make_checkpoint(make_test("steady", P), name=f"checkpoint_{index}")
        if figures is None:
            checkpoints.append(not_measured(made, "scb-check timed out"))
        else:
            checkpoints.append(measured(made, *figures))
    return make_run(*checkpoints, started_at=started(number))


def test_the_history_carries_each_checkpoint_s_quality_and_the_trends_each_run_s_mean(
    tmp_path: Path,
) -> None:
    nights = [
        [(0.06, 0.20), (0.08, 0.30)],
        [(0.07, 0.25), None],
        [(0.10, 0.40), (0.12, 0.50)],
    ]
    baseline = None
    for number, measures in enumerate(nights, start=1):
        run = with_history(quality_night(number, measures), 30, None, carried(baseline))
        folder = tmp_path / f"night{number}"
        folder.mkdir()
        written = write_results(run, folder)
        baseline = load_results(written)
        assert baseline.history == run.history
    assert baseline is not None and baseline.history is not None
    records = [run.checkpoints for run in baseline.history.runs]
    assert [(c.verbosity, c.erosion) for c in records[1].values()] == [(0.07, 0.25), (None, None)]
    found = trends(baseline.history)
    assert [(q.verbosity, q.erosion, q.measured) for q in found.quality] == [
        (pytest.approx(0.07), pytest.approx(0.25), 2),
        (0.07, 0.25, 1),
        (pytest.approx(0.11), pytest.approx(0.45), 2),
    ]
    document = json.loads(written.read_text())
    checkpoint = document["history"]["runs"][1]["checkpoints"]["demo/checkpoint_1"]
    assert checkpoint["quality"] == {"verbosity": 0.07, "erosion": 0.25}
    assert "quality" not in document["history"]["runs"][1]["checkpoints"]["demo/checkpoint_2"]
    assert [entry["measured"] for entry in document["trends"]["quality"]] == [2, 1, 2]


def test_a_history_never_measured_writes_its_trends_as_before(tmp_path: Path) -> None:
    run = with_history(quality_night(1, []), 30, None, ())
    run = with_history(night(2), 30, None, carried(run))
    document = json.loads(write_results(run, tmp_path).read_text())
    assert trends(run.history).quality == ()  # type: ignore[arg-type]
    assert "quality" not in document["trends"]
