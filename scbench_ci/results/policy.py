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


@dataclass(frozen=True)
class Policy:
    description: str
    passes: Callable[[Counts], bool]
    lacking: str
    """What a checkpoint without a failing test that fails the policy lacks: `no Core tests`."""


_POLICIES = {
    "core-cases": Policy(
        "there are Core tests and none of them fails",
        lambda c: c[Group.CORE].total > 0 and _no_failures(c, (Group.CORE,)),
        "no Core tests",
    ),
    "all-non-error-cases": Policy(
        "no Core, Functionality or Regression test fails",
        lambda c: (
            _no_failures(c, (Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION))
            and sum(g.passed for g in c.values()) > 0
        ),
        "no test passed",
    ),
    "all-cases": Policy(
        "no test fails",
        lambda c: _no_failures(c, tuple(Group)) and sum(g.passed for g in c.values()) > 0,
        "no test passed",
    ),
    "any-case": Policy(
        "at least one test passes",
        lambda c: sum(g.passed for g in c.values()) > 0,
        "no test passed",
    ),
    "any": Policy(
        "the tests ran to completion, whatever their results",
        lambda c: True,
        "",
    ),
}
POLICY_NAMES = tuple(_POLICIES)
DEFAULT_POLICY = "core-cases"


def describe(name: str) -> str:
    return _POLICIES[name].description


def passes(name: str, counts: Counts) -> bool:
    """The verdict for a checkpoint that ran without a failure (one with a failure fails)."""
    return _POLICIES[name].passes(counts)


def counted(count: int, noun: str) -> str:
    """`1 job`, `2 jobs`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def shortfall(name: str, counts: Counts) -> str | None:
    """In words, why counts of a run without a failure fail the policy: `2 Core tests failed,
    1 Regression test failed`, or `no Core tests (policy core-cases needs at least one)`; None
    when they pass it."""
    if passes(name, counts):
        return None
    judged = counted_failures(name)
    failed = [
        f"{counted(count, f'{group.value} test')} failed"
        for group in Group
        if group in judged and (count := counts[group].failed)
    ]
    return ", ".join(failed) or f"{_POLICIES[name].lacking} (policy {name} needs at least one)"


def counted_failures(name: str) -> frozenset[Group]:
    """The groups in which a failing test fails a checkpoint under the policy: asked of the
    policy itself, with one passing test in each group and one failing test in the group."""
    passing = {group: GroupCounts(passed=1, total=1) for group in Group}
    failing = GroupCounts(passed=1, failed=1, total=2)
    return frozenset(group for group in Group if not passes(name, {**passing, group: failing}))
