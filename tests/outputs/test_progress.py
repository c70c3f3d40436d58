"""What the console shows while evaluations run side by side."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.engines.admission import Decision
from scbench_ci.outputs.progress import FinishedLines, LiveStatus, finished_line
from scbench_ci.plan import Job, plan_jobs
from scbench_ci.problem.model import Group
from scbench_ci.results.judge import unrun_result
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind
from scbench_ci.results.policy import GroupCounts
from testing.problems import ProblemFolder


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
    assert progress.status().startswith("3/3 done: 0 passing, 3 failing, 0 running; 0:00 elapsed")


def test_a_live_status_line_on_a_terminal(jobs: list[Job]) -> None:
    stream = io.StringIO()
    progress = LiveStatus(stream, len(jobs), "core-cases")
    progress.started(jobs[0])
    progress.started(jobs[1])
    assert stream.getvalue().endswith(
        "\r\x1b[K0/3 done: 0 passing, 0 failing, 2 running; 0:00 elapsed, ETA -"
    )
    progress.finished(jobs[0], _missing(jobs[0]))
    text = stream.getvalue()
    assert "\r\x1b[K[1/3] demo / checkpoint_1: failed, Core 0/0" in text
    assert text.endswith("1/3 done: 0 passing, 1 failing, 1 running; 0:00 elapsed, ETA 0:00")


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
        "0/5 done: 0 passing, 0 failing, 1 running (no more: at the cap of 8 (4 per core)"
        "\\x1b[2J); 0:00 elapsed, ETA -"
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
