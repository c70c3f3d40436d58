"""Read the two reports pytest's runner writes: exact outcomes, keywords and marks from
pytest-json-report's report (the runner adds each test's marks as pytest knows them, and what was
rerun), CTRF as a cross-check.

With `--reruns` (pytest-rerunfailures), a test that passed on a rerun has pytest-json-report's
outcome `rerun` and is flaky here; its message is its first failed attempt's, which the runner
keeps (`rerun_failure`). CTRF writes such a test `passed` with `flaky: true`.

Parsing never raises: whatever the bytes hold gives outcomes, or the reason there are none.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeGuard

from scbench_ci.foundation.layout import TESTS_DIR, WORKSPACE_TESTS_DIR
from scbench_ci.standalone.pytest_runner import MAX_SHARDS, SHARD_REPORT_KEY
from scbench_ci.trust.literals import literal_value
from scbench_ci.trust.names import MAX_TEST_ID_CHARS, shown_test_id
from scbench_ci.trust.seal import CTRF_REPORT, PYTEST_REPORT, ReportFiles

MAX_MESSAGE_CHARS = 2000
MAX_TRACEBACK_CHARS = 8000
CUT_NOTE_CHARS = 64
"""The most `cap`'s and `cap_tail`'s notes add (the count of what was cut has at most 20 digits)."""
MAX_MARKERS = 64
MAX_MARKER_CHARS = 200
MAX_KEYWORDS = 1024
_MARKER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What config.yaml takes as a marker's name (`problem/load.py`): the only keywords that can
name one."""
MAX_LINE = 10**9
MAX_DURATION_S = 10**7
MAX_RERUNS = 10**6
UNPRINTABLE_ID = (
    f"its node id is over {MAX_TEST_ID_CHARS:,} characters or holds characters that are not "
    "printable: kept with those escaped (and cut)"
)
MAX_SKIP_REPR_CHARS = 100_000
"""The longest skip report whose reason is read out of it (a longer one keeps no message)."""
_STRING = r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\""""
_SKIP_REPR = re.compile(rf"\((?:{_STRING}), \d{{1,10}}, (?P<reason>{_STRING})\)")
_PHASES = ("setup", "call", "teardown")
NOT_CALLED = "the test never ran: its setup did, then the session stopped (no call phase)"


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    FLAKY = "flaky"
    """Failed, then passed when it was run again in the same session."""


PASSING = frozenset({Status.PASSED, Status.XPASSED})
FAILING = frozenset({Status.FAILED, Status.ERROR})
"""FLAKY is in neither: how it counts is the policy's choice."""
_OUTCOMES = {status.value: status for status in Status if status is not Status.FLAKY} | {
    "rerun": Status.FLAKY
}
"""pytest-json-report's outcome of a test that failed, then passed on a rerun, is `rerun`."""


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # not a pytest test class

    node_id: str
    file: str
    """The test's file in the problem's folder, e.g. `tests/test_checkpoint_1.py` (staged as
    `.evaluation_tests/test_checkpoint_1.py`)."""
    line: int | None
    """1-based line of the test (or of the failure, when it happened in the test's own file)."""
    status: Status
    duration_s: float
    markers: tuple[str, ...]
    """The test's marks as pytest knows them (`iter_markers`)."""
    message: str | None
    traceback: str | None
    """pytest's longer report of a failure (traceback), capped."""
    reruns: int = 0
    """How many times the test was run again after failing: a flaky test passed on attempt
    `reruns + 1`; a failed one failed all of them."""
    keywords: tuple[str, ...] = ()
    """pytest-json-report's `keywords` of the test (pytest's `item.keywords` once its setup ran:
    its marks, and also its name and its parents', its parameters' id, its function's attributes
    and what its fixtures added), those shaped like a marker's name, in the report's order: what
    SCBench's runners group it by."""


@dataclass(frozen=True)
class CollectionError:
    node_id: str
    message: str


@dataclass(frozen=True)
class ShardRecord:
    """What a shard's runner says it was dealt from (`pytest_runner.SHARD_REPORT_KEY`)."""

    index: int
    """From 1."""
    count: int
    items: tuple[str, ...]
    """Every test of the collection it dealt, in the order pytest would run them all (node ids
    as the tests' own are named)."""


