"""What the schema cannot say about a results.json: the values that cannot be true.

Run on a document that passed the schema (in the current version's shape): names that are
printable and bounded (trust/names.py; the schema's pattern cannot say all of it, and an earlier
version's schema said none of it), dates that parse, durations that are plausible, counts that
add up, test ids given once, a checkpoint without a failure whose pytest ended as a run of tests
does. Each check raises a `JsonError` naming the
JSON path of the first bad value. Whether the counts agree with the tests listed, and every
verdict, is the reader's to derive (`results.file`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from scbench_ci.job.reports import MAX_DURATION_S, MAX_LINE, MAX_RERUNS
from scbench_ci.trust.names import (
    MAX_CHECKPOINT_NAME_CHARS,
    MAX_PROBLEM_NAME_CHARS,
    MAX_TEST_ID_CHARS,
    name_problem,
)
from scbench_ci.trust.strict_json import JsonError, join

MIN_YEAR, MAX_YEAR = 1970, 9000
"""Dates outside are not a run's (and a duration added to them could overflow)."""
COMPLETED_EXIT_CODES = (0, 1)
"""pytest's exit codes for a session that ran its tests: any other one is a failure's."""
COMPARISON_LISTS = ("regressions", "fixed", "new", "removed", "flaky")


def check_run(document: Mapping[str, Any]) -> None:
    date(document["started_at"], "started_at")
    duration(document["duration_s"], "duration_s")
    unique((p["name"] for p in document["problems"]), "problems", "name")
    for index, problem in enumerate(document["problems"]):
        where = f"problems[{index}]"
        _problem_name(problem["name"], f"{where}.name")
        for number, name in enumerate(problem["checkpoint_order"]):
            _checkpoint_name(name, f"{where}.checkpoint_order[{number}]")
        for number, finding in enumerate(problem["check"]["findings"] if problem["check"] else ()):
            if finding["checkpoint"] is not None:
                _checkpoint_name(
                    finding["checkpoint"], f"{where}.check.findings[{number}].checkpoint"
                )
            if finding["test"] is not None:
                _test_id(finding["test"], f"{where}.check.findings[{number}].test")
        unique((c["name"] for c in problem["checkpoints"]), f"{where}.checkpoints", "name")
        for number, checkpoint in enumerate(problem["checkpoints"]):
            check_checkpoint(checkpoint, f"{where}.checkpoints[{number}]", document["repeat"])
    if document["comparison"] is not None:
        _check_comparison(document["comparison"], "comparison")


def check_checkpoint(document: Mapping[str, Any], where: str, repeat: int | None = None) -> None:
    """`repeat`: the run's `--repeat`, when the checkpoint is read as part of its run."""
    _checkpoint_name(document["name"], f"{where}.name")
    code = document["pytest_exit_code"]
    if document["failure"] is None and code not in COMPLETED_EXIT_CODES:
        raise JsonError(
            f"{where}.pytest_exit_code",
            f"pytest's exit code {code} is a failure's, and the checkpoint has no failure",
        )
    if document["started_at"]:
        date(document["started_at"], f"{where}.started_at")
    duration(document["duration_s"], f"{where}.duration_s")
    for name, seconds in document["phases"].items():
        duration(seconds, join(f"{where}.phases", name))
    # SCBench 1.0 leaves skipped tests out of the totals when no inventory applied (a `-k`).
    record = document.get("scbench")
    skipped_counted = not isinstance(record, Mapping) or record.get("inventory") is not False
    counts(document["totals"], f"{where}.totals", skipped_counted)
    for name, group in document["groups"].items():
        counts(group, f"{where}.groups.{name}", skipped_counted)
    tests = document["tests"]
    unique((test["id"] for test in tests), f"{where}.tests", "id")
    for index, test in enumerate(tests):
        _check_test(test, f"{where}.tests[{index}]", repeat)


