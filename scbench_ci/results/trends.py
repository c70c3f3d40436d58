"""What a history says over its runs: the pass rate of each group run by run, the tests whose
outcome flips, those that newly do, and how long each failing test has been failing.

A test's outcome in a run is a pass (passed, xpassed) or a failure (failed, error, flaky: it
failed at least once); a run that skipped it, xfailed it or did not run it is passed over. A flip
is a run whose outcome differs from the one before it that had one. A test is flaky when it
flipped at least FLAKY_FLIPS times (one flip is a regression or a fix), newly flaky when every
flip was in the last NEWLY_FLAKY_RUNS runs and it had an outcome before them. A test failing in
the last run has been failing since the first run of its unbroken failures (runs passed over do
not break them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

from scbench_ci.problem.model import Group
from scbench_ci.reports import FAILING, PASSING, Status
from scbench_ci.results.history import History
from scbench_ci.results.policy import GroupCounts

FLAKY_FLIPS = 2
NEWLY_FLAKY_RUNS = 5


@dataclass(frozen=True)
class RunRates:
    """One run's pass rate (passed / total) of each group, over its checkpoints."""

    started_at: str
    commit: str | None
    rates: dict[Group, float | None]
    """None: the run had no test of the group."""


@dataclass(frozen=True)
class TestTrend:
    __test__ = False  # not a pytest test class

    checkpoint: str
    """`problem/checkpoint`."""
    test: str
    runs: int
    """The runs it passed or failed in."""
    failed: int
    flips: int


@dataclass(frozen=True)
class FailingStreak:
    checkpoint: str
    test: str
    since: str
    """When the first run of its unbroken failures started."""
    runs: int
    """The runs it failed in since then, the last one included."""


@dataclass(frozen=True)
class Trends:
    runs: int
    window: int
    pass_rates: tuple[RunRates, ...]
    flaky: tuple[TestTrend, ...]
    """Most flips first."""
    newly_flaky: tuple[TestTrend, ...]
    failing: tuple[FailingStreak, ...]
    """Longest failing first."""


def trends(history: History) -> Trends:
    tests = list(_test_outcomes(history))
    flaky = sorted(
        (trend for trend, _ in tests if trend.flips >= FLAKY_FLIPS),
        key=lambda t: (-t.flips, -t.failed, t.checkpoint, t.test),
    )
    recent = len(history.runs) - NEWLY_FLAKY_RUNS
    newly = [
        trend
        for trend, outcomes in tests
        if trend.flips >= FLAKY_FLIPS and _flips_since(outcomes, recent)
    ]
    return Trends(
        runs=len(history.runs),
        window=history.window,
        pass_rates=tuple(_rates(history)),
        flaky=tuple(flaky),
        newly_flaky=tuple(sorted(newly, key=lambda t: (-t.flips, t.checkpoint, t.test))),
        failing=tuple(
            sorted(_failing(history, tests), key=lambda s: (-s.runs, s.checkpoint, s.test))
        ),
    )


Outcomes = list[tuple[int, bool]]
"""A test's outcomes: (the run's index, whether it failed), for each run it had one in."""


def _test_outcomes(history: History) -> Iterator[tuple[TestTrend, Outcomes]]:
    found: dict[tuple[str, str], Outcomes] = {}
    for index, run in enumerate(history.runs):
        for key, checkpoint in run.checkpoints.items():
            for test, status in checkpoint.outcomes.items():
                outcome = _failed(status)
                if outcome is not None:
                    found.setdefault((key, test), []).append((index, outcome))
    for (key, test), outcomes in found.items():
        flips = sum(a[1] != b[1] for a, b in pairwise(outcomes))
        failures = sum(failed for _, failed in outcomes)
        yield TestTrend(key, test, len(outcomes), failures, flips), outcomes


def _failed(status: Status) -> bool | None:
    """Whether the status is a failure; None when it is neither a pass nor a failure."""
    if status in PASSING:
        return False
    if status in FAILING or status is Status.FLAKY:
        return True
    return None


def _flips_since(outcomes: Outcomes, first: int) -> bool:
    """Every flip was in a run from index `first` on, and there was an outcome before it."""
    if not outcomes or outcomes[0][0] >= first:
        return False
    return all(later[0] >= first for earlier, later in pairwise(outcomes) if earlier[1] != later[1])


def _failing(history: History, tests: list[tuple[TestTrend, Outcomes]]) -> Iterator[FailingStreak]:
    last = len(history.runs) - 1
    for trend, outcomes in tests:
        if outcomes[-1] != (last, True):
            continue
        streak = 0
        while streak < len(outcomes) and outcomes[-1 - streak][1]:
            streak += 1
        first = outcomes[-streak][0]
        yield FailingStreak(trend.checkpoint, trend.test, history.runs[first].started_at, streak)


def _rates(history: History) -> Iterator[RunRates]:
    for run in history.runs:
        totals = {
            group: sum(
                (c.groups.get(group, GroupCounts()) for c in run.checkpoints.values()),
                GroupCounts(),
            )
            for group in Group
        }
        yield RunRates(
            run.started_at,
            run.commit,
            {group: counts.pass_rate for group, counts in totals.items()},
        )


def trends_to_json(found: Trends) -> dict[str, Any]:
    return {
        "runs": found.runs,
        "window": found.window,
        "pass_rates": [
            {
                "started_at": rates.started_at,
                "commit": rates.commit,
                "rates": {group.value: rate for group, rate in rates.rates.items()},
            }
            for rates in found.pass_rates
        ],
        "flaky": [asdict(trend) for trend in found.flaky],
        "newly_flaky": [asdict(trend) for trend in found.newly_flaky],
        "failing": [asdict(streak) for streak in found.failing],
    }