@dataclass(frozen=True)
class Reports:
    tests: tuple[TestOutcome, ...]
    exit_code: int | None
    """The exit code pytest recorded in its report."""
    collection_errors: tuple[CollectionError, ...]
    problems: tuple[str, ...]
    """What was missing, unreadable or inconsistent in the reports (empty when both were fine)."""
    shard: ShardRecord | None = None
    """The shard the run was, when it was one."""


def read_reports(files: ReportFiles) -> Reports | str:
    """Parse both reports; the reason there are no outcomes when pytest-json-report's report is
    missing or unusable."""
    problems = list(files.problems)
    detailed = _load_json(files.pytest, PYTEST_REPORT, problems)
    if detailed is None:
        return "; ".join(problems) or f"{PYTEST_REPORT} was not written"
    ctrf = _load_json(files.ctrf, CTRF_REPORT, problems)
    ctrf_tests = _ctrf_tests(ctrf, problems) if ctrf is not None else {}
    tests = _from_json_report(detailed, ctrf_tests, problems)
    exit_code = detailed.get("exitcode")
    return Reports(
        tests=tuple(tests),
        exit_code=exit_code if _is_int(exit_code) and 0 <= exit_code < 256 else None,
        collection_errors=tuple(_collection_errors(detailed)),
        problems=tuple(problems),
        shard=_shard(detailed.get(SHARD_REPORT_KEY)),
    )


def _shard(record: object) -> ShardRecord | None:
    """The runner's record of a shard; None when there is none, or it is not one."""
    if not isinstance(record, dict):
        return None
    index, count, items = record.get("index"), record.get("count"), record.get("items")
    if not (_is_int(index) and _is_int(count) and 1 <= index <= count <= MAX_SHARDS):
        return None
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        return None
    return ShardRecord(index, count, tuple(shown_test_id(problem_node_id(i)) for i in items))


def _load_json(data: bytes | None, name: str, problems: list[str]) -> dict[str, Any] | None:
    if data is None:
        problems.append(f"{name} was not written")
        return None
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        # ValueError covers bad UTF-8, bad JSON, NaN and integers of more than 4300 digits.
        problems.append(f"{name} is not valid JSON ({_first_line(str(exc) or type(exc).__name__)})")
        return None
    if not isinstance(value, dict):
        problems.append(f"{name} is not a JSON object")
        return None
    return value


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")


def _first_line(text: str) -> str:
    return cap(text.splitlines()[0] if text else text, 200) or ""


def _ctrf_tests(ctrf: dict[str, Any], problems: list[str]) -> dict[str, dict[str, Any]]:
    results = ctrf.get("results")
    tests = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(tests, list):
        problems.append(f"{CTRF_REPORT} has no results.tests list")
        return {}
    return {
        test["name"]: test
        for test in tests
        if isinstance(test, dict) and isinstance(test.get("name"), str)
    }


def _names(values: object, split_arguments: bool = False) -> tuple[str, ...] | None:
    """Marker names from a list of strings (CTRF writes a mark as `name` or `name::arguments`)."""
    if not isinstance(values, list):
        return None
    names = (v.split("::", 1)[0] if split_arguments else v for v in values if isinstance(v, str))
    kept = (name[:MAX_MARKER_CHARS] for name in names if name)
    return tuple(dict.fromkeys(kept))[:MAX_MARKERS]


def _keywords(values: object) -> tuple[str, ...]:
    """The keywords that can name a marker, once each, in the report's order."""
    if not isinstance(values, list):
        return ()
    names = (v for v in values if isinstance(v, str) and _MARKER_NAME.fullmatch(v))
    return tuple(dict.fromkeys(names))[:MAX_KEYWORDS]


def _markers(
    test: dict[str, Any], ctrf_test: dict[str, Any] | None, problems: list[str]
) -> tuple[str, ...]:
    """The marks the runner recorded from pytest's own items; CTRF's tags are compared with them
    where CTRF has any (it has none for a test whose fixtures failed in setup)."""
    node_id = test["nodeid"]
    marks = _names(test.get("markers"))
    if marks is None:
        problems.append(f"{node_id}: no markers recorded in {PYTEST_REPORT}")
        marks = ()
    tags = _names(ctrf_test.get("tags"), split_arguments=True) if ctrf_test else None
    if tags is not None and set(tags) != set(marks):
        problems.append(
            f"{node_id}: the markers in {CTRF_REPORT} ({', '.join(tags) or 'none'}) differ from "
            f"pytest's ({', '.join(marks) or 'none'}); pytest's are used"
        )
    return marks


