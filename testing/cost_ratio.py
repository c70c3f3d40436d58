"""How much longer a function takes on adversarial input than on ordinary input of the same size:
a ratio of two times measured side by side, never an absolute time.

Each side is timed in the CPU time of the thread that calls it, not on the wall clock, so that
other processes on a busy machine (a parallel suite's other workers) do not count. (The
thread's clock, not the process's: the process's is only as fine as the kernel's tick while the
alarm below is armed.) Each side's time is the fastest of a few rounds, interleaved (ordinary,
adversarial, ordinary, ...), so that what load still costs (caches, frequency) slows both and
lifts neither's best. A side is called as many times as makes the ordinary one last
MIN_SAMPLE_S, so that the clock's resolution weighs nothing. The adversarial side runs under a
CPU-time alarm at the allowed ratio (and a little more): input that makes a regular expression
backtrack for minutes is stopped there (CPython's regular expressions check for signals as they
match). A round stopped counts as that much; only when every round was stopped is the ratio
reported as at least that, so one stray pause decides nothing.
"""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import TypeVar

_T = TypeVar("_T")
ROUNDS = 3
MIN_SAMPLE_S = 0.03
ALLOWED_RATIO = 10.0
"""Linear code on input of the same size stays within a few times; quadratic code on the
largest input a reader accepts is hundreds of times slower or more."""


class _TooSlow(BaseException):
    """Not an Exception: the catch-alls of the code it stops must not take it for an error."""


@dataclass(frozen=True)
class CostRatio:
    ordinary_s: float
    """The fastest call on ordinary input."""
    adversarial_s: float
    """The fastest call on adversarial input (a lower bound when it was stopped)."""
    stopped: bool
    """The adversarial side ran past the alarm and was stopped."""

    @property
    def ratio(self) -> float:
        return self.adversarial_s / self.ordinary_s

    def __str__(self) -> str:
        at_least = "at least " if self.stopped else ""
        return (
            f"{at_least}{self.ratio:.1f} times as long on adversarial input "
            f"({at_least}{self.adversarial_s * 1000:.2f} ms a call, against "
            f"{self.ordinary_s * 1000:.2f} ms on ordinary input of the same size)"
        )


def cost_ratio(
    work: Callable[[_T], object],
    ordinary: _T,
    adversarial: _T,
    allowed: float = ALLOWED_RATIO,
    rounds: int = ROUNDS,
) -> CostRatio:
    """`work(adversarial)`'s time over `work(ordinary)`'s, measured as the module says."""
    started = time.thread_time()
    work(ordinary)
    once = max(time.thread_time() - started, 1e-6)
    calls = max(1, math.ceil(MIN_SAMPLE_S / once))
    best_ordinary = best_adversarial = best_stopped = math.inf
    for _ in range(rounds):
        best_ordinary = min(best_ordinary, _timed(work, ordinary, calls, None))
        budget = best_ordinary * calls * allowed * 1.5
        try:
            best_adversarial = min(best_adversarial, _timed(work, adversarial, calls, budget))
        except _TooSlow:
            best_stopped = min(best_stopped, budget / calls)
    if best_adversarial == math.inf:
        return CostRatio(best_ordinary, best_stopped, stopped=True)
    return CostRatio(best_ordinary, best_adversarial, stopped=False)


def _timed(work: Callable[[_T], object], given: _T, calls: int, budget_s: float | None) -> float:
    """The thread's CPU time of one call, from `calls` calls in a row; _TooSlow past
    `budget_s` of the process's CPU time in all."""
    previous = signal.signal(signal.SIGPROF, _stop)
    if budget_s is not None:
        signal.setitimer(signal.ITIMER_PROF, max(budget_s, 0.001))
    try:
        started = time.thread_time()
        for _ in range(calls):
            work(given)
        return (time.thread_time() - started) / calls
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow
