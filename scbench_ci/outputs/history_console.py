"""A results.json's trends for a terminal (`scbench-ci history`): each group's pass rate run by
run, each run's code quality (when measured), the flaky and newly flaky tests, and the tests
failing now with since when."""

from __future__ import annotations

from scbench_ci.outputs.summary_view import history_date
from scbench_ci.problem.model import Group
from scbench_ci.results.policy import counted
from scbench_ci.results.trends import NEWLY_FLAKY_RUNS, TestTrend, Trends
from scbench_ci.trust.terminal import inert

LISTED = 50
"""How many tests each list shows; it says how many more there are."""


def render_trends(found: Trends | None, source: str) -> str:
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
        f"Failing now: {len(found.failing)}",
        *_listed(
            [
                f"{streak.checkpoint}  {streak.test}: failing since "
                f"{history_date(streak.since)}, {counted(streak.runs, 'run')}"
                for streak in found.failing
            ]
        ),
    ]
    return inert("\n".join(lines)) + "\n"


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
