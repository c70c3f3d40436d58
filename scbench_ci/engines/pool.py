"""Run jobs side by side: `workers` at a time, results in the jobs' order, progress as they end.

With one worker it is a plain loop. A job that raises stops the run (its caller turns
everything a submission can cause into a result, so what raises is the evaluator's own
trouble), and so do Ctrl-C and SIGTERM: the jobs not yet started never start, and `cancel` stops
the running ones, so that the run ends now rather than when their tests do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


def default_jobs(cpus_per_job: float) -> int:
    """As many jobs as this machine's cores hold at `cpus_per_job` each (at least one)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, int((cores or 1) // max(cpus_per_job, 0.01)))


def run_jobs(
    jobs: Sequence[Job],
    work: Callable[[Job], Result],
    workers: int,
    started: Callable[[Job], None],
    finished: Callable[[Job, Result], None],
    cancel: Callable[[], None],
) -> list[Result]:
    """`started` and `finished` are called from the worker threads, `cancel` from this one."""

    def run_one(job: Job) -> Result:
        started(job)
        result = work(job)
        finished(job, result)
        return result

    if workers <= 1 or len(jobs) <= 1:
        return [run_one(job) for job in jobs]

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scbench-job")
    futures: list[Future[Result]] = []
    try:
        try:
            futures += (pool.submit(run_one, job) for job in jobs)
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        except BaseException:  # KeyboardInterrupt, signals.Terminated
            for future in futures:
                future.cancel()
            cancel()
            raise
        for future in done:
            error = future.exception()
            if error is not None:
                cancel()
                raise error
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
