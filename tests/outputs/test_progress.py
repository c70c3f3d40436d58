"""What the console shows while evaluations run side by side."""

from __future__ import annotations

import io
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.engines.admission import Decision
from scbench_ci.job.plan import Job, plan_jobs
from scbench_ci.outputs.progress import FinishedLines, LiveStatus, finished_line
from scbench_ci.problem.model import Group
from scbench_ci.results.judge import unrun_result
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind
from scbench_ci.results.policy import GroupCounts
from testing.problems import ProblemFolder


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal wide enough for the whole status line (`test_the_status_fits_the_terminal`
    narrows it)."""
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture
def jobs(tmp_path: Path) -> list[Job]:
    ProblemFolder(tmp_path / "demo")
    plan = plan_jobs(
        (tmp_path / "demo",), "all", str(tmp_path / "{checkpoint}"), tmp_path / "o", None
    )
    return list(plan.jobs)


def _missing(job: Job) -> CheckpointResult:
    failure = Failure(FailureKind.MISSING, "the submission folder x does not exist")
    return unrun_result(job.checkpoint, True, failure)


def test_finished_lines_for_ci_logs(jobs: list[Job]) -> None:
    stream = io.StringIO()
    progress = FinishedLines(stream, len(jobs), "core-cases")
    for job in jobs:
        progress.started(job)
        progress.finished(job, _missing(job))
    assert stream.getvalue().splitlines() == [
        f"[{i}/3] demo / checkpoint_{i}: failed, Core 0/0, all 0/0, 0.0 s — missing: the "
        "submission folder x does not exist"
        for i in range(1, 4)
    ]
    assert progress.status() == "0:00 elapsed; 3/3 done: 0 passing, 3 failing; none running"


def test_a_live_status_line_on_a_terminal(jobs: list[Job]) -> None:
    stream = io.StringIO()
    progress = LiveStatus(stream, len(jobs), "core-cases")
    progress.started(jobs[0])
    progress.started(jobs[1])
    assert stream.getvalue().endswith(
        "\r\x1b[K0:00 elapsed; 0/3 done: 0 passing, 0 failing; running: demo / checkpoint_1 "
        "(0:00), demo / checkpoint_2 (0:00)"
    )
    progress.finished(jobs[0], _missing(jobs[0]))
    text = stream.getvalue()
    assert "\r\x1b[K[1/3] demo / checkpoint_1: failed, Core 0/0" in text
    assert text.endswith(
        "0:00 elapsed; 1/3 done: 0 passing, 1 failing; running: demo / checkpoint_2 (0:00)"
    )


def test_auto_says_how_many_run_and_why_no_more_start(jobs: list[Job]) -> None:
    """In a CI log: a line for each extra start and for backing off, and after a finished line
    how many run and why no more while some wait; on a terminal, the status line says it."""
    stream = io.StringIO()
    progress = FinishedLines(stream, 5, "core-cases")
    progress.started(jobs[0])
    progress.started(jobs[1])
    progress.load(2, Decision(False, "CPU busy (12% idle, 50% needed)"))
    progress.load(3, Decision(True, "the CPU was 93% idle for 5 s, 17.8 GiB free"))
    progress.started(jobs[2])
    progress.load(3, Decision(False, "backed off: a test of demo / checkpoint_1 used 60%"))
    progress.load(3, Decision(False, "backed off: a test of demo / checkpoint_1 used 60%"))
    progress.finished(jobs[0], _missing(jobs[0]))
    progress.load(2, Decision(True))  # one the cores hold: no line
    assert stream.getvalue().splitlines() == [
        "3 side by side: one more started, the CPU was 93% idle for 5 s, 17.8 GiB free",
        "no more extra jobs: backed off: a test of demo / checkpoint_1 used 60%",
        "[1/5] demo / checkpoint_1: failed, Core 0/0, all 0/0, 0.0 s — missing: the submission "
        "folder x does not exist · 2 running, no more: backed off: a test of demo / "
        "checkpoint_1 used 60%",
    ]
    live = io.StringIO()
    status = LiveStatus(live, 5, "core-cases")
    status.started(jobs[0])
    status.load(1, Decision(False, "at the cap of 8 (4 per core)\x1b[2J"))
    assert live.getvalue().endswith(
        "0:00 elapsed; 0/5 done: 0 passing, 0 failing; running: demo / checkpoint_1 (0:00) (no "
        "more: at the cap of 8 (4 per core)\\x1b[2J)"
    )
    status.finished(jobs[0], _missing(jobs[0]))
    assert " · " not in live.getvalue()


def test_a_finished_line_says_what_was_skipped(jobs: list[Job]) -> None:
    """`Core 7/8`: the eighth was skipped or xfailed, not failed; it passes `any-core-cases`, and
    fails `core-cases` as SCBench counts it, which the line says."""
    groups = {group: GroupCounts() for group in Group}
    groups[Group.CORE] = GroupCounts(passed=7, skipped=1, total=8)
    result = replace(_missing(jobs[0]), passed=True, failure=None, groups=groups)
    assert finished_line(jobs[0], result, "any-core-cases") == (
        "demo / checkpoint_1: passed, Core 7/8 (1 skipped), all 7/8 (1 skipped), 0.0 s"
    )
    failed = replace(result, passed=False)
    assert finished_line(jobs[0], failed, "core-cases") == (
        "demo / checkpoint_1: failed, Core 7/8 (1 skipped), all 7/8 (1 skipped), 0.0 s — "
        "1 Core test skipped or xfailed (SCBench counts a skipped or xfailed test as not passed)"
    )


def test_a_failed_line_says_why_as_the_report_does(jobs: list[Job]) -> None:
    groups = {group: GroupCounts() for group in Group}
    groups[Group.CORE] = GroupCounts(passed=3, failed=2, total=5)
    result = replace(_missing(jobs[0]), failure=None, groups=groups)
    assert finished_line(jobs[0], result, "core-cases") == (
        "demo / checkpoint_1: failed, Core 3/5, all 3/5, 0.0 s — 2 Core tests failed"
    )
    # One line, as long as the report's headlines.
    long = Failure(FailureKind.SETUP, "x" * 200 + "\nmore")
    line = finished_line(jobs[0], replace(result, failure=long), "core-cases")
    assert line.endswith(f"0.0 s — setup: {'x' * 112}…")


def test_a_check_run_says_which_run_it_was_and_what_it_gave(jobs: list[Job]) -> None:
    empty = replace(jobs[0], role="empty submission")
    groups = {group: GroupCounts() for group in Group}
    groups[Group.CORE] = GroupCounts(failed=4, total=4)
    result = replace(_missing(jobs[0]), failure=None, groups=groups)
    assert finished_line(empty, result, "all-cases") == (
        "demo / checkpoint_1, empty submission: Core 0/4, all 0/4, 0.0 s"
    )
    collected = replace(jobs[0], role="tests collected only")
    nothing = replace(result, groups={group: GroupCounts() for group in Group})
    assert finished_line(collected, nothing, "all-cases") == (
        "demo / checkpoint_1, tests collected only: done, 0.0 s"
    )
    assert finished_line(collected, _missing(jobs[0]), "all-cases") == (
        "demo / checkpoint_1, tests collected only: missing: the submission folder x does not "
        "exist, 0.0 s"
    )


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_terminal_s_status_is_drawn_again_every_second_while_nothing_changes(
    jobs: list[Job],
) -> None:
    """Issue #52: with `--checkpoint all` the status read `0:04 elapsed, ETA -` from 0:04 to
    1:16, drawn only when a job started or ended. The clock draws it each second."""
    stream = io.StringIO()
    clock = Clock()
    progress = LiveStatus(stream, len(jobs), "core-cases", clock=clock)
    progress.started(jobs[0])
    for seconds in range(1, 4):
        clock.now += 1
        progress.tick()
        assert stream.getvalue().endswith(
            f"\r\x1b[K0:0{seconds} elapsed; 0/3 done: 0 passing, 0 failing; running: demo / "
            f"checkpoint_1 (0:0{seconds})"
        )


def test_the_clock_ticks_on_its_own(jobs: list[Job]) -> None:
    stream = io.StringIO()
    progress = LiveStatus(stream, len(jobs), "core-cases")
    progress.started(jobs[0])
    drawn = stream.getvalue().count("\r\x1b[K")
    with progress.ticking():
        deadline = time.monotonic() + 30
        while stream.getvalue().count("\r\x1b[K") < drawn + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert stream.getvalue().count("\r\x1b[K") >= drawn + 2


def test_a_ci_log_gets_the_status_after_30_silent_seconds(jobs: list[Job]) -> None:
    stream = io.StringIO()
    clock = Clock()
    progress = FinishedLines(stream, len(jobs), "core-cases", clock=clock)
    progress.started(jobs[0])
    clock.now += 29
    progress.tick()
    assert stream.getvalue() == ""
    clock.now += 1
    progress.tick()
    assert stream.getvalue() == (
        "0:30 elapsed; 0/3 done: 0 passing, 0 failing; running: demo / checkpoint_1 (0:30)\n"
    )
    clock.now += 20
    progress.finished(jobs[0], _missing(jobs[0]))
    clock.now += 29
    progress.tick()
    assert stream.getvalue().count("\n") == 2  # the finished line restarted the wait
    clock.now += 1
    progress.tick()
    assert stream.getvalue().endswith(
        "1:20 elapsed; 1/3 done: 0 passing, 1 failing; none running\n"
    )


def test_the_eta_comes_from_the_baseline_s_durations_only(jobs: list[Job]) -> None:
    """Known for every unfinished job: the work left over the jobs running; one unknown: none
    (the mean of the jobs done so far told `0:04 elapsed, ETA -` and then nonsense)."""
    clock = Clock()
    durations = {job.key: 60.0 for job in jobs}
    progress = FinishedLines(io.StringIO(), 3, "core-cases", durations=durations, clock=clock)
    progress.expect(jobs)
    progress.started(jobs[0])
    progress.started(jobs[1])
    clock.now += 20
    # 40 s left of each running job, 60 s of the waiting one, over 2 running: 70 s.
    assert progress.status().startswith("0:20 elapsed, ETA 1:10 (the baseline's durations); ")
    clock.now += 50
    assert "past the baseline's durations" not in progress.status()
    progress.finished(jobs[0], _missing(jobs[0]))
    progress.finished(jobs[1], _missing(jobs[1]))
    progress.started(jobs[2])
    clock.now += 61
    assert progress.status().startswith("2:11 elapsed, past the baseline's durations; ")
    unknown = FinishedLines(io.StringIO(), 3, "core-cases", durations=durations | {}, clock=clock)
    unknown.durations.pop(jobs[2].key)
    unknown.expect(jobs)
    assert unknown.status().startswith("0:00 elapsed; ")


def test_the_status_fits_the_terminal(jobs: list[Job], monkeypatch: pytest.MonkeyPatch) -> None:
    """A status line wider than the terminal wraps, and `\\r` draws over its last row only."""
    monkeypatch.setenv("COLUMNS", "40")
    stream = io.StringIO()
    progress = LiveStatus(stream, len(jobs), "core-cases")
    progress.started(jobs[0])
    line = stream.getvalue().rsplit("\r\x1b[K", 1)[1]
    assert line == "0:00 elapsed; 0/3 done: 0 passing, 0 f…"
    assert len(line) == 39


def test_check_s_progress_counts_runs_not_verdicts(jobs: list[Job]) -> None:
    """Issue #52: `check` showed `2 passing, 6 failing`, then `PASSED (1 of 1 problem sound)`:
    an empty submission is meant to fail. Its status counts runs; the check judges them."""
    empty = replace(jobs[0], role="empty submission")
    progress = FinishedLines(io.StringIO(), 8, "all-cases", judged=False)
    progress.started(empty)
    progress.finished(empty, _missing(empty))
    assert progress.status() == "0:00 elapsed; 1/8 runs done; none running"
