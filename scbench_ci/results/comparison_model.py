"""What a comparison with a baseline found: each test's change and each checkpoint's verdict and
group counts before and after (`compare` computes it; the run's result carries it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scbench_ci.problem.model import Group
from scbench_ci.results.policy import GroupCounts

NOT_RUN = "not run"
"""A test's state in a checkpoint that ran no tests (its failure says why)."""


class Change(StrEnum):
    REGRESSED = "regressed"
    FIXED = "fixed"
    NEW = "new"
    REMOVED = "removed"


@dataclass(frozen=True)
class TestChange:
    __test__ = False  # not a pytest test class

    problem: str
    checkpoint: str
    test: str
    group: Group
    before: str | None
    """The baseline's status, `not run`, or None for a new test."""
    after: str | None
    """This run's status, `not run`, or None for a removed test."""
    message: str | None
    """This run's failure message (for a regression)."""
    file: str
    line: int | None


@dataclass(frozen=True)
class CheckpointDelta:
    problem: str
    checkpoint: str
    passed_before: bool | None
    """None: the baseline did not evaluate this checkpoint."""
    passed_after: bool | None
    """None: this run did not evaluate it."""
    groups_before: dict[Group, GroupCounts]
    groups_after: dict[Group, GroupCounts]
    verbosity_before: float | None = None
    """The baseline's verbosity of this checkpoint (0-1); None when it was not measured."""
    erosion_before: float | None = None
    """The baseline's erosion of this checkpoint (0-1); None when it was not measured."""

    @property
    def verdict_changed(self) -> bool:
        return (
            self.passed_before is not None
            and self.passed_after is not None
            and self.passed_before != self.passed_after
        )


@dataclass(frozen=True)
class Comparison:
    baseline: str
    """Where the baseline came from (a path, or the artifact it was downloaded as)."""
    baseline_started_at: str
    regressions: tuple[TestChange, ...]
    fixed: tuple[TestChange, ...]
    new: tuple[TestChange, ...]
    removed: tuple[TestChange, ...]
    flaky: tuple[TestChange, ...]
    """Tests flaky in this run, whatever they were before: neither regressions nor fixes."""
    checkpoints: tuple[CheckpointDelta, ...]
    selection_notes: tuple[str, ...]
    """How the two runs' selections differ, when they do."""

    @property
    def verdict_changes(self) -> tuple[CheckpointDelta, ...]:
        return tuple(delta for delta in self.checkpoints if delta.verdict_changed)

    def group_deltas(self) -> dict[Group, tuple[int, int]]:
        """Per group, the change in passed and in total tests over the checkpoints both runs
        evaluated."""
        both = [
            d
            for d in self.checkpoints
            if d.passed_before is not None and d.passed_after is not None
        ]
        deltas = {}
        for group in Group:
            before = sum((d.groups_before[group] for d in both), GroupCounts())
            after = sum((d.groups_after[group] for d in both), GroupCounts())
            deltas[group] = (after.passed - before.passed, after.total - before.total)
        return deltas
