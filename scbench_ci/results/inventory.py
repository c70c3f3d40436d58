"""SCBench 1.0's inventory of a checkpoint's tests (its `evaluation/collection.py`), read from
what the test runner sealed (`standalone/pytest_runner.InventoryTaker`), and applied to the
run's tests as SCBench 1.0 applies it.

- The inventory: every node id the passes without a marker printed (`-k <checkpoint>`, and
  `-k <prior>` for each prior checkpoint with prior tests); its checkpoint is the one its file
  names (`test_<name>.py`, else the evaluated one); its group Regression when that is not the
  evaluated checkpoint, else Error, Regression or Functionality when the `-m error`,
  `-m regression` or `-m functionality` pass printed it (in that order), else Core. A
  problem's own markers are not consulted. A pass that exited with anything but 0 or 5
  counts for nothing and makes the checkpoint an infrastructure failure.
- `test_collection_hash`: SHA-256 of the grouped ids, each group `<checkpoint>-<Group>` with its
  sorted ids, the groups sorted, as compact ASCII JSON (`compute_tc_hash`).
- Applied (`apply_collection_inventory`): a test the run reported takes the inventory's
  checkpoint and group; a test collected and never reported is a failed test; a test the run
  reported that is not in the inventory (an id with a space, a test no `-k` matched) keeps the
  run's; the inventory's come first, by node id, then the others in the run's order. Every test
  then counts in its group's total, a skipped one too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

from scbench_ci.job.reports import Status, problem_node_id
from scbench_ci.problem.model import Group
from scbench_ci.results.model import TestResult
from scbench_ci.trust.names import shown_test_id
from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse

COLLECTION_EXIT_CODES = frozenset({0, 5})
"""A pass that exits with one of these counts (5: it collected nothing)."""
MARKER_GROUPS = (("error", Group.ERROR), ("regression", Group.REGRESSION))
"""The marker passes that decide a group before Functionality, in SCBench's order."""
UNREPORTED = "collected, but never reported: the session ended before this test's outcome"
_LIMITS = JsonLimits(max_bytes=256 * 1024 * 1024, max_depth=8, max_items=1_000_000)
_MAX_PASSES = 10_000
_MAX_IDS = 1_000_000


@dataclass(frozen=True)
class CollectedTest:
    node_id: str
    """As pytest prints it: `.evaluation_tests/<file>::<name>`."""
    checkpoint: str
    group: Group

    @property
    def test_id(self) -> str:
        return self.node_id.split("::", 1)[1]


@dataclass(frozen=True)
class Inventory:
    tests: tuple[CollectedTest, ...]
    """By node id."""
    collection_hash: str
    passes_failed: bool
    """A pass exited with an exit code other than 0 or 5."""
    collected: int
    """The session's `collected N items`: every item collected, before any deselection."""
    taken_by: str
    """`session` (this run's own collection) or `passes` (SCBench's passes, run here)."""
    reasons: tuple[str, ...]
    """Why the passes were run, when they were."""
    passes: int
    """How many passes were taken (none with a `-k` filter: SCBench collects nothing then)."""


def read_inventory(data: bytes, evaluated: str) -> Inventory | str:
    """The inventory of the checkpoint `evaluated` from the runner's file; why there is none
    when its content is not the runner's shape (it is sealed, so that is a bug, not an attack,
    but parsing never raises)."""
    try:
        document = parse(data, _LIMITS)
        passes = [_checked_pass(one) for one in _list(document, "passes")[:_MAX_PASSES]]
        collected = document["collected"]
        taken_by = document["taken_by"]
        reasons = tuple(str(reason) for reason in _list(document, "reasons"))
    except (JsonError, KeyError, TypeError, ValueError) as error:
        return f"the inventory could not be read ({str(error)[:200]})"
    if type(collected) is not int or taken_by not in ("session", "passes"):
        return "the inventory could not be read (collected, taken_by)"
    return build_inventory(passes, evaluated, collected, taken_by, reasons)


def _list(document: Any, key: str) -> list[Any]:
    value = document[key]
    if not isinstance(value, list):
        raise TypeError(f"{key} is not a list")
    return value