def _check_test(test: Mapping[str, Any], where: str, repeat: int | None) -> None:
    _test_id(test["id"], f"{where}.id")
    _checkpoint_name(test["checkpoint"], f"{where}.checkpoint")
    duration(test["duration_s"], f"{where}.duration_s")
    if test["line"] is not None and test["line"] > MAX_LINE:
        raise JsonError(f"{where}.line", f"line {test['line']} is past {MAX_LINE}")
    if test["reruns"] > MAX_RERUNS:
        raise JsonError(f"{where}.reruns", f"{test['reruns']} reruns, more than {MAX_RERUNS}")
    count = test["repeat"]
    if count is None:
        return
    if count["passed"] > count["runs"]:
        raise JsonError(
            f"{where}.repeat.passed", f"passed {count['passed']} times in {count['runs']} runs"
        )
    if repeat is not None and count["runs"] > repeat:
        raise JsonError(
            f"{where}.repeat.runs", f"{count['runs']} runs, but the run repeated {repeat} times"
        )


def _check_comparison(document: Mapping[str, Any], where: str) -> None:
    date(document["baseline_started_at"], f"{where}.baseline_started_at")
    for name in COMPARISON_LISTS:
        for index, change in enumerate(document[name]):
            _check_place(change, f"{where}.{name}[{index}]")
            _test_id(change["test"], f"{where}.{name}[{index}].test")
    for index, delta in enumerate(document["checkpoints"]):
        _check_place(delta, f"{where}.checkpoints[{index}]")
    for name in COMPARISON_LISTS:
        told, listed = document["totals"][name], len(document[name])
        if told != listed:
            raise JsonError(f"{where}.totals.{name}", f"says {told}, but {listed} are listed")
    for index, delta in enumerate(document["checkpoints"]):
        for group, pair in delta["groups"].items():
            for side in ("before", "after"):
                if pair[side] is not None:
                    place = f"{where}.checkpoints[{index}].groups.{group}.{side}"
                    counts(pair[side], place, skipped_counted=None)


def _check_place(document: Mapping[str, Any], where: str) -> None:
    _problem_name(document["problem"], f"{where}.problem")
    _checkpoint_name(document["checkpoint"], f"{where}.checkpoint")


def _problem_name(name: str, where: str) -> None:
    _name(name, where, MAX_PROBLEM_NAME_CHARS)


def _checkpoint_name(name: str, where: str) -> None:
    _name(name, where, MAX_CHECKPOINT_NAME_CHARS)


def _test_id(name: str, where: str) -> None:
    _name(name, where, MAX_TEST_ID_CHARS)


def _name(name: str, where: str, max_chars: int) -> None:
    problem = name_problem(name, max_chars)
    if problem is not None:
        raise JsonError(where, problem)


def counts(document: Mapping[str, Any], where: str, skipped_counted: bool | None = True) -> None:
    """A group's counts: every test counted once as passed, failed or skipped, the skipped ones
    in the total or not (`skipped_counted`; None: either, as a comparison's checkpoints may
    have been judged either way)."""
    passed, failed, skipped, total = (
        document["passed"],
        document["failed"],
        document["skipped"],
        document["total"],
    )
    forms = [passed + failed + skipped, passed + failed]
    if skipped_counted is not None:
        forms = forms[:1] if skipped_counted else forms[1:]
    if total not in forms:
        raise JsonError(
            f"{where}.total",
            f"{total}, but passed {passed} + failed {failed} + skipped {skipped} "
            f"= {passed + failed + skipped}"
            + ("" if skipped_counted else f" (without the skipped: {passed + failed})"),
        )
    if document["flaky"] > total:
        raise JsonError(f"{where}.flaky", f"{document['flaky']} flaky of {total} tests")
    rate = document["pass_rate"]
    expected = round(passed / total, 4) if total else None
    if rate != expected:
        raise JsonError(f"{where}.pass_rate", f"{rate}, but passed / total is {expected}")


def date(text: str, where: str) -> None:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise JsonError(where, "not a date and time (ISO 8601)") from None
    if when.tzinfo is None:
        raise JsonError(where, "a date and time without its time zone")
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        raise JsonError(where, f"the year {when.year} is not between {MIN_YEAR} and {MAX_YEAR}")


def duration(seconds: float, where: str) -> None:
    if seconds > MAX_DURATION_S:
        raise JsonError(where, f"{seconds} s is more than the {MAX_DURATION_S} s allowed")


def unique(values: Iterable[str], where: str, field: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise JsonError(f"{where}[{index}].{field}", "given twice")
        seen.add(value)
