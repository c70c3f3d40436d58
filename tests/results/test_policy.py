import json
from pathlib import Path

import pytest

from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.policy import GroupCounts

SCBENCH_TABLE = Path(__file__).parents[1] / "data/scbench/policy_table.json"
"""SCBench's own `PassPolicy.check` and `CorrectnessResults.passes_policy` run over a grid of
counts; how it was made: its "command", and scripts/scbench_policy_table.py."""


def _counts(**groups: tuple[int, int, int]) -> dict[Group, GroupCounts]:
    """Each group as (passed, failed, skipped)."""
    result = {group: GroupCounts() for group in Group}
    for name, (passed, failed, skipped) in groups.items():
        result[Group(name)] = GroupCounts(passed, failed, skipped, passed + failed + skipped)
    return result


def _table_rows() -> list[dict]:
    return json.loads(SCBENCH_TABLE.read_text())["rows"]


def test_the_policies_are_scbenchs_seven() -> None:
    assert set(policy.POLICY_NAMES) == set(_table_rows()[0]["check"])
    assert len(policy.POLICY_NAMES) == 7


@pytest.mark.parametrize("not_passed", ["failed", "skipped"])
def test_every_policy_decides_as_scbenchs_pass_policy_check(not_passed: str) -> None:
    """Every row of SCBench's table, a test that did not pass counted once as failed and once
    as skipped (SCBench sees only passed and total, so both must give its outcome)."""
    rows = _table_rows()
    assert len(rows) == 256
    mismatches = []
    for row in rows:
        counts = {
            Group(name): GroupCounts(passed=passed, total=total, **{not_passed: total - passed})
            for name, (passed, total) in row["counts"].items()
        }
        for name, expected in row["check"].items():
            if policy.passes(name, counts) is not expected:
                mismatches.append((name, row["counts"], expected))
    assert mismatches == []


def test_scbenchs_other_implementation_differs_only_without_core_tests() -> None:
    """Why the verdict follows `PassPolicy.check`: `passes_policy` (which no SCBench output
    uses) disagrees with it only on `core-cases` without Core tests, which check passes."""
    differing = [
        (name, row["counts"]["Core"])
        for row in _table_rows()
        for name, outcome in row["passes_policy"].items()
        if outcome != row["check"][name]
    ]
    assert differing
    assert {(name, tuple(core)) for name, core in differing} == {("core-cases", (0, 0))}
    assert policy.passes("core-cases", _counts(Functionality=(2, 0, 0)))


def test_a_skipped_core_test_fails_core_cases() -> None:
    skipped = _counts(Core=(3, 0, 1))
    assert not policy.passes("core-cases", skipped)
    assert not policy.passes("all-core-cases", skipped)
    assert policy.passes("any-core-cases", skipped)
    assert policy.shortfall("core-cases", skipped) == (
        "1 Core test skipped or xfailed (SCBench counts a skipped or xfailed test as not passed)"
    )


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
        "any-core-cases": set(),
        "all-core-cases": {Group.CORE},
    }


NOTHING_PASSES = _counts(Core=(0, 0, 2))


@pytest.mark.parametrize(
    ("name", "counts", "expected"),
    [
        ("core-cases", _counts(Core=(3, 0, 0)), None),
        ("core-cases", _counts(Functionality=(2, 0, 0)), None),
        ("core-cases", _counts(Core=(2, 1, 0)), "1 Core test failed"),
        ("core-cases", _counts(Core=(0, 3, 0)), "3 Core tests failed"),
        (
            "core-cases",
            _counts(Core=(0, 1, 2)),
            "1 Core test failed, 2 Core tests skipped or xfailed "
            "(SCBench counts a skipped or xfailed test as not passed)",
        ),
        (
            "all-non-error-cases",
            _counts(Core=(1, 2, 0), Functionality=(0, 1, 0), Error=(0, 4, 0)),
            "2 Core tests failed, 1 Functionality test failed",
        ),
        (
            "all-non-error-cases",
            _counts(Core=(3, 0, 0), Regression=(0, 1, 0)),
            "1 Regression test failed",
        ),
        ("all-cases", _counts(Core=(3, 0, 0), Error=(0, 2, 0)), "2 Error tests failed"),
        ("any-case", NOTHING_PASSES, "no test passed (policy any-case needs at least one)"),
        (
            "any-core-cases",
            _counts(Core=(0, 1, 0), Functionality=(2, 0, 0)),
            "no Core test passed (policy any-core-cases needs at least one)",
        ),
        ("any", _counts(), None),
    ],
)
def test_each_policy_says_why_counts_fail_it(
    name: str, counts: dict[Group, GroupCounts], expected: str | None
) -> None:
    assert policy.shortfall(name, counts) == expected
