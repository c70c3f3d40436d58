"""shards.py: what each shard is told, and the shards' runs merged into one run, or refused
when they do not add up to one collection."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.job.reports import Reports, ShardRecord, Status
from scbench_ci.pipeline.shards import (
    MAX_WEIGHTS_CHARS,
    MergedRun,
    ShardRun,
    merge_shards,
    most_units,
    named_failure,
    shard_argument,
    unit_weights,
    unshardable,
    workspace_node_id,
)
from scbench_ci.results.model import Failure, FailureKind
from scbench_ci.standalone.pytest_runner import SHARD_OPTION, take_shard
from scbench_ci.trust.seal import Broken, Seal
from testing.results import make_execution, make_outcome

COLLECTION = ("a", "b", "c", "d", "e")
"""The tests of the collection, in the order one session runs them."""
SEALED = Seal(killed=0)


def _ids(*names: str) -> tuple[str, ...]:
    return tuple(f"tests/test_checkpoint_1.py::{name}" for name in names)


def _shard(
    index: int, count: int, *names: str, code: int = 0, seal: Seal | Broken = SEALED
) -> ShardRun:
    tests = tuple(make_outcome(name, Status.PASSED) for name in names)
    record = ShardRecord(index, count, _ids(*COLLECTION))
    reports = Reports(tests, code, (), (), record)
    return ShardRun(make_execution(code), seal, reports, Path(f"/logs/{index}"))


def _merged(*runs: ShardRun) -> MergedRun:
    merged = merge_shards(runs, 60.0)
    assert isinstance(merged, MergedRun), merged
    return merged


def test_the_shards_tests_are_the_collections_in_its_order() -> None:
    merged = _merged(_shard(1, 2, "b", "d", "e"), _shard(2, 2, "a", "c", code=1))
    assert isinstance(merged.reports, Reports)
    assert [test.node_id for test in merged.reports.tests] == list(_ids(*COLLECTION))
    assert merged.reports.exit_code == merged.execution.exit_code == 1
    assert merged.deciding is None and merged.seal == Seal(0)


def test_a_shard_dealt_nothing_is_left_out() -> None:
    empty = _shard(3, 3, code=5)
    merged = _merged(_shard(1, 3, "a", "b", "c"), _shard(2, 3, "d", "e"), empty)
    assert merged.execution.exit_code == 0 and merged.deciding is None


def test_the_first_failing_shard_is_the_checkpoints_failure() -> None:
    timed_out = replace(
        _shard(2, 3, "c", "d"), execution=make_execution(None, timed_out_in="tests")
    )
    unsealed = _shard(3, 3, "e", seal=Broken.UNSEALED)
    merged = _merged(_shard(1, 3, "a", "b", code=1), timed_out, unsealed)
    assert merged.deciding == 2 and merged.execution.timed_out_in == "tests"
    failure = named_failure(Failure(FailureKind.TIMEOUT, "the session timeout"), 2, 3)
    assert failure.message == "shard 2 of 3: the session timeout"


def test_when_every_shard_collected_nothing_the_first_says_so() -> None:
    nothing = [
        ShardRun(make_execution(5), Seal(0), Reports((), 5, (), (), ShardRecord(k, 2, ())), Path())
        for k in (1, 2)
    ]
    merged = _merged(*nothing)
    assert merged.deciding == 1 and merged.execution.exit_code == 5


@pytest.mark.parametrize(
    ("runs", "reason"),
    [
        (
            [_shard(1, 2, "a", "b", "c"), _shard(2, 2, "c", "d", "e")],
            "tests/test_checkpoint_1.py::c ran in shards 1 and 2",
        ),
        (
            [_shard(1, 2, "a", "b"), _shard(2, 2, "d", "e")],
            "collected but reported by no shard: tests/test_checkpoint_1.py::c",
        ),
        (
            [_shard(1, 2, "a", "b", "c"), _shard(2, 2, "d", "e", "f")],
            "reported but not collected: tests/test_checkpoint_1.py::f",
        ),
        (
            [_shard(1, 2, "a", "b", "c"), _shard(1, 2, "d", "e")],
            "shard 2's report does not say it ran shard 2 of 2",
        ),
    ],
)
def test_shards_that_are_not_one_collection_dealt_once_are_refused(
    runs: list[ShardRun], reason: str
) -> None:
    assert merge_shards(runs, 60.0) == reason


def test_shards_that_collected_different_tests_are_refused() -> None:
    first, second = _shard(1, 2, "a", "b", "c"), _shard(2, 2, "d", "e")
    assert isinstance(second.reports, Reports) and second.reports.shard is not None
    other = replace(second.reports.shard, items=_ids("a", "b", "c", "d", "x"))
    second = replace(second, reports=replace(second.reports, shard=other))
    reason = merge_shards([first, second], 60.0)
    assert reason == (
        "shards 1 and 2 collected different tests (tests/test_checkpoint_1.py::e, "
        "tests/test_checkpoint_1.py::x): the collection changes from one session to the next"
    )


def test_a_units_weight_is_its_tests_seconds_under_every_name_it_may_have() -> None:
    weights = unit_weights(
        {
            "tests/test_checkpoint_1.py::test_a[x::y]": 1.0,
            "tests/test_checkpoint_1.py::TestK::test_b": 2.0,
            "tests/test_checkpoint_1.py::TestK::Inner::test_c": 0.5,
            "tests/sub/test_checkpoint_2.py::test_d": 4.0,
        }
    )
    assert weights == {
        ".evaluation_tests/": 3.5,
        ".evaluation_tests/test_checkpoint_1.py": 3.5,
        ".evaluation_tests/test_checkpoint_1.py::": 1.0,
        ".evaluation_tests/test_checkpoint_1.py::TestK": 2.5,
        ".evaluation_tests/sub/": 4.0,
        ".evaluation_tests/sub/test_checkpoint_2.py": 4.0,
        ".evaluation_tests/sub/test_checkpoint_2.py::": 4.0,
    }
    assert workspace_node_id("elsewhere.py::t") == "elsewhere.py::t"


def test_the_runner_reads_what_a_shard_is_told() -> None:
    argument = shard_argument(2, 3, {".evaluation_tests/a.py": 1.5})
    assert take_shard([argument]) == (
        [],
        {"index": 2, "count": 3, "weights": {".evaluation_tests/a.py": 1.5}, "warm_up": []},
    )
    with pytest.raises(ValueError):
        shard_argument(3, 2, {})


def test_weights_too_many_for_one_argument_are_told_by_file() -> None:
    many = {f".evaluation_tests/a.py::Test{n:05}": 1.0 for n in range(5000)}
    argument = shard_argument(1, 2, {**many, ".evaluation_tests/a.py": 5000.0})
    assert len(argument) <= len(SHARD_OPTION) + MAX_WEIGHTS_CHARS
    told = json.loads(argument[len(SHARD_OPTION) :])
    assert told["weights"] == {".evaluation_tests/a.py": 5000.0}


def test_options_that_order_the_tests_are_not_sharded() -> None:
    assert unshardable(["-k", "parse", "-m", "slow", "-vv"]) is None
    for arg in ("-x", "-vx", "--exitfirst", "--maxfail=2", "--sw", "--lf", "--ff"):
        assert unshardable(["-q", arg]) is not None, arg


def test_the_units_a_test_file_can_hold_are_its_classes_and_the_rest() -> None:
    sources = [b"def test_a(): pass\n", b"class TestA:\n    pass\nclass TestB:\n    pass\n"]
    assert most_units(sources) == 4


def _inventory(taken_by: str, ids: tuple[str, ...]) -> bytes:
    passes = [{"marker": None, "keyword": "checkpoint_1", "exit": 0, "ids": list(ids)}]
    return json.dumps({"collected": 5, "taken_by": taken_by, "reasons": [], "passes": passes})


def test_the_shards_one_inventory_is_the_checkpoints() -> None:
    """Each shard's runner takes SCBench 1.0's inventory of the whole collection: alike (however
    each took it), it is the checkpoint's; else the shards are not one run."""
    whole = _ids(*COLLECTION)
    first = replace(_shard(1, 2, "b", "d", "e"), inventory=_inventory("session", whole).encode())
    second = replace(_shard(2, 2, "a", "c"), inventory=_inventory("passes", whole).encode())
    assert _merged(first, second).inventory == first.inventory
    part = replace(second, inventory=_inventory("session", _ids("a", "c")).encode())
    assert merge_shards([first, part], 60.0) == "the shards' inventories of the tests differ"
    nested = replace(second, inventory=b"[" * 100_000)
    assert merge_shards([first, nested], 60.0) == (
        "a shard's inventory of the tests is missing or unreadable"
    )
