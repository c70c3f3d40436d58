import pytest

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.model import Failure, FailureKind
from scbench_ci.results.policy import GroupCounts
from scbench_ci.results.verdict import count_groups, verdict
from testing.results import make_test

TESTS = (
    make_test("a", Status.PASSED),
    make_test("b", Status.XPASSED),
    make_test("c", Status.FLAKY),
    make_test("d", Status.XFAILED),
    make_test("e", Status.ERROR, Group.ERROR),
)


@pytest.mark.parametrize(
    ("flaky_passes", "core"),
    [
        (False, GroupCounts(passed=2, failed=1, skipped=1, total=4, flaky=1)),
        (True, GroupCounts(passed=3, failed=0, skipped=1, total=4, flaky=1)),
    ],
)
def test_counts_by_group_a_flaky_test_failing_unless_flaky_tests_pass(
    flaky_passes: bool, core: GroupCounts
) -> None:
    assert count_groups(TESTS, flaky_passes) == {
        Group.CORE: core,
        Group.FUNCTIONALITY: GroupCounts(),
        Group.ERROR: GroupCounts(failed=1, total=1),
        Group.REGRESSION: GroupCounts(),
    }


def test_a_run_with_a_failure_never_passes() -> None:
    groups = count_groups([make_test("a", Status.PASSED)], flaky_passes=False)
    assert verdict("core-cases", None, groups)
    assert not verdict("core-cases", Failure(FailureKind.TIMEOUT, "stopped"), groups)
