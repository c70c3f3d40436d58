"""How a run's code quality moved: each measured checkpoint's verbosity and erosion beside those of
its problem's previous measured checkpoint and of the baseline's same checkpoint, in percentage
points, and the checkpoints whose erosion rose most. What the summary, its trajectory and the
console's recap all read, so they say the same.

Figures are compared as they are shown, rounded to a tenth of a percent: a change is the
difference of the two shown figures, never a third rounding.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scbench_ci.results.model import RunResult
from scbench_ci.results.quality import QualityMeasures, QualityOutcome

RISES_LISTED = 3
"""How many checkpoints the console's recap names for the largest rises in erosion."""


@dataclass(frozen=True)
class QualityStep:
    """One checkpoint's quality, as measured (or why not), and what it is compared with."""

    problem: str
    checkpoint: str
    outcome: QualityOutcome
    previous: str | None
    """The problem's nearest earlier checkpoint in the run that was measured; None for none."""
    previous_measures: QualityMeasures | None
    verbosity_before: float | None
    """The baseline's verbosity of the same checkpoint (0-1); None without one."""
    erosion_before: float | None

    @property
    def measures(self) -> QualityMeasures | None:
        return self.outcome.measures

    def verbosity_change(self) -> float | None:
        """Percentage points since the previous measured checkpoint."""
        if self.measures is None or self.previous_measures is None:
            return None
        return points_change(self.measures.verbosity, self.previous_measures.verbosity)

    def erosion_change(self) -> float | None:
        if self.measures is None or self.previous_measures is None:
            return None
        return points_change(self.measures.erosion, self.previous_measures.erosion)

    def verbosity_since_baseline(self) -> float | None:
        """Percentage points since the baseline's same checkpoint."""
        if self.measures is None or self.verbosity_before is None:
            return None
        return points_change(self.measures.verbosity, self.verbosity_before)

    def erosion_since_baseline(self) -> float | None:
        if self.measures is None or self.erosion_before is None:
            return None
        return points_change(self.measures.erosion, self.erosion_before)


def percent(ratio: float) -> float:
    """A 0-1 ratio as the reports show it: a percentage to one decimal."""
    return round(100 * ratio, 1)


def points_change(after: float, before: float) -> float:
    """How far a shown percentage moved, in points: `percent(after) - percent(before)`."""
    return round(percent(after) - percent(before), 1)


def quality_steps(run: RunResult) -> Iterator[QualityStep]:
    """Every checkpoint whose quality was measured or tried (its `quality` set), in the run's
    order."""
    before = {}
    if run.comparison is not None:
        before = {
            (delta.problem, delta.checkpoint): (delta.verbosity_before, delta.erosion_before)
            for delta in run.comparison.checkpoints
        }
    for problem in run.problems:
        previous: tuple[str, QualityMeasures] | None = None
        for checkpoint in problem.checkpoints:
            outcome = checkpoint.quality
            if outcome is None:
                continue
            verbosity, erosion = before.get((problem.name, checkpoint.name), (None, None))
            yield QualityStep(
                problem=problem.name,
                checkpoint=checkpoint.name,
                outcome=outcome,
                previous=previous[0] if previous else None,
                previous_measures=previous[1] if previous else None,
                verbosity_before=verbosity,
                erosion_before=erosion,
            )
            if outcome.measures is not None:
                previous = (checkpoint.name, outcome.measures)


@dataclass(frozen=True)
class ErosionRise:
    """A checkpoint whose erosion rose since its problem's previous measured checkpoint."""

    problem: str
    checkpoint: str
    previous: str
    before: float
    """The previous checkpoint's erosion (0-1)."""
    after: float
    points: float
    """How far it rose, in points of the shown percentages."""


def erosion_rises(run: RunResult, listed: int = RISES_LISTED) -> list[ErosionRise]:
    """The `listed` checkpoints whose erosion rose most since their problem's previous measured
    checkpoint, largest first; only rises."""
    rises = []
    for step in quality_steps(run):
        after, before = step.measures, step.previous_measures
        if after is None or before is None or step.previous is None:
            continue
        change = points_change(after.erosion, before.erosion)
        if change > 0:
            rises.append(
                ErosionRise(
                    step.problem,
                    step.checkpoint,
                    step.previous,
                    before.erosion,
                    after.erosion,
                    change,
                )
            )
    rises.sort(key=lambda rise: -rise.points)
    return rises[:listed]
