"""The measure the threat tests rest on tells linear from quadratic, and a busy machine does not
move it."""

from __future__ import annotations

import re
import signal
import time

from testing.cost_ratio import ALLOWED_RATIO, cost_ratio

BACKTRACKING = re.compile(r"(a|aa)+$")
SIZE = 4_000


def _scan(text: str) -> object:
    return BACKTRACKING.match(text)


def test_a_backtracking_pattern_is_stopped_at_the_allowed_ratio() -> None:
    measured = cost_ratio(_scan, "b" * SIZE, "a" * (SIZE - 1) + "b", rounds=2)
    assert measured.stopped
    assert measured.ratio > ALLOWED_RATIO


def test_a_linear_scan_stays_within_a_few_times() -> None:
    measured = cost_ratio(lambda text: text.count("a"), "ab" * 50_000, "a" * 100_000)
    assert not measured.stopped
    assert measured.ratio <= ALLOWED_RATIO


def test_time_the_process_sleeps_through_is_not_counted() -> None:
    """A pause (another process on the core, a page fault) costs wall time, not CPU time: the
    adversarial side that waits ten times longer than it works is measured as what it works."""

    def work(pause: bool) -> None:
        started = time.thread_time()
        while time.thread_time() - started < 0.002:
            pass
        if pause:
            time.sleep(0.05)

    measured = cost_ratio(work, False, True)
    assert not measured.stopped
    assert measured.ratio < 2


def test_one_round_stopped_does_not_decide() -> None:
    """The first adversarial call runs past the alarm (the allowed ratio of 30 ordinary calls
    of 1 ms); the rounds after it decide."""
    calls = {"adversarial": 0}

    def work(adversarial: bool) -> None:
        started = time.thread_time()
        busy = 1.0 if adversarial and calls["adversarial"] == 0 else 0.001
        calls["adversarial"] += adversarial
        while time.thread_time() - started < busy:
            pass

    measured = cost_ratio(work, False, True, rounds=3)
    assert not measured.stopped, measured
    assert measured.ratio < 2
    assert calls["adversarial"] > 1
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