def _checked_pass(one: Any) -> tuple[str | None, int, list[str]]:
    marker, exit_code, ids = one["marker"], one["exit"], one["ids"]
    if marker is not None and not isinstance(marker, str):
        raise TypeError("marker")
    if type(exit_code) is not int or not isinstance(ids, list):
        raise TypeError("exit, ids")
    return marker, exit_code, [node_id for node_id in ids[:_MAX_IDS] if isinstance(node_id, str)]


def build_inventory(
    passes: Iterable[tuple[str | None, int, list[str]]],
    evaluated: str,
    collected: int = 0,
    taken_by: str = "session",
    reasons: tuple[str, ...] = (),
) -> Inventory:
    """`passes`: (marker or None, exit code, node ids) of each pass, as `collect_checkpoint_tc`
    groups them."""
    by_marker: dict[str | None, set[str]] = {
        "error": set(),
        "functionality": set(),
        "regression": set(),
        None: set(),
    }
    failed = False
    count = 0
    for marker, exit_code, ids in passes:
        count += 1
        if exit_code not in COLLECTION_EXIT_CODES:
            failed = True
        elif marker in by_marker:
            by_marker[marker].update(ids)
    tests = tuple(_collected(node_id, evaluated, by_marker) for node_id in sorted(by_marker[None]))
    grouped = grouped_ids(tests)
    return Inventory(tests, tc_hash(grouped), failed, collected, taken_by, reasons, count)


def _collected(
    node_id: str, evaluated: str, by_marker: dict[str | None, set[str]]
) -> CollectedTest:
    checkpoint = checkpoint_of_file(node_id.split("::", 1)[0]) or evaluated
    if checkpoint != evaluated:
        group = Group.REGRESSION
    else:
        group = next(
            (group for marker, group in MARKER_GROUPS if node_id in by_marker[marker]),
            Group.FUNCTIONALITY if node_id in by_marker["functionality"] else Group.CORE,
        )
    return CollectedTest(node_id, checkpoint, group)


def checkpoint_of_file(file: str) -> str | None:
    """The checkpoint a test file's name says (`test_<name>.py`), wherever it is."""
    name = PurePosixPath(file).name
    if not name.startswith("test_") or not name.endswith(".py"):
        return None
    return name.removeprefix("test_").removesuffix(".py")


def grouped_ids(tests: Iterable[CollectedTest]) -> dict[str, list[str]]:
    grouped: dict[str, set[str]] = {}
    for test in tests:
        grouped.setdefault(f"{test.checkpoint}-{test.group.value}", set()).add(test.test_id)
    return {key: sorted(ids) for key, ids in sorted(grouped.items())}


def tc_hash(grouped: dict[str, list[str]]) -> str:
    """SCBench 1.0's `compute_tc_hash`."""
    canonical = [{"group": key, "ids": sorted(set(grouped[key]))} for key in sorted(grouped)]
    encoded = json.dumps(canonical, ensure_ascii=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def apply_inventory(
    tests: Sequence[TestResult], inventory: Inventory
) -> tuple[tuple[TestResult, ...], int]:
    """The run's tests as SCBench 1.0 has them once its inventory is applied, and how many were
    collected but never reported."""
    reported = {test.id: test for test in tests}
    merged: list[TestResult] = []
    missing = 0
    for collected in inventory.tests:
        test_id = shown_test_id(problem_node_id(collected.node_id))
        found = reported.pop(test_id, None)
        if found is None:
            missing += 1
            merged.append(_unreported(test_id, collected))
        else:
            merged.append(replace(found, checkpoint=collected.checkpoint, group=collected.group))
    merged.extend(test for test in tests if test.id in reported)
    return tuple(merged), missing


def _unreported(test_id: str, collected: CollectedTest) -> TestResult:
    return TestResult(
        id=test_id,
        checkpoint=collected.checkpoint,
        group=collected.group,
        status=Status.FAILED,
        duration_s=0.0,
        markers=(),
        message=UNREPORTED,
        traceback=None,
        file=test_id.split("::", 1)[0],
        line=None,
    )
