"""What the job summary shows of the submissions' code quality (SCBench's verbosity and erosion,
measured by `scb-check`; results/quality_steps.py compares them): a line in each checkpoint's
section, and for a run over one problem's checkpoints their trajectory, a chart and a table.

Nothing shows for a checkpoint that was not measured (`quality` None), so a run without the
measure renders as it always did. A reason and a tool version come from the sandbox's report:
untrusted text, escaped as every value is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scbench_ci.outputs.console import UNMEASURED_NAMED, headline
from scbench_ci.results.model import RunResult
from scbench_ci.results.policy import counted
from scbench_ci.results.quality_steps import QualityStep, percent, quality_steps
from scbench_ci.trust.markdown import Markdown, formatted, joined, literal

QUALITY_COLORS = (literal("#0969da"), literal("#cf222e"))
"""The chart's verbosity line and erosion line (mermaid's xychart draws no legend: the line under
it names them)."""
QUALITY_COLOR_NAMES = ("blue", "red")
MIN_TRAJECTORY = 2
"""Measured checkpoints a trajectory needs: one point is no line."""


def quality_by_checkpoint(run: RunResult) -> dict[tuple[str, str], QualityStep]:
    """Each checkpoint's quality step by (problem, checkpoint), for the sections."""
    return {(step.problem, step.checkpoint): step for step in quality_steps(run)}


def share(ratio: float) -> str:
    """`7.3%`"""
    return f"{percent(ratio):.1f}%"


def points(change: float) -> Markdown:
    """`+0.7 pt`: its sign is ours, never escaped as the start of a list."""
    sign = literal("+") if change >= 0 else literal("-")
    return formatted("{}{} pt", sign, f"{abs(change):.1f}")


def quality_line(step: QualityStep) -> Markdown:
    """A checkpoint's figures: `verbosity **7.3%** (+0.7 pt since checkpoint_2, +1.1 pt since
    the baseline) · erosion **34.0%** (…)`, or why they are missing."""
    measures = step.measures
    if measures is None:
        reason = headline(step.outcome.reason) or "no reason given"
        return formatted("quality not measured: {}", reason)
    verbosity = _figure(
        "verbosity",
        measures.verbosity,
        step.verbosity_change(),
        step.verbosity_since_baseline(),
        step.previous,
    )
    erosion = _figure(
        "erosion",
        measures.erosion,
        step.erosion_change(),
        step.erosion_since_baseline(),
        step.previous,
    )
    left_out = step.outcome.unmeasured
    if left_out is None or left_out.count == 0:
        return formatted("{} · {}", verbosity, erosion)
    return formatted(
        "{} · {} · {} left out", verbosity, erosion, counted(left_out.count, "source file")
    )


def _figure(
    name: str,
    ratio: float,
    change: float | None,
    since_baseline: float | None,
    previous: str | None,
) -> Markdown:
    changes = []
    if change is not None:
        changes.append(formatted("{} since {}", points(change), previous))
    if since_baseline is not None:
        changes.append(formatted("{} since the baseline", points(since_baseline)))
    shown = formatted("{} **{}**", name, share(ratio))
    if not changes:
        return shown
    return formatted("{} ({})", shown, joined(", ", changes))


def quality_paragraph(step: QualityStep) -> Markdown:
    """A checkpoint's figures under its counts: `Code quality (scb-check 0.2.0): verbosity …`,
    or `Code quality not measured: …`."""
    if step.measures is None:
        reason = headline(step.outcome.reason) or "no reason given"
        return formatted("Code quality not measured: {}.", reason)
    figures = formatted(
        "Code quality (scb-check {}): {}.", step.measures.tool_version, quality_line(step)
    )
    left_out = step.outcome.unmeasured
    if left_out is None:
        return formatted("{} Which source files it measured is not recorded.", figures)
    if left_out.count == 0:
        return figures
    return formatted("{} Left out of these figures: {}.", figures, left_out.named(UNMEASURED_NAMED))


@dataclass(frozen=True)
class TrajectoryRow:
    number: int
    """The checkpoint's place among the problem's evaluated checkpoints, 1 first: the chart's
    x-axis names it by this number."""
    step: QualityStep


@dataclass(frozen=True)
class Trajectory:
    """A run over one problem's checkpoints: their verbosity and erosion in a chart (the measured
    ones) and a table (all that have `quality`)."""

    rows: list[TrajectoryRow]
    numbers: list[int]
    """The chart's x-axis: the measured rows' numbers."""
    verbosity: list[float]
    """Per measured row, as a percentage."""
    erosion: list[float]
    y_max: int
    """The chart's y-axis top, in percent: a multiple of 10 above every point."""
    baseline: bool
    """Some row has a baseline figure (the table's last two columns)."""
    missing: list[QualityStep]
    """The rows not measured, with their reasons under the table."""


def trajectory(run: RunResult) -> Trajectory | None:
    """None for a run of several problems, or with fewer than MIN_TRAJECTORY measured
    checkpoints."""
    if len(run.problems) != 1:
        return None
    place = {
        checkpoint.name: number for number, checkpoint in enumerate(run.problems[0].checkpoints, 1)
    }
    rows = [TrajectoryRow(place[step.checkpoint], step) for step in quality_steps(run)]
    measured = [(row.number, row.step.measures) for row in rows if row.step.measures is not None]
    if len(measured) < MIN_TRAJECTORY:
        return None
    verbosity = [percent(measures.verbosity) for _, measures in measured]
    erosion = [percent(measures.erosion) for _, measures in measured]
    return Trajectory(
        rows=rows,
        numbers=[number for number, _ in measured],
        verbosity=verbosity,
        erosion=erosion,
        y_max=chart_top([*verbosity, *erosion]),
        baseline=any(
            row.step.verbosity_before is not None or row.step.erosion_before is not None
            for row in rows
        ),
        missing=[row.step for row in rows if row.step.measures is None],
    )


def chart_top(percents: list[float]) -> int:
    """A quality chart's y-axis top, in percent: the multiple of 10 above every point (10 at
    least, 100 at most)."""
    return min(100, max(10, 10 * (math.floor(max(percents) / 10) + 1)))


def trajectory_cell(ratio: float | None, change: float | None) -> str:
    """A table cell: `7.3% (+0.7)`, `7.3%`, or a dash."""
    if ratio is None:
        return "\N{EN DASH}"
    return share(ratio) if change is None else f"{share(ratio)} ({change:+.1f})"


def baseline_cell(change: float | None) -> Markdown | str:
    return "\N{EN DASH}" if change is None else points(change)
