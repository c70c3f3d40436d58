import pytest

from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.policy import GroupCounts


def _counts(**groups: tuple[int, int, int]) -> dict[Group, GroupCounts]:
    """Each group as (passed, failed, skipped)."""
    result = {group: GroupCounts() for group in Group}
    for name, (passed, failed, skipped) in groups.items():
        result[Group(name)] = GroupCounts(passed, failed, skipped, passed + failed + skipped)
    return result


ALL_PASS = _counts(Core=(3, 0, 0), Functionality=(2, 0, 1), Error=(1, 0, 0))
ERROR_FAILS = _counts(Core=(3, 0, 0), Functionality=(2, 0, 0), Error=(0, 2, 0))
FUNCTIONALITY_FAILS = _counts(Core=(3, 0, 0), Functionality=(1, 1, 0))
REGRESSION_FAILS = _counts(Core=(3, 0, 0), Regression=(0, 1, 0))
CORE_FAILS = _counts(Core=(2, 1, 0), Functionality=(2, 0, 0))
NO_CORE = _counts(Functionality=(2, 0, 0))
NOTHING_PASSES = _counts(Core=(0, 0, 2))
EMPTY = _counts()


@pytest.mark.parametrize(
    ("name", "counts", "expected"),
    [
        ("core-cases", ALL_PASS, True),
        ("core-cases", ERROR_FAILS, True),
        ("core-cases", FUNCTIONALITY_FAILS, True),
        ("core-cases", CORE_FAILS, False),
        ("core-cases", NO_CORE, False),
        ("core-cases", EMPTY, False),
        ("all-non-error-cases", ERROR_FAILS, True),
        ("all-non-error-cases", FUNCTIONALITY_FAILS, False),
        ("all-non-error-cases", REGRESSION_FAILS, False),
        ("all-non-error-cases", EMPTY, False),
        ("all-cases", ALL_PASS, True),
        ("all-cases", ERROR_FAILS, False),
        ("all-cases", NOTHING_PASSES, False),
        ("any-case", CORE_FAILS, True),
        ("any-case", NOTHING_PASSES, False),
        ("any", NOTHING_PASSES, True),
        ("any", EMPTY, True),
    ],
)
def test_policies(name: str, counts: dict[Group, GroupCounts], expected: bool) -> None:
    assert policy.passes(name, counts) is expected


def test_pass_rate() -> None:
    assert GroupCounts(passed=1, failed=1, skipped=1, total=3).pass_rate == 0.3333
    assert GroupCounts().pass_rate is None


def test_the_groups_whose_failures_each_policy_counts() -> None:
    assert {name: policy.counted_failures(name) for name in policy.POLICY_NAMES} == {
        "core-cases": {Group.CORE},
        "all-non-error-cases": {Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION},
        "all-cases": set(Group),
        "any-case": set(),
        "any": set(),
    }


@pytest.mark.parametrize(
    ("name", "counts", "expected"),
    [
        ("core-cases", ALL_PASS, None),
        ("core-cases", NO_CORE, "no Core tests (policy core-cases needs at least one)"),
        ("core-cases", EMPTY, "no Core tests (policy core-cases needs at least one)"),
        ("core-cases", CORE_FAILS, "1 Core test failed"),
        ("core-cases", _counts(Core=(0, 3, 0)), "3 Core tests failed"),
        (
            "all-non-error-cases",
            _counts(Core=(1, 2, 0), Functionality=(0, 1, 0), Error=(0, 4, 0)),
            "2 Core tests failed, 1 Functionality test failed",
        ),
        ("all-non-error-cases", REGRESSION_FAILS, "1 Regression test failed"),
        (
            "all-non-error-cases",
            NOTHING_PASSES,
            "no test passed (policy all-non-error-cases needs at least one)",
        ),
        ("all-cases", ERROR_FAILS, "2 Error tests failed"),
        ("all-cases", NOTHING_PASSES, "no test passed (policy all-cases needs at least one)"),
        ("any-case", NOTHING_PASSES, "no test passed (policy any-case needs at least one)"),
        ("any", EMPTY, None),
    ],
)
def test_each_policy_says_why_counts_fail_it(
    name: str, counts: dict[Group, GroupCounts], expected: str | None
) -> None:
    assert policy.shortfall(name, counts) == expected
