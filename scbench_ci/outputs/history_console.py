"""A results.json's trends for a terminal (`scbench-ci history`): each group's pass rate run by
run, each run's code quality (when measured), the flaky and newly flaky tests, and the tests
failing now, by checkpoint and by cause as the summary groups them (outputs/failing_view.py),
with since when."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.outputs.console import headline
from scbench_ci.outputs.failing_view import cause_groups
from scbench_ci.outputs.summary_view import history_date
from scbench_ci.problem.model import Group
from scbench_ci.results.history_model import checkpoint_key
from scbench_ci.results.model import CheckpointResult, RunResult
from scbench_ci.results.policy import counted
from scbench_ci.results.trends import NEWLY_FLAKY_RUNS, FailingStreak, TestTrend, Trends
from scbench_ci.trust.terminal import inert

LISTED = 50
"""How many tests each list shows; it says how many more there are."""
LISTED_CHECKPOINTS = 20
"""How many checkpoints with failing tests are shown, the longest failing first."""
LISTED_CAUSES = 5
"""How many causes of a checkpoint's failing tests are shown, the most tests first."""


def render_trends(found: Trends | None, source: str, run: RunResult | None = None) -> str:
    """`run`: the run that carries the history, whose tests say why the tests failing now
    fail; without it, they are listed one by one."""
    if found is None:
        return inert(f"{source}: no history (the run was made with --history 0, or is a check)\n")
    first, last = found.pass_rates[0], found.pass_rates[-1]
    lines = [
        f"History: {counted(found.runs, 'run')} of at most {found.window}, "
        f"{history_date(first.started_at)} to {history_date(last.started_at)}",
        "",
        "Pass rate per run, oldest first:",
        f"  {'run':>3}  {'started':16}  {'commit':7}"
        + "".join(f"  {group.value:>13}" for group in Group),
    ]
    for number, rates in enumerate(found.pass_rates, start=1):
        commit = rates.commit[:7] if rates.commit else "-"
        lines.append(
            f"  {number:>3}  {history_date(rates.started_at):16}  {commit:7}"
            + "".join(f"  {_rate(rates.rates[group]):>13}" for group in Group)
        )
    lines += _quality_lines(found)
    lines += [
        "",
        f"Flaky (the same inputs gave different outcomes): {len(found.flaky)}",
        *_listed([_trend_line(trend) for trend in found.flaky]),
        f"Newly flaky (every flip in the last {NEWLY_FLAKY_RUNS} runs): {len(found.newly_flaky)}",
        *_listed([_trend_line(trend) for trend in found.newly_flaky]),
        *(_failing_lines(found, run) if run is not None else _failing_tests(found)),
    ]
    return inert("\n".join(lines)) + "\n"


def _failing_tests(found: Trends) -> list[str]:
    return [
        f"Failing now: {len(found.failing)}",
        *_listed(
            [
                f"{streak.checkpoint}  {streak.test}: failing since "
                f"{history_date(streak.since)}, {counted(streak.runs, 'run')}"
                for streak in found.failing
            ]
        ),
    ]


@dataclass(frozen=True)
class _Failing:
    """Tests failing now in one checkpoint that fail the same way."""

    cause: str
    streaks: list[FailingStreak]
    """The longest failing first."""


def _failing_lines(found: Trends, run: RunResult) -> list[str]:
    """The tests failing now, checkpoint by checkpoint (the one failing longest first), each
    checkpoint's by cause (the most tests first), with since when the longest failing of them
    fails."""
    by_checkpoint: dict[str, list[FailingStreak]] = {}
    for streak in found.failing:  # the longest failing first
        by_checkpoint.setdefault(streak.checkpoint, []).append(streak)
    checkpoints = {checkpoint_key(p.name, c.name): c for p, c in run.checkpoints()}
    lines = [
        f"Failing now: {counted(len(found.failing), 'test')} in "
        f"{counted(len(by_checkpoint), 'checkpoint')}, the longest failing first"
    ]
    for key, streaks in list(by_checkpoint.items())[:LISTED_CHECKPOINTS]:
        causes = _by_cause(streaks, checkpoints.get(key))
        lines.append(
            f"  {key}: {counted(len(streaks), 'failing test')}"
            + (f", {len(causes)} causes" if len(causes) > 1 else "")
        )
        for failing in causes[:LISTED_CAUSES]:
            first = failing.streaks[0]
            lines += [
                f"    {counted(len(failing.streaks), 'test')}: {headline(failing.cause)}",
                f"      {'e.g. ' if len(failing.streaks) > 1 else ''}{first.test}, failing since "
                f"{history_date(first.since)}, {counted(first.runs, 'run')}",
            ]
        if len(causes) > LISTED_CAUSES:
            lines.append(f"    … and {counted(len(causes) - LISTED_CAUSES, 'more cause')}")
    left = len(by_checkpoint) - LISTED_CHECKPOINTS
    return [*lines, *([f"  … and {left} more, in results.json's trends"] if left > 0 else [])]


def _by_cause(streaks: list[FailingStreak], checkpoint: CheckpointResult | None) -> list[_Failing]:
    """The streaks by the cause of their test's failure in the run (results/causes.py); a test
    the run has no failure of (flaky now) by its status."""
    by_id = {streak.test: streak for streak in streaks}
    causes: list[_Failing] = []
    for group in cause_groups(checkpoint, frozenset()) if checkpoint is not None else []:
        found = [by_id.pop(test.id) for test in group.tests if test.id in by_id]
        if found:
            causes.append(_Failing(group.cause.text, sorted(found, key=lambda s: -s.runs)))
    if by_id:
        causes.append(_Failing("flaky in this run", list(by_id.values())))
    return sorted(causes, key=lambda failing: -len(failing.streaks))


def _quality_lines(found: Trends) -> list[str]:
    """Each run's code quality, when some run was measured: the mean of its measured
    checkpoints' verbosity and erosion."""
    if not found.quality:
        return []
    lines = [
        "",
        "Code quality per run, oldest first (the mean over its measured checkpoints):",
        f"  {'run':>3}  {'started':16}  {'commit':7}  {'verbosity':>9}  {'erosion':>9}  measured",
    ]
    for number, run in enumerate(found.quality, start=1):
        commit = run.commit[:7] if run.commit else "-"
        lines.append(
            f"  {number:>3}  {history_date(run.started_at):16}  {commit:7}"
            f"  {_rate(run.verbosity):>9}  {_rate(run.erosion):>9}  {run.measured:>8}"
        )
    return lines


def _trend_line(trend: TestTrend) -> str:
    return (
        f"{trend.checkpoint}  {trend.test}: failed {trend.failed} of {trend.runs}, "
        f"{counted(trend.flips, 'flip')}"
    )


def _listed(lines: list[str]) -> list[str]:
    shown = [f"  {line}" for line in lines[:LISTED]]
    if len(lines) > LISTED:
        shown.append(f"  … and {len(lines) - LISTED} more, in results.json's trends")
    return shown


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"
