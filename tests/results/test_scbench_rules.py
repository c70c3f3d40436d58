"""scbench_rules.py: SCBench 1.0's `infrastructure_failure`, `pytest_collected` and
`test_collection_hash` of a run, as its `PytestRunner.run` and `apply_collection_inventory`
compute them, and the failure kind scbench-ci gives what makes that flag true."""

from __future__ import annotations

import json

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.inventory import tc_hash
from scbench_ci.results.model import FailureKind, TestResult
from scbench_ci.results.scbench_rules import MISSING_INVENTORY, Judged, judge_by_1_0

OK_CODES = frozenset({0, 1})
FILE = ".evaluation_tests/test_checkpoint_1.py"


def _test(name: str, status: Status = Status.PASSED) -> TestResult:
    return TestResult(
        id=f"tests/test_checkpoint_1.py::{name}",
        checkpoint="checkpoint_1",
        group=Group.CORE,
        status=status,
        duration_s=0.1,
        markers=(),
        message=None,
        traceback=None,
        file="tests/test_checkpoint_1.py",
        line=1,
    )


def _inventory(ids: list[str], collected: int, exits: tuple[int, ...] = (0,)) -> bytes:
    passes = [
        {
            "marker": None,
            "keyword": "checkpoint_1",
            "exit": code,
            "ids": [f"{FILE}::{i}" for i in ids],
        }
        for code in exits
    ]
    document = {"collected": collected, "taken_by": "session", "reasons": [], "passes": passes}
    return json.dumps(document).encode()


def _judge(tests: tuple[TestResult, ...], data: bytes | None, exit_code: int = 0) -> Judged:
    return judge_by_1_0(
        tests,
        data,
        evaluated="checkpoint_1",
        exit_code=exit_code,
        exit_codes=OK_CODES,
        inventory_expected=True,
    )


def test_a_clean_run_is_no_infrastructure_failure_and_carries_the_hash() -> None:
    judged = _judge((_test("a"), _test("b")), _inventory(["a", "b"], 2))
    assert judged.failure is None and judged.unreported == 0
    assert judged.record.infrastructure_failure is False
    assert judged.record.pytest_collected == 2
    assert judged.record.collection_hash == tc_hash({"checkpoint_1-Core": ["a", "b"]})
    assert judged.record.inventory


def test_an_exit_code_other_than_0_or_1_is_scbench_s_infrastructure_failure() -> None:
    for code in (2, 3, 4, 5, 124, 137):
        judged = _judge((_test("a"),), _inventory(["a"], 1), exit_code=code)
        assert judged.record.infrastructure_failure, code
        # The run's own failure kinds say what it was: nothing added here.
        assert judged.failure is None


def test_a_killed_run_fails_every_collected_test_it_never_reported() -> None:
    judged = _judge((), _inventory(["a", "b"], 2), exit_code=137)
    assert [(t.id, t.status) for t in judged.tests] == [
        ("tests/test_checkpoint_1.py::a", Status.FAILED),
        ("tests/test_checkpoint_1.py::b", Status.FAILED),
    ]
    assert judged.unreported == 2 and judged.record.infrastructure_failure
    assert judged.failure is not None and judged.failure[0] is FailureKind.UNREPORTED


def test_more_collected_than_reported_is_unreported() -> None:
    judged = _judge((_test("a"),), _inventory(["a"], 3))
    assert judged.record.infrastructure_failure
    assert judged.failure == (FailureKind.UNREPORTED, "pytest collected 3 tests and reported 1")


def test_a_failed_pass_is_a_collection_failure() -> None:
    judged = _judge((_test("a"),), _inventory(["a"], 1, exits=(0, 4)))
    assert judged.record.infrastructure_failure
    assert judged.failure is not None and judged.failure[0] is FailureKind.COLLECTION


def test_nothing_collected_nor_reported_is_scbench_s_infrastructure_failure() -> None:
    judged = _judge((), _inventory([], 0), exit_code=1)
    assert judged.record.infrastructure_failure
    assert judged.failure == (FailureKind.UNREPORTED, "pytest collected no test and reported none")


def test_without_passes_a_k_filter_has_no_inventory_and_keeps_the_run_s_tests() -> None:
    """With `-k`, SCBench collects nothing: no hash, no backfill, the collected count is pytest's,
    and more collected than reported (the deselected ones) is its infrastructure failure. Its
    verdict does not read that flag: the checkpoint is not failed for it (a `-- -k test_a` failed
    every checkpoint, as unreported)."""
    data = json.dumps({"collected": 4, "taken_by": "session", "reasons": [], "passes": []})
    judged = _judge((_test("a"),), data.encode())
    assert not judged.record.inventory and judged.record.collection_hash is None
    assert judged.record.pytest_collected == 4 and judged.record.infrastructure_failure
    assert judged.failure is None
    assert [t.id for t in judged.tests] == ["tests/test_checkpoint_1.py::a"]


def test_a_missing_inventory_is_a_warning_not_a_guess() -> None:
    judged = _judge((_test("a"),), None)
    assert judged.warning == MISSING_INVENTORY
    assert not judged.record.inventory
    # No collected line known: the reported count stands for it, as in SCBench's run.
    assert judged.record.pytest_collected == 1 and not judged.record.infrastructure_failure
