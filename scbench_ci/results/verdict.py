"""A checkpoint's counts and verdict from its tests: each group's counts, and whether it passes
the policy."""

from __future__ import annotations

from collections.abc import Iterable

from scbench_ci.foundation.scbench_runner import ScbenchRunner
from scbench_ci.job.reports import FAILING, PASSING, Status
from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.model import Failure, ScbenchRecord, TestResult
from scbench_ci.results.policy import GroupCounts


def count_groups(
    tests: Iterable[TestResult], flaky_passes: bool, skipped_in_totals: bool = True
) -> dict[Group, GroupCounts]:
    """Each group's counts; a flaky test counts as failed unless flaky tests pass; a skipped
    (or xfailed) test is in its group's total unless `skipped_in_totals` is false
    (`counts_skipped`)."""
    counts = {group: GroupCounts() for group in Group}
    for test in tests:
        flaky = test.status is Status.FLAKY
        passed = test.status in PASSING or (flaky and flaky_passes)
        failed = test.status in FAILING or (flaky and not flaky_passes)
        skipped = not passed and not failed
        counts[test.group] += GroupCounts(
            passed=int(passed),
            failed=int(failed),
            skipped=int(skipped),
            total=int(skipped_in_totals or not skipped),
            flaky=int(flaky),
        )
    return counts


def counts_skipped(scbench: ScbenchRunner, record: ScbenchRecord | None) -> bool:
    """Whether a checkpoint's skipped tests are in its totals: always by the paper's rules; by
    1.0's unless they judged it without an inventory (its `add_test_result` leaves them out, its
    inventory counts every test)."""
    return scbench.skipped_in_totals or record is None or record.inventory


def verdict(policy_name: str, failure: Failure | None, groups: policy.Counts) -> bool:
    """Whether a checkpoint passes: it ran without a failure and its counts pass the policy."""
    return failure is None and policy.passes(policy_name, groups)
