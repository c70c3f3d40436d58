"""What a history says over its runs: the pass rate of each group run by run, the tests that are
flaky, those that newly are, how long each failing test has been failing, and each run's code
quality (the mean verbosity and erosion of its measured checkpoints).

A test's outcome in a run is a pass (passed, xpassed) or a failure (failed, error, flaky); a run
that skipped it, xfailed it or did not run it is passed over. Flaky means that the same inputs gave
different outcomes, never that the code changed: a test is flaky when its reruns or repeats in one
run disagreed (status flaky), or when two runs of the same inputs (the checkpoint's fingerprint:
the submission, the tests and the settings) gave it different outcomes. Each such disagreement is
a flip; a break followed by a fix, with other code each time, is none. A test is newly flaky when
every flip was in the last NEWLY_FLAKY_RUNS runs and it had an outcome before them. A test failing
in the last run has been failing since the first run of its unbroken failures (runs passed over do
not break them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from scbench_ci.job.reports import FAILING, PASSING, Status
from scbench_ci.problem.model import Group
from scbench_ci.results.history_model import History
from scbench_ci.results.policy import GroupCounts

NEWLY_FLAKY_RUNS = 5


@dataclass(frozen=True)
class RunRates:
    """One run's pass rate (passed / total) of each group, over its checkpoints."""

    started_at: str
    commit: str | None
    rates: dict[Group, float | None]
    """None: the run had no test of the group."""


@dataclass(frozen=True)
class RunQuality:
    """One run's code quality: the mean of its measured checkpoints' verbosity and erosion (as
    SCBench scores a run, docs/metrics/run-results.md: the mean across checkpoints)."""

    started_at: str
    commit: str | None
    verbosity: float | None
    """None: no checkpoint of the run was measured."""
    erosion: float | None
    measured: int
    """How many of its checkpoints were measured."""


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
    """Times the same inputs gave it different outcomes (see the module's docstring)."""


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
    quality: tuple[RunQuality, ...] = ()
    """Each run's code quality, oldest first; empty when no run of the history was measured."""


def trends(history: History) -> Trends:
    tests = list(_test_outcomes(history))
    flaky = sorted(
        (trend for trend, _ in tests if trend.flips),
        key=lambda t: (-t.flips, -t.failed, t.checkpoint, t.test),
    )
    recent = len(history.runs) - NEWLY_FLAKY_RUNS
    newly = [trend for trend, outcomes in tests if trend.flips and _flips_since(outcomes, recent)]
    return Trends(
        runs=len(history.runs),
        window=history.window,
        pass_rates=tuple(_rates(history)),
        flaky=tuple(flaky),
        newly_flaky=tuple(sorted(newly, key=lambda t: (-t.flips, t.checkpoint, t.test))),
        failing=tuple(
            sorted(_failing(history, tests), key=lambda s: (-s.runs, s.checkpoint, s.test))
        ),
        quality=_quality(history),
    )


@dataclass(frozen=True)
class HistoryOutcome:
    run: int
    """The run's index in the history."""
    failed: bool
    inputs: str | None
    """The checkpoint's fingerprint in that run; None when unknown (never the same inputs)."""
    disagreed: bool
    """Its reruns or repeats in that run disagreed (status flaky)."""


HistoryOutcomes = list[HistoryOutcome]
"""A test's outcomes, for each run it had one in, oldest first."""


def _test_outcomes(history: History) -> Iterator[tuple[TestTrend, HistoryOutcomes]]:
    found: dict[tuple[str, str], HistoryOutcomes] = {}
    for index, run in enumerate(history.runs):
        for key, checkpoint in run.checkpoints.items():
            for test, status in checkpoint.outcomes.items():
                failed = _failed(status)
                if failed is not None:
                    outcome = HistoryOutcome(
                        index, failed, checkpoint.fingerprint, status is Status.FLAKY
                    )
                    found.setdefault((key, test), []).append(outcome)
    for (key, test), outcomes in found.items():
        failures = sum(outcome.failed for outcome in outcomes)
        flips = len(_flip_runs(outcomes))
        yield TestTrend(key, test, len(outcomes), failures, flips), outcomes


def _flip_runs(outcomes: HistoryOutcomes) -> list[int]:
    """The runs in which the same inputs gave another outcome: a run whose reruns disagreed,
    and a run whose outcome differs from the last earlier one of the same fingerprint."""
    flips = [outcome.run for outcome in outcomes if outcome.disagreed]
    last_of_inputs: dict[str, bool] = {}
    for outcome in outcomes:
        if outcome.inputs is None:
            continue
        earlier = last_of_inputs.get(outcome.inputs)
        if earlier is not None and earlier != outcome.failed:
            flips.append(outcome.run)
        last_of_inputs[outcome.inputs] = outcome.failed
    return flips


def _failed(status: Status) -> bool | None:
    """Whether the status is a failure; None when it is neither a pass nor a failure."""
    if status in PASSING:
        return False
    if status in FAILING or status is Status.FLAKY:
        return True
    return None


def _flips_since(outcomes: HistoryOutcomes, first: int) -> bool:
    """Every flip was in a run from index `first` on, and there was an outcome before it."""
    if not outcomes or outcomes[0].run >= first:
        return False
    return all(run >= first for run in _flip_runs(outcomes))


def _failing(
    history: History, tests: list[tuple[TestTrend, HistoryOutcomes]]
) -> Iterator[FailingStreak]:
    last = len(history.runs) - 1
    for trend, outcomes in tests:
        if outcomes[-1].run != last or not outcomes[-1].failed:
            continue
        streak = 0
        while streak < len(outcomes) and outcomes[-1 - streak].failed:
            streak += 1
        first = outcomes[-streak].run
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


def _quality(history: History) -> tuple[RunQuality, ...]:
    runs = []
    for run in history.runs:
        measured = [
            (checkpoint.verbosity, checkpoint.erosion)
            for checkpoint in run.checkpoints.values()
            if checkpoint.verbosity is not None and checkpoint.erosion is not None
        ]
        count = len(measured)
        runs.append(
            RunQuality(
                run.started_at,
                run.commit,
                sum(verbosity for verbosity, _ in measured) / count if count else None,
                sum(erosion for _, erosion in measured) / count if count else None,
                count,
            )
        )
    return tuple(runs) if any(run.measured for run in runs) else ()


def trends_to_json(found: Trends) -> dict[str, Any]:
    """`quality` only when some run was measured: a history of runs without the measure is
    written as it always was."""
    quality = {"quality": [asdict(run) for run in found.quality]} if found.quality else {}
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
        **quality,
    }
