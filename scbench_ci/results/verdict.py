"""A checkpoint's counts and verdict from its tests: each group's counts, and whether it passes
the policy."""

from __future__ import annotations

from collections.abc import Iterable

from scbench_ci.problem.model import Group
from scbench_ci.reports import FAILING, PASSING, Status
from scbench_ci.results import policy
from scbench_ci.results.model import Failure, TestResult
from scbench_ci.results.policy import GroupCounts


def count_groups(tests: Iterable[TestResult], flaky_passes: bool) -> dict[Group, GroupCounts]:
    """Each group's counts; a flaky test counts as failed unless flaky tests pass."""
    counts = {group: GroupCounts() for group in Group}
    for test in tests:
        flaky = test.status is Status.FLAKY
        passed = test.status in PASSING or (flaky and flaky_passes)
        failed = test.status in FAILING or (flaky and not flaky_passes)
        counts[test.group] += GroupCounts(
            passed=int(passed),
            failed=int(failed),
            skipped=int(not passed and not failed),
            total=1,
            flaky=int(flaky),
        )
    return counts


def verdict(policy_name: str, failure: Failure | None, groups: policy.Counts) -> bool:
    """Whether a checkpoint passes: it ran without a failure and its counts pass the policy."""
    return failure is None and policy.passes(policy_name, groups)
