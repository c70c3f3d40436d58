"""Jobs side by side: order kept, progress from the workers, a failing job stops the run."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from scbench_ci.engines.pool import run_jobs


def test_results_keep_the_jobs_order_and_run_side_by_side() -> None:
    running = 0
    most = 0
    lock = threading.Lock()
    events: list[str] = []

    def work(job: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05 * (5 - job))  # later jobs end first
        with lock:
            running -= 1
        return job * 10

    results = run_jobs(
        [1, 2, 3, 4],
        work,
        2,
        lambda job: events.append(f"start {job}"),
        lambda job, result: events.append(f"end {job}"),
        lambda: None,
    )
    assert results == [10, 20, 30, 40]
    assert most == 2
    assert sorted(events) == sorted(
        [*(f"start {i}" for i in range(1, 5)), *(f"end {i}" for i in range(1, 5))]
    )


def test_one_worker_is_a_plain_loop_in_this_thread() -> None:
    threads = set()

    def work(job: int) -> int:
        threads.add(threading.current_thread())
        return job

    assert run_jobs([1, 2], work, 1, lambda job: None, lambda job, result: None, _no_cancel) == [
        1,
        2,
    ]
    assert threads == {threading.current_thread()}


def test_a_job_that_raises_stops_the_run_and_every_other_job() -> None:
    started: list[int] = []

    def work(job: int) -> int:
        started.append(job)
        if job == 1:
            raise RuntimeError("the evaluator's own trouble")
        time.sleep(0.2)
        return job

    cancelled = threading.Event()
    with pytest.raises(RuntimeError, match="own trouble"):
        run_jobs(list(range(1, 20)), work, 2, _ignore, lambda job, result: None, cancelled.set)
    assert len(started) < 19
    assert cancelled.is_set()  # the running job is stopped too


def _ignore(job: int) -> None:
    pass


def _no_cancel() -> None:
    raise AssertionError("nothing to cancel")


def test_ctrl_c_cancels_the_running_jobs_and_the_rest() -> None:
    """SIGINT while the jobs run: `cancel` stops the running ones (here: releases them), the
    others never start, and KeyboardInterrupt goes on."""
    release = threading.Event()
    started: list[int] = []

    def work(job: int) -> int:
        started.append(job)
        if len(started) == 2:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        release.wait(30)
        return job

    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_jobs(list(range(10)), work, 2, lambda job: None, lambda job, result: None, release.set)
    assert sorted(started) == [0, 1]
    assert time.monotonic() - begun < 10
