"""Pass policies: which test results make a checkpoint pass."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from scbench_ci.problem.model import Group


@dataclass(frozen=True)
class GroupCounts:
    passed: int = 0
    """passed and xpassed"""
    failed: int = 0
    """failed and errors"""
    skipped: int = 0
    """skipped and xfailed: the test author's choice, neither pass nor failure"""
    total: int = 0
    flaky: int = 0
    """tests that failed and then passed on a rerun or a repeat: already counted in `failed`,
    or in `passed` when flaky tests pass (`--flaky-passes`)"""

    def __add__(self, other: GroupCounts) -> GroupCounts:
        return GroupCounts(
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
            self.total + other.total,
            self.flaky + other.flaky,
        )

    @property
    def pass_rate(self) -> float | None:
        return round(self.passed / self.total, 4) if self.total else None


Counts = Mapping[Group, GroupCounts]


def _no_failures(counts: Counts, groups: tuple[Group, ...]) -> bool:
    return all(counts[group].failed == 0 for group in groups)


_POLICIES: dict[str, tuple[str, Callable[[Counts], bool]]] = {
    "core-cases": (
        "there are Core tests and none of them fails",
        lambda c: c[Group.CORE].total > 0 and _no_failures(c, (Group.CORE,)),
    ),
    "all-non-error-cases": (
        "no Core, Functionality or Regression test fails",
        lambda c: (
            _no_failures(c, (Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION))
            and sum(g.passed for g in c.values()) > 0
        ),
    ),
    "all-cases": (
        "no test fails",
        lambda c: _no_failures(c, tuple(Group)) and sum(g.passed for g in c.values()) > 0,
    ),
    "any-case": (
        "at least one test passes",
        lambda c: sum(g.passed for g in c.values()) > 0,
    ),
    "any": (
        "the tests ran to completion, whatever their results",
        lambda c: True,
    ),
}
POLICY_NAMES = tuple(_POLICIES)
DEFAULT_POLICY = "core-cases"


def describe(name: str) -> str:
    return _POLICIES[name][0]


def passes(name: str, counts: Counts) -> bool:
    """The verdict for a checkpoint that ran without a failure (one with a failure fails)."""
    return _POLICIES[name][1](counts)


def counted_failures(name: str) -> frozenset[Group]:
    """The groups in which a failing test fails a checkpoint under the policy: asked of the
    policy itself, with one passing test in each group and one failing test in the group."""
    passing = {group: GroupCounts(passed=1, total=1) for group in Group}
    failing = GroupCounts(passed=1, failed=1, total=2)
    return frozenset(group for group in Group if not passes(name, {**passing, group: failing}))
