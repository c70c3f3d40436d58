"""Jobs side by side: as many as the admission allows, order kept, progress from the workers, a
failing job stops the run; jobs beyond the base count mark those beside them, and a job can be
run again without them."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import pytest

from scbench_ci.engines.admission import Decision, FixedCount
from scbench_ci.engines.pool import Slot, run_jobs


class Events:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()

    def started(self, job: int) -> None:
        with self.lock:
            self.lines.append(f"start {job}")

    def finished(self, job: int, result: int) -> None:
        with self.lock:
            self.lines.append(f"end {job}")

    def load(self, running: int, decision: Decision) -> None:
        with self.lock:
            self.lines.append(f"load {running} {decision.admit} {decision.reason}")


class Gate:
    """An admission that admits up to `base`, and beyond it as many as `extra` allows now."""

    tick_s: float | None = 0.01

    def __init__(self, base: int, most: int) -> None:
        self.base = base
        self.most = most
        self.extra = 0
        self.backed_off: list[str] = []

    def decide(self, running: int, holding: bool) -> Decision:
        if running < self.base:
            return Decision(True)
        if holding or self.backed_off or running >= min(self.base + self.extra, self.most):
            return Decision(False, "held" if holding else "no room")
        return Decision(True, "room")

    def started(self) -> None:
        pass

    def back_off(self, reason: str) -> None:
        self.backed_off.append(reason)


def _counting(work: Callable[[int], int]) -> tuple[Callable[[int, Slot], int], Callable[[], int]]:
    running = 0
    most = 0
    lock = threading.Lock()

    def counted(job: int, slot: Slot) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            return work(job)
        finally:
            with lock:
                running -= 1

    return counted, lambda: most


def test_results_keep_the_jobs_order_and_run_side_by_side() -> None:
    def later_ones_end_first(job: int) -> int:
        time.sleep(0.05 * (5 - job))
        return job * 10

    work, most = _counting(later_ones_end_first)
    events = Events()
    ran = run_jobs([1, 2, 3, 4], work, FixedCount(2), events, lambda: None)
    assert ran.results == [10, 20, 30, 40]
    assert most() == ran.most_side_by_side == 2
    assert sorted(line for line in events.lines if not line.startswith("load")) == sorted(
        [*(f"start {i}" for i in range(1, 5)), *(f"end {i}" for i in range(1, 5))]
    )
    assert "load 2 False " in events.lines  # the third waits


def test_one_worker_is_a_plain_loop_in_this_thread() -> None:
    threads = set()

    def work(job: int, slot: Slot) -> int:
        threads.add(threading.current_thread())
        return job

    assert run_jobs([1, 2], work, FixedCount(1), Events(), _no_cancel).results == [1, 2]
    assert threads == {threading.current_thread()}


def test_jobs_start_as_the_admission_allows_and_extras_crowd_those_beside_them() -> None:
    """Two at first; then the admission finds room for two more: every job that ran while more
    than two did is crowded, and the first two, which ended before, are not."""
    gate = Gate(base=2, most=4)
    crowded: dict[int, bool] = {}
    release = threading.Event()

    def work(job: int, slot: Slot) -> int:
        if job < 2:
            time.sleep(0.05)
        else:
            release.wait(10)
        crowded[job] = slot.crowded
        return job

    def let_more_in() -> None:
        time.sleep(0.3)  # jobs 0 and 1 have ended, 2 and 3 run
        gate.extra = 2
        time.sleep(0.3)
        release.set()

    threading.Thread(target=let_more_in).start()
    events = Events()
    ran = run_jobs(list(range(6)), work, gate, events, _no_cancel)
    assert ran.results == list(range(6))
    assert ran.most_side_by_side == 4
    assert crowded == {0: False, 1: False, 2: True, 3: True, 4: True, 5: True}
    assert "load 3 True room" in events.lines
    assert "load 4 True room" in events.lines
    assert "load 2 False no room" in events.lines


def test_a_job_run_again_without_extras_waits_for_them_to_end() -> None:
    """Job 0 wants its second run without extras: it starts once at most the base count work,
    and no job starts beside it beyond the base meanwhile."""
    gate = Gate(base=1, most=3)
    gate.extra = 2
    log: list[str] = []
    lock = threading.Lock()

    def note(line: str) -> None:
        with lock:
            log.append(line)

    def work(job: int, slot: Slot) -> int:
        if job == 0:
            time.sleep(0.05)  # jobs 1 and 2 have started beside it
            assert slot.crowded
            with slot.without_extras():
                note("rerun 0")
                assert not slot.crowded
                time.sleep(0.2)
                note("rerun 0 done")
            return job
        time.sleep(0.3 if job < 3 else 0.01)
        note(f"end {job}")
        return job

    ran = run_jobs([0, 1, 2, 3], work, gate, Events(), _no_cancel)
    assert ran.results == [0, 1, 2, 3]
    assert log.index("rerun 0") > max(log.index("end 1"), log.index("end 2"))
    assert log.index("end 3") > log.index("rerun 0 done")  # nothing started beside the rerun


def test_a_job_that_raises_stops_the_run_and_every_other_job() -> None:
    started: list[int] = []

    def work(job: int, slot: Slot) -> int:
        started.append(job)
        if job == 1:
            raise RuntimeError("the evaluator's own trouble")
        time.sleep(0.2)
        return job

    cancelled = threading.Event()
    with pytest.raises(RuntimeError, match="own trouble"):
        run_jobs(list(range(1, 20)), work, FixedCount(2), Events(), cancelled.set)
    assert len(started) < 19
    assert cancelled.is_set()  # the running job is stopped too


def _no_cancel() -> None:
    raise AssertionError("nothing to cancel")


def test_ctrl_c_cancels_the_running_jobs_and_the_rest() -> None:
    """SIGINT while the jobs run: `cancel` stops the running ones (here: releases them), the
    others never start, and KeyboardInterrupt goes on."""
    release = threading.Event()
    started: list[int] = []

    def work(job: int, slot: Slot) -> int:
        started.append(job)
        if len(started) == 2:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        release.wait(30)
        return job

    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_jobs(list(range(10)), work, FixedCount(2), Events(), release.set)
    assert sorted(started) == [0, 1]
    assert time.monotonic() - begun < 10