def _from_json_report(
    report: dict[str, Any], ctrf_tests: dict[str, dict[str, Any]], problems: list[str]
) -> list[TestOutcome]:
    tests = report.get("tests")
    if not isinstance(tests, list):
        problems.append(f"{PYTEST_REPORT} has no tests list")
        return []
    outcomes = []
    for test in tests:
        if not isinstance(test, dict) or not isinstance(test.get("nodeid"), str):
            continue
        workspace_id = test["nodeid"]
        problem_id = problem_node_id(workspace_id)
        node_id = shown_test_id(problem_id)
        if node_id != problem_id:
            problems.append(f"{cap(node_id, MAX_MESSAGE_CHARS)}: {UNPRINTABLE_ID}")
        status = _OUTCOMES.get(str(test.get("outcome")))
        if status is None:
            problems.append(f"{node_id}: unknown outcome {cap(str(test.get('outcome')), 100)!r}")
            status = Status.ERROR
        # A pass needs its call phase: with none, the session stopped after the test's setup.
        uncalled = status in PASSING and not isinstance(test.get("call"), dict)
        if uncalled:
            problems.append(f"{cap(node_id, MAX_MESSAGE_CHARS)}: {NOT_CALLED}")
            status = Status.ERROR
        ctrf_test = ctrf_tests.get(workspace_id)
        if ctrf_tests and ctrf_test is None:
            problems.append(f"{node_id} is missing from {CTRF_REPORT}")
        workspace_file = workspace_id.split("::", 1)[0]
        file = node_id.split("::", 1)[0]
        phases = [test[phase] for phase in _PHASES if isinstance(test.get(phase), dict)]
        reruns = _reruns(test, status, problems)
        if status is Status.FLAKY:
            # The last attempt passed: what is worth telling is why the first one failed.
            first = test.get("rerun_failure")
            failed = [first] if isinstance(first, dict) else []
            message, traceback, crash_line = _failure_text(
                Status.FAILED, failed, workspace_file, None
            )
        else:
            message, traceback, crash_line = _failure_text(
                status, phases, workspace_file, ctrf_test
            )
        if uncalled:
            message, traceback = NOT_CALLED, None
        lineno = test.get("lineno")
        line = crash_line or (lineno + 1 if _is_int(lineno) and 0 <= lineno < MAX_LINE else None)
        outcomes.append(
            TestOutcome(
                node_id=node_id,
                file=file,
                line=line,
                status=status,
                duration_s=round(min(sum(_seconds(p.get("duration")) for p in phases), 1e9), 6),
                markers=_markers(test, ctrf_test, problems),
                message=message,
                traceback=traceback,
                reruns=reruns,
                keywords=_keywords(test.get("keywords")),
            )
        )
    return outcomes


def _reruns(test: dict[str, Any], status: Status, problems: list[str]) -> int:
    """The runner writes `reruns` only for a test that was rerun; a flaky test was, at least
    once."""
    value = test.get("reruns", 0)
    if not _is_int(value) or not 0 <= value <= MAX_RERUNS:
        problems.append(f"{test['nodeid']}: unreadable reruns {cap(str(value), 100)!r}")
        value = 0
    return max(value, 1) if status is Status.FLAKY else value


