"""Pass policies: which test results make a checkpoint pass."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scbench_ci.problem.model import Group


@dataclass(frozen=True)
class GroupCounts:
    passed: int = 0
    """passed and xpassed"""
    failed: int = 0
    """failed and errors"""
    skipped: int = 0
    """skipped and xfailed: not passed, as SCBench counts them (in `total`, never in `passed`)"""
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


@dataclass(frozen=True)
class Policy:
    """A pass policy as SCBench's `PassPolicy.check` decides it (its `evaluation/report.py`):
    from each group's passed and total counts only, so that a skipped or xfailed test counts in
    the total and not as passed, and a group without tests asks nothing."""

    description: str
    every: tuple[Group, ...] = ()
    """Groups whose tests must all pass."""
    some: tuple[Group, ...] = ()
    """Groups of which at least one test must pass (none: no such condition)."""
    noun: str = "test"
    """What `some` counts, in words: `no Core test passed`."""


_NON_ERROR = (Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION)
_POLICIES = {
    "core-cases": Policy("every Core test passes", every=(Group.CORE,)),
    "all-non-error-cases": Policy(
        "every Core, Functionality and Regression test passes", every=_NON_ERROR
    ),
    "all-cases": Policy("every test passes", every=tuple(Group)),
    "any-case": Policy("at least one test passes", some=tuple(Group)),
    "any": Policy("the tests ran to completion, whatever their results"),
    "any-core-cases": Policy("at least one Core test passes", some=(Group.CORE,), noun="Core test"),
    "all-core-cases": Policy("every Core test passes (as core-cases)", every=(Group.CORE,)),
}
"""SCBench's seven policies. SCBench's other implementation, `CorrectnessResults.passes_policy`,
fails `core-cases` without Core tests; no code of SCBench's calls it (its verdicts, an agent
run's `passed_policy` and `run_info.yaml`'s summary, come from `PassPolicy.check`), and no file
SCBench writes holds its outcome."""
POLICY_NAMES = tuple(_POLICIES)
DEFAULT_POLICY = "core-cases"
SKIPPED_NOT_PASSED = "SCBench counts a skipped or xfailed test as not passed"


def describe(name: str) -> str:
    return _POLICIES[name].description


def passes(name: str, counts: Counts) -> bool:
    """The verdict for a checkpoint that ran without a failure (one with a failure fails)."""
    policy = _POLICIES[name]
    return all(counts[group].passed == counts[group].total for group in policy.every) and (
        not policy.some or sum(counts[group].passed for group in policy.some) > 0
    )


def counted(count: int, noun: str) -> str:
    """`1 job`, `2 jobs`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def shortfall(name: str, counts: Counts) -> str | None:
    """In words, why counts of a run without a failure fail the policy: `2 Core tests failed,
    1 Core test skipped or xfailed (SCBench counts ...)`, or `no Core test passed (policy
    any-core-cases needs at least one)`; None when they pass it."""
    if passes(name, counts):
        return None
    policy = _POLICIES[name]
    failed = [
        f"{counted(count, f'{group.value} test')} failed"
        for group in Group
        if group in policy.every and (count := counts[group].failed)
    ]
    skipped = [
        f"{counted(count, f'{group.value} test')} skipped or xfailed"
        for group in Group
        if group in policy.every and (count := counts[group].skipped)
    ]
    if failed or skipped:
        return ", ".join(failed + skipped) + (f" ({SKIPPED_NOT_PASSED})" if skipped else "")
    return f"no {policy.noun} passed (policy {name} needs at least one)"


def counted_failures(name: str) -> frozenset[Group]:
    """The groups in which a failing test fails a checkpoint under the policy."""
    return frozenset(_POLICIES[name].every)
