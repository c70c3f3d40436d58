"""inventory.py: SCBench 1.0's inventory, built from its passes' node ids as its
`collect_checkpoint_tc` builds it, hashed as its `compute_tc_hash`, and applied to a run's tests
as its `apply_collection_inventory`."""

from __future__ import annotations

import hashlib
import json

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.inventory import (
    UNREPORTED,
    apply_inventory,
    build_inventory,
    checkpoint_of_file,
    grouped_ids,
    read_inventory,
    tc_hash,
)
from scbench_ci.results.model import TestResult

OWN = ".evaluation_tests/test_checkpoint_2.py"
PRIOR = ".evaluation_tests/test_checkpoint_1.py"


def _reported(name: str, status: Status, group: Group) -> TestResult:
    return TestResult(
        id=f"tests/test_checkpoint_2.py::{name}",
        checkpoint="checkpoint_2",
        group=group,
        status=status,
        duration_s=0.1,
        markers=(),
        message=None,
        traceback=None,
        file="tests/test_checkpoint_2.py",
        line=3,
    )


def _passes(**by_marker: list[str]) -> list[tuple[str | None, int, list[str]]]:
    everything = sorted({node for ids in by_marker.values() for node in ids})
    return [
        ("error", 0, by_marker.get("error", [])),
        ("functionality", 0, by_marker.get("functionality", [])),
        ("regression", 0, by_marker.get("regression", [])),
        (None, 0, everything),
    ]


def test_groups_come_from_provenance_then_the_marker_passes_in_scbench_s_order() -> None:
    inventory = build_inventory(
        _passes(
            error=[f"{OWN}::err", f"{OWN}::both", f"{PRIOR}::old_error"],
            regression=[f"{OWN}::reg", f"{OWN}::both"],
            functionality=[f"{OWN}::func", f"{OWN}::reg"],
            core=[
                f"{OWN}::plain",
                ".evaluation_tests/sub/test_x.py::t",
                ".evaluation_tests/h.py::h",
            ],
        ),
        "checkpoint_2",
    )
    found = {test.node_id: (test.checkpoint, test.group) for test in inventory.tests}
    assert found == {
        f"{OWN}::err": ("checkpoint_2", Group.ERROR),
        f"{OWN}::both": ("checkpoint_2", Group.ERROR),
        f"{OWN}::reg": ("checkpoint_2", Group.REGRESSION),
        f"{OWN}::func": ("checkpoint_2", Group.FUNCTIONALITY),
        f"{OWN}::plain": ("checkpoint_2", Group.CORE),
        # The file says whose test it is, wherever it is: a Regression, whatever its marks.
        f"{PRIOR}::old_error": ("checkpoint_1", Group.REGRESSION),
        ".evaluation_tests/sub/test_x.py::t": ("x", Group.REGRESSION),
        # Not a `test_<name>.py` file: the evaluated checkpoint's.
        ".evaluation_tests/h.py::h": ("checkpoint_2", Group.CORE),
    }
    assert [test.node_id for test in inventory.tests] == sorted(found)
    assert not inventory.passes_failed and inventory.passes == 4


def test_only_the_passes_without_a_marker_say_which_tests_there_are() -> None:
    inventory = build_inventory(
        [("error", 0, [f"{OWN}::only_marked"]), (None, 0, [f"{OWN}::a"])], "checkpoint_2"
    )
    assert [test.node_id for test in inventory.tests] == [f"{OWN}::a"]


def test_a_failed_pass_counts_for_nothing_and_is_said() -> None:
    inventory = build_inventory(
        [("error", 2, [f"{OWN}::a"]), (None, 0, [f"{OWN}::a"]), (None, 5, [])], "checkpoint_2"
    )
    assert inventory.passes_failed
    assert [test.group for test in inventory.tests] == [Group.CORE]


def test_the_hash_is_scbench_s_compute_tc_hash() -> None:
    grouped = {"checkpoint_2-Core": ["b", "a", "a"], "checkpoint_1-Regression": ["z"]}
    canonical = [
        {"group": "checkpoint_1-Regression", "ids": ["z"]},
        {"group": "checkpoint_2-Core", "ids": ["a", "b"]},
    ]
    encoded = json.dumps(canonical, separators=(",", ":")).encode()
    assert tc_hash(grouped) == hashlib.sha256(encoded).hexdigest()
    # Of no test at all: the hash of `[]`.
    assert tc_hash({}) == hashlib.sha256(b"[]").hexdigest()


def test_grouped_ids_are_the_ids_after_the_file() -> None:
    inventory = build_inventory(_passes(core=[f"{OWN}::TestA::test_b[x]"]), "checkpoint_2")
    assert grouped_ids(inventory.tests) == {"checkpoint_2-Core": ["TestA::test_b[x]"]}
    assert inventory.collection_hash == tc_hash({"checkpoint_2-Core": ["TestA::test_b[x]"]})


def test_checkpoint_of_a_file_is_its_name_between_test_and_py() -> None:
    assert checkpoint_of_file(".evaluation_tests/test_checkpoint_10.py") == "checkpoint_10"
    assert checkpoint_of_file(".evaluation_tests/a/test_b.py") == "b"
    assert checkpoint_of_file(".evaluation_tests/conftest.py") is None
    assert checkpoint_of_file(".evaluation_tests/b_test.py") is None


def test_applied_the_inventory_decides_groups_fails_what_never_came_and_keeps_the_rest() -> None:
    inventory = build_inventory(
        _passes(error=[f"{OWN}::b"], core=[f"{OWN}::a", f"{OWN}::c"]), "checkpoint_2"
    )
    reported = (
        _reported("spaced id", Status.PASSED, Group.FUNCTIONALITY),
        _reported("b", Status.SKIPPED, Group.CORE),
        _reported("a", Status.PASSED, Group.FUNCTIONALITY),
    )
    merged, missing = apply_inventory(reported, inventory)
    assert missing == 1
    assert [(t.id.split("::")[1], t.group, t.status) for t in merged] == [
        ("a", Group.CORE, Status.PASSED),
        ("b", Group.ERROR, Status.SKIPPED),
        ("c", Group.CORE, Status.FAILED),
        # Reported and not collected (an id with a space): kept as the run has it, last.
        ("spaced id", Group.FUNCTIONALITY, Status.PASSED),
    ]
    unreported = merged[2]
    assert (unreported.message, unreported.duration_s, unreported.file) == (
        UNREPORTED,
        0.0,
        "tests/test_checkpoint_2.py",
    )


def test_the_runner_s_file_is_read_strictly() -> None:
    document = {
        "collected": 3,
        "taken_by": "session",
        "reasons": [],
        "passes": [{"marker": None, "keyword": "checkpoint_2", "exit": 0, "ids": [f"{OWN}::a"]}],
    }
    inventory = read_inventory(json.dumps(document).encode(), "checkpoint_2")
    assert not isinstance(inventory, str)
    assert (inventory.collected, inventory.taken_by, len(inventory.tests)) == (3, "session", 1)
    for broken in (
        b"not json",
        b"[]",
        json.dumps({**document, "collected": "3"}).encode(),
        json.dumps({**document, "passes": [{"marker": 1, "exit": 0, "ids": []}]}).encode(),
        json.dumps({**document, "taken_by": "someone"}).encode(),
        b'{"passes": ' + b"[" * 100 + b"]" * 100 + b"}",
    ):
        assert isinstance(read_inventory(broken, "checkpoint_2"), str), broken[:40]
