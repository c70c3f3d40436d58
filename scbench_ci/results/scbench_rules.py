"""SCBench 1.0's rules for a checkpoint's run (`--scbench 1.0`), beyond its tests' outcomes: its
inventory applied (`inventory.py`), and its `infrastructure_failure`, `pytest_collected` and
`test_collection_hash` as it computes them (`evaluation/pytest_runner.py` `PytestRunner.run` and
`evaluation/collection.py` `apply_collection_inventory`).

SCBench's run is an infrastructure failure when pytest exits with anything but 0 or 1, when its
output has no `collected N items` line (or 0) and no test was reported, and when it collected
more tests than it reported; with the inventory, also when a `--collect-only` pass failed and
when a test it collected was never reported. scbench-ci keeps its own distinction: whatever the
run's cause, the checkpoint fails with a kind that names it, and SCBench's flag is recorded
beside it (`ScbenchRecord`). But for one: without the inventory (a `-k` among the pytest
arguments), SCBench's `collected N items` counts the tests that `-k` deselected, so its flag is
set on every such run; its verdict (`PassPolicy.check`) does not read the flag, and neither is
the checkpoint failed for it here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scbench_ci.results.inventory import Inventory, apply_inventory, read_inventory
from scbench_ci.results.model import FailureKind, ScbenchRecord, TestResult
from scbench_ci.results.policy import counted

MISSING_INVENTORY = (
    "SCBench 1.0's inventory of the tests is missing or not the runner's (the run ended before "
    "they were collected, or something changed it): tests it would have collected and that were "
    "never reported are not counted"
)


@dataclass(frozen=True)
class Judged:
    tests: tuple[TestResult, ...]
    """The run's tests, the inventory applied when there is one."""
    record: ScbenchRecord
    failure: tuple[FailureKind, str] | None
    """What makes SCBench's flag true, when the run's own failures do not say it."""
    warning: str | None
    unreported: int = 0
    """Tests of the inventory the run never reported, now failed."""


def judge_by_1_0(
    tests: Sequence[TestResult],
    inventory_data: bytes | None,
    *,
    evaluated: str,
    exit_code: int,
    exit_codes: frozenset[int],
    inventory_expected: bool,
) -> Judged:
    """`tests`: the ones the sealed reports hold; `inventory_data`: the sealed inventory, None
    when there is none; `exit_codes`: pytest's exit codes that are no infrastructure failure."""
    found = read_inventory(inventory_data, evaluated) if inventory_data is not None else None
    inventory = found if isinstance(found, Inventory) else None
    warning = found if isinstance(found, str) else None
    if found is None and inventory_expected:
        warning = MISSING_INVENTORY
    reported = len(tests)
    collected = inventory.collected if inventory is not None else 0
    shown_collected = collected or reported
    reasons: list[str] = []
    if not collected and not reported:
        reasons.append("pytest collected no test and reported none")
    applied = inventory is not None and inventory.passes > 0
    # Without the inventory, the tests `-k` deselected: SCBench's flag, not a failure (above).
    deselected = not applied and inventory is not None and shown_collected > reported
    if shown_collected > reported and not deselected:
        reasons.append(
            f"pytest collected {counted(shown_collected, 'test')} and reported {reported}"
        )
    kind = FailureKind.UNREPORTED
    judged, pytest_collected, collection_hash = tuple(tests), shown_collected, None
    missing = 0
    if inventory is not None and applied:
        judged, missing = apply_inventory(tests, inventory)
        pytest_collected, collection_hash = len(inventory.tests), inventory.collection_hash
        if missing:
            reasons.insert(
                0,
                f"{counted(missing, 'test')} of SCBench 1.0's inventory never reported an "
                "outcome (the session ended before them, or left them out)",
            )
        if inventory.passes_failed:
            kind = FailureKind.COLLECTION
            reasons.insert(0, "a --collect-only pass of SCBench 1.0's inventory failed")
    infrastructure = exit_code not in exit_codes or bool(reasons) or deselected
    return Judged(
        tests=judged,
        record=ScbenchRecord(infrastructure, pytest_collected, collection_hash, applied),
        failure=(kind, "; ".join(reasons)) if reasons else None,
        warning=warning,
        unreported=missing,
    )
