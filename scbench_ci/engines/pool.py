"""Run jobs side by side, as many at a time as the admission allows; results in the jobs' order,
progress as they start and end.

Jobs start in the order given. With a fixed count of one it is a plain loop. A job that raises
stops the run (its caller turns everything a submission can cause into a result, so what raises
is the evaluator's own trouble), and so do Ctrl-C and SIGTERM: the jobs not yet started never
start, and `cancel` stops the running ones, so that the run ends now rather than when their tests
do.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from scbench_ci.engines.admission import Admission, Decision, FixedCount

Job = TypeVar("Job")
Job_contra = TypeVar("Job_contra", contravariant=True)
Result = TypeVar("Result")
Result_contra = TypeVar("Result_contra", contravariant=True)


class Watcher(Protocol[Job_contra, Result_contra]):
    """Told of each job's start and end (from the workers' threads), and of what the admission
    decided (from the pool's)."""

    def started(self, job: Job_contra) -> None: ...
    def finished(self, job: Job_contra, result: Result_contra) -> None: ...
    def load(self, running: int, decision: Decision) -> None: ...


@dataclass(frozen=True)
class Ran(Generic[Result]):
    results: list[Result]
    """In the jobs' order."""
    most_side_by_side: int


class Slot:
    """A running job's place in the pool: whether jobs beyond the admission's base count ran
    beside it, and the way to run it again without them."""

    def __init__(self, pool: _Running) -> None:
        self._pool = pool
        self.crowded = False
        """Whether more jobs than the admission's base count ran at some moment beside this one."""
        self.waiting = False

    def back_off(self, reason: str) -> None:
        """No extra job from now on: this one's result says they may move verdicts."""
        self._pool.admission.back_off(reason)

    @contextlib.contextmanager
    def without_extras(self) -> Iterator[None]:
        """Wait until this job can run within the base count, and start no extra job while
        inside."""
        with self._pool.hold(self):
            self.crowded = False
            yield


class _Running:
    """The jobs running now, shared by the pool's thread and the workers'."""

    def __init__(self, admission: Admission) -> None:
        self.admission = admission
        self.slots: set[Slot] = set()
        self.most = 0
        self.holds = 0
        self.changed = threading.Condition()

    def enter(self) -> Slot:
        with self.changed:
            slot = Slot(self)
            self.slots.add(slot)
            self.most = max(self.most, len(self.slots))
            if len(self.slots) > self.admission.base:
                for running in self.slots:
                    running.crowded = True
            return slot

    def leave(self, slot: Slot) -> None:
        with self.changed:
            self.slots.discard(slot)
            self.changed.notify_all()

    @contextlib.contextmanager
    def hold(self, slot: Slot) -> Iterator[None]:
        """`slot` waits, idle, until the others at work leave it room within the base count."""
        with self.changed:
            self.holds += 1
            slot.waiting = True
            self.changed.wait_for(lambda: self._at_work() < self.admission.base)
            slot.waiting = False
        try:
            yield
        finally:
            with self.changed:
                self.holds -= 1
                self.changed.notify_all()

    def _at_work(self) -> int:
        return sum(not slot.waiting for slot in self.slots)


def run_jobs(
    jobs: Sequence[Job],
    work: Callable[[Job, Slot], Result],
    admission: Admission,
    watcher: Watcher[Job, Result],
    cancel: Callable[[], None],
) -> Ran[Result]:
    """`cancel` is called from this thread."""
    running = _Running(admission)

    def run_one(job: Job, slot: Slot) -> Result:
        try:
            watcher.started(job)
            result = work(job, slot)
            watcher.finished(job, result)
            return result
        finally:
            running.leave(slot)

    if not jobs:
        return Ran([], 0)
    if isinstance(admission, FixedCount) and (admission.base <= 1 or len(jobs) <= 1):
        return Ran([run_one(job, running.enter()) for job in jobs], 1)

    pool = ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="scbench-job")
    futures: dict[Future[Result], int] = {}
    results: dict[int, Result] = {}
    waiting = list(reversed(range(len(jobs))))
    shown: tuple[int, Decision] | None = None
    try:
        try:
            while waiting or futures:
                with running.changed:
                    while waiting:
                        decision = admission.decide(len(running.slots), running.holds > 0)
                        if not decision.admit:
                            break
                        index = waiting.pop()
                        futures[pool.submit(run_one, jobs[index], running.enter())] = index
                        admission.started()
                        if decision.reason:
                            watcher.load(len(running.slots), decision)
                    if waiting and (len(running.slots), decision) != shown:
                        shown = (len(running.slots), decision)
                        watcher.load(*shown)
                done, _ = wait(futures, timeout=admission.tick_s, return_when=FIRST_COMPLETED)
                for future in done:
                    index = futures.pop(future)
                    results[index] = future.result()  # a job's error stops the run
        except BaseException:  # that error, KeyboardInterrupt, signals.Terminated
            for future in futures:
                future.cancel()
            cancel()
            raise
        return Ran([results[index] for index in range(len(jobs))], running.most)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