def _failure_text(
    status: Status, phases: list[dict[str, Any]], file: str, ctrf_test: dict[str, Any] | None
) -> tuple[str | None, str | None, int | None]:
    """The message, the longer report and the failure's line in the test file, when they exist."""
    if status in (Status.PASSED, Status.XPASSED):
        return None, None, None
    # The phase that decided the outcome: the first one not passed.
    phase = next((p for p in phases if p.get("outcome") != "passed"), None)
    if phase is None:
        return None, None, None
    crash = phase["crash"] if isinstance(phase.get("crash"), dict) else {}
    longrepr = phase.get("longrepr")
    message = crash.get("message") if isinstance(crash.get("message"), str) else None
    if status in (Status.SKIPPED, Status.XFAILED):
        message = _skip_reason(longrepr) or _ctrf_message(ctrf_test) or message
        return cap(message, MAX_MESSAGE_CHARS), None, None
    if message is None:
        message = _ctrf_message(ctrf_test) or (
            longrepr.strip().splitlines()[-1]
            if isinstance(longrepr, str) and longrepr.strip()
            else None
        )
    crash_line = None
    traceback = phase.get("traceback")
    for entry in traceback if isinstance(traceback, list) else []:
        if (
            isinstance(entry, dict)
            and entry.get("path") == file
            and _is_int(entry.get("lineno"))
            and 0 < entry["lineno"] < MAX_LINE
        ):
            crash_line = entry["lineno"]
    traceback = cap_tail(longrepr, MAX_TRACEBACK_CHARS) if isinstance(longrepr, str) else None
    return cap(message, MAX_MESSAGE_CHARS), traceback, crash_line


def _skip_reason(longrepr: object) -> str | None:
    """pytest-json-report writes a skip as the repr of (path, line, 'Skipped: reason')."""
    if not isinstance(longrepr, str) or len(longrepr) > MAX_SKIP_REPR_CHARS:
        return None
    # Read as that shape, its reason alone evaluated: Python's parser, given the whole text,
    # takes superlinear time on a long unclosed tuple.
    found = _SKIP_REPR.fullmatch(longrepr)
    if found is None:
        return None
    reason = literal_value(found["reason"])
    return reason.removeprefix("Skipped: ") if isinstance(reason, str) else None


def _ctrf_message(ctrf_test: dict[str, Any] | None) -> str | None:
    if ctrf_test is None:
        return None
    message = ctrf_test.get("message")
    return message if isinstance(message, str) and message else None


def _collection_errors(report: dict[str, Any]) -> list[CollectionError]:
    errors = []
    collectors = report.get("collectors")
    for collector in collectors if isinstance(collectors, list) else []:
        if isinstance(collector, dict) and collector.get("outcome") == "failed":
            longrepr = collector.get("longrepr")
            node_id = collector.get("nodeid")
            errors.append(
                CollectionError(
                    node_id=cap(problem_node_id(node_id), MAX_MESSAGE_CHARS) or ""
                    if isinstance(node_id, str)
                    else "",
                    message=cap_tail(longrepr, MAX_TRACEBACK_CHARS) or ""
                    if isinstance(longrepr, str)
                    else "",
                )
            )
    return errors


def problem_node_id(node_id: str) -> str:
    """A node id of the workspace as the problem's folder names the test: SCBench stages the tests
    in `.evaluation_tests/`, results name them `tests/<file>::<name>` as the problem, its
    `known_failures.txt` and earlier results do."""
    staged = f"{WORKSPACE_TESTS_DIR}/"
    return f"{TESTS_DIR}/{node_id[len(staged) :]}" if node_id.startswith(staged) else node_id


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _seconds(value: object) -> float:
    """A duration in seconds; 0 for anything that is not a finite, plausible number."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return 0.0
    try:
        seconds = float(value)
    except OverflowError:
        return 0.0
    return seconds if math.isfinite(seconds) and 0 <= seconds <= MAX_DURATION_S else 0.0


def cap(text: str | None, limit: int) -> str | None:
    """At most `limit` characters of the text's start, and at most CUT_NOTE_CHARS more that say
    how many were cut."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters cut]"


def cap_tail(text: str | None, limit: int) -> str | None:
    """Keep the end, where a traceback names the error (and the note, as `cap`)."""
    if text is None or len(text) <= limit:
        return text
    return f"[{len(text) - limit} earlier characters cut] …\n" + text[-limit:]


def capped_as_written(message: str | None, details: str | None) -> tuple[str | None, str | None]:
    """A test's message and details as read from a file: no longer than `cap` and `cap_tail`
    leave them when they are written, so that no reader is given more (a forged file's 1 MiB
    message to scan); what was written is left as it is."""
    return (
        cap(message, MAX_MESSAGE_CHARS + CUT_NOTE_CHARS),
        cap_tail(details, MAX_TRACEBACK_CHARS + CUT_NOTE_CHARS),
    )
