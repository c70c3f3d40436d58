"""A history as results.json holds it, and back.

Compact: each checkpoint's test ids are listed once for the whole history (`tests`, in the order
they were first seen), and each run's record gives, per checkpoint, one letter per listed id
(`outcomes`: STATUS_LETTERS, `-` for a test it did not run) and, when its code quality was
measured, its verbosity and erosion (`quality`). The schema bounds its types and
lengths; `check_history` what a schema cannot say (dates, counts that add up, outcomes as long
as their ids, ids given once, the whole within MAX_BYTES).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.file_checks import date
from scbench_ci.results.history_model import (
    MAX_BYTES,
    MAX_CHECKPOINTS,
    MAX_TESTS,
    CheckpointRecord,
    History,
    RunRecord,
    keeps,
)
from scbench_ci.results.policy import GroupCounts
from scbench_ci.trust.strict_json import JsonError, join

STATUS_LETTERS = {
    Status.PASSED: "P",
    Status.FAILED: "F",
    Status.ERROR: "E",
    Status.SKIPPED: "S",
    Status.XFAILED: "x",
    Status.XPASSED: "X",
    Status.FLAKY: "R",
}
NOT_RUN = "-"
_STATUSES = {letter: status for status, letter in STATUS_LETTERS.items()}


def history_to_json(history: History) -> dict[str, Any]:
    ids: dict[str, dict[str, None]] = {}
    for run in history.runs:
        for key, checkpoint in run.checkpoints.items():
            ids.setdefault(key, {}).update(dict.fromkeys(checkpoint.outcomes))
    return {
        "window": history.window,
        "tests": {key: list(tests) for key, tests in ids.items()},
        "runs": [_run_json(run, ids) for run in history.runs],
    }


def _run_json(run: RunRecord, ids: Mapping[str, Mapping[str, None]]) -> dict[str, Any]:
    return {
        "started_at": run.started_at,
        "commit": run.commit,
        "checkpoints": {
            key: {
                "passed": checkpoint.passed,
                "groups": {group.value: _counts_json(checkpoint.groups[group]) for group in Group},
                "outcomes": "".join(
                    STATUS_LETTERS[checkpoint.outcomes[test]]
                    if test in checkpoint.outcomes
                    else NOT_RUN
                    for test in ids[key]
                ),
                **({"fingerprint": checkpoint.fingerprint} if checkpoint.fingerprint else {}),
                **_quality_json(checkpoint),
            }
            for key, checkpoint in run.checkpoints.items()
        },
    }


def _quality_json(checkpoint: CheckpointRecord) -> dict[str, Any]:
    """`quality: {verbosity, erosion}` when the checkpoint was measured, else nothing."""
    if checkpoint.verbosity is None or checkpoint.erosion is None:
        return {}
    return {"quality": {"verbosity": checkpoint.verbosity, "erosion": checkpoint.erosion}}


def _counts_json(counts: GroupCounts) -> dict[str, int]:
    return {
        "passed": counts.passed,
        "failed": counts.failed,
        "skipped": counts.skipped,
        "total": counts.total,
    }


def encoded_size(document: Mapping[str, Any]) -> int:
    """The bytes of a history's JSON, as MAX_BYTES counts them (compact, UTF-8)."""
    return len(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode())


def fits(history: History) -> bool:
    """Whether results.json can hold the history: no more runs than its window, checkpoints
    than MAX_CHECKPOINTS and ids of a checkpoint than MAX_TESTS over all its runs (the schema's
    caps), and MAX_BYTES."""
    document = history_to_json(history)
    tests = document["tests"]
    return (
        len(history.runs) <= history.window
        and len(tests) <= MAX_CHECKPOINTS
        and all(len(ids) <= MAX_TESTS for ids in tests.values())
        and encoded_size(document) <= MAX_BYTES
    )


def check_history(document: Mapping[str, Any], where: str) -> None:
    """A JsonError at the first value of a history (that passed the schema) that cannot be."""
    size = encoded_size(document)
    if size > MAX_BYTES:
        raise JsonError(where, f"{size} bytes of history, more than the {MAX_BYTES} allowed")
    runs = document["runs"]
    if len(runs) > document["window"]:
        raise JsonError(
            f"{where}.runs", f"{len(runs)} runs, more than its window of {document['window']}"
        )
    tests = document["tests"]
    for key, ids in tests.items():
        _printable(key, join(f"{where}.tests", key))
        problem, _, checkpoint = key.rpartition("/")
        if not problem or not checkpoint:
            raise JsonError(join(f"{where}.tests", key), "not a `problem/checkpoint` key")
        seen: set[str] = set()
        for number, test in enumerate(ids):
            at = f"{join(f'{where}.tests', key)}[{number}]"
            _printable(test, at)
            if test in seen:
                raise JsonError(at, "given twice")
            seen.add(test)
    for index, run in enumerate(runs):
        at = f"{where}.runs[{index}]"
        date(run["started_at"], f"{at}.started_at")
        for key, checkpoint in run["checkpoints"].items():
            place = join(f"{at}.checkpoints", key)
            if key not in tests:
                raise JsonError(place, f"no test ids are listed for it in {where}.tests")
            if len(checkpoint["outcomes"]) != len(tests[key]):
                raise JsonError(
                    f"{place}.outcomes",
                    f"{len(checkpoint['outcomes'])} outcomes for {len(tests[key])} test ids",
                )
            for group, counts in checkpoint["groups"].items():
                _check_counts(counts, f"{place}.groups.{group}")


def _printable(text: str, where: str) -> None:
    if not keeps(text):
        raise JsonError(where, "holds a character that is not printable")


def _check_counts(counts: Mapping[str, int], where: str) -> None:
    added = counts["passed"] + counts["failed"] + counts["skipped"]
    if added != counts["total"]:
        raise JsonError(
            f"{where}.total",
            f"{counts['total']}, but passed + failed + skipped = {added}",
        )


def history_from_json(document: Mapping[str, Any]) -> History:
    """The inverse of `history_to_json`, of a document `check_history` passed."""
    tests = document["tests"]
    return History(
        window=document["window"],
        runs=tuple(
            RunRecord(
                started_at=run["started_at"],
                commit=run["commit"],
                checkpoints={
                    key: CheckpointRecord(
                        passed=checkpoint["passed"],
                        groups={
                            Group(name): GroupCounts(
                                counts["passed"],
                                counts["failed"],
                                counts["skipped"],
                                counts["total"],
                            )
                            for name, counts in checkpoint["groups"].items()
                        },
                        outcomes={
                            test: _STATUSES[letter]
                            for test, letter in zip(tests[key], checkpoint["outcomes"], strict=True)
                            if letter != NOT_RUN
                        },
                        fingerprint=checkpoint.get("fingerprint"),
                        verbosity=checkpoint["quality"]["verbosity"]
                        if "quality" in checkpoint
                        else None,
                        erosion=checkpoint["quality"]["erosion"]
                        if "quality" in checkpoint
                        else None,
                    )
                    for key, checkpoint in run["checkpoints"].items()
                },
            )
            for run in document["runs"]
        ),
    )
