"""Read the two reports pytest writes: exact outcomes from pytest-json-report, marks from CTRF."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from scbench_ci.command import CTRF_REPORT, PYTEST_REPORT

MAX_MESSAGE_CHARS = 2000
MAX_DETAILS_CHARS = 8000
MAX_REPORT_BYTES = 256 * 1024 * 1024
_PHASES = ("setup", "call", "teardown")


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"


PASSING = frozenset({Status.PASSED, Status.XPASSED})
FAILING = frozenset({Status.FAILED, Status.ERROR})


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # not a pytest test class

    node_id: str
    file: str
    """The test's file relative to the workspace root, e.g. `tests/test_checkpoint_1.py`."""
    line: int | None
    """1-based line of the test (or of the failure, when it happened in the test's own file)."""
    status: Status
    duration_s: float
    markers: tuple[str, ...]
    message: str | None
    details: str | None
    """pytest's longer report of a failure (traceback), capped."""


@dataclass(frozen=True)
class CollectionError:
    node_id: str
    message: str


@dataclass(frozen=True)
class Reports:
    tests: tuple[TestOutcome, ...]
    exit_code: int | None
    """The exit code pytest recorded in its report."""
    collection_errors: tuple[CollectionError, ...]
    problems: tuple[str, ...]
    """What was missing or unreadable in the reports (empty when both were fine)."""


def read_reports(reports_dir: Path) -> Reports | None:
    """Parse both reports; None when neither exists or neither can be read."""
    problems: list[str] = []
    detailed = _load_json(reports_dir / PYTEST_REPORT, problems)
    ctrf = _load_json(reports_dir / CTRF_REPORT, problems)
    if detailed is None and ctrf is None:
        return None
    ctrf_tests = _ctrf_tests(ctrf, problems) if ctrf is not None else {}
    if detailed is not None:
        tests = _from_json_report(detailed, ctrf_tests, problems)
        exit_code = detailed.get("exitcode")
        collection_errors = _collection_errors(detailed)
    else:
        tests = [_from_ctrf(test) for test in ctrf_tests.values()]
        exit_code = None
        collection_errors = []
    if ctrf is None:
        problems.append("without the CTRF report no test's markers are known")
    return Reports(
        tests=tuple(tests),
        exit_code=exit_code if isinstance(exit_code, int) else None,
        collection_errors=tuple(collection_errors),
        problems=tuple(problems),
    )


def _load_json(path: Path, problems: list[str]) -> dict[str, Any] | None:
    if not path.is_file():
        problems.append(f"{path.name} was not written")
        return None
    if path.stat().st_size > MAX_REPORT_BYTES:
        problems.append(f"{path.name} is larger than {MAX_REPORT_BYTES} bytes; ignored")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        problems.append(f"{path.name} is not valid JSON ({exc})")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path.name} is not a JSON object")
        return None
    return data


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


def _markers(ctrf_test: dict[str, Any] | None) -> tuple[str, ...]:
    """CTRF tags are the test's marks, written `name` or `name::arguments`."""
    if ctrf_test is None or not isinstance(ctrf_test.get("tags"), list):
        return ()
    names = (tag.split("::", 1)[0] for tag in ctrf_test["tags"] if isinstance(tag, str))
    return tuple(dict.fromkeys(name for name in names if name))


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
        node_id = test["nodeid"]
        try:
            status = Status(str(test.get("outcome")))
        except ValueError:
            problems.append(f"{node_id}: unknown outcome {test.get('outcome')!r}")
            status = Status.ERROR
        ctrf_test = ctrf_tests.get(node_id)
        if ctrf_tests and ctrf_test is None:
            problems.append(f"{node_id} is missing from {CTRF_REPORT}")
        file = node_id.split("::", 1)[0]
        phases = [test[phase] for phase in _PHASES if isinstance(test.get(phase), dict)]
        message, details, crash_line = _failure_text(status, phases, file, ctrf_test)
        lineno = test.get("lineno")
        line = crash_line or (lineno + 1 if isinstance(lineno, int) else None)
        outcomes.append(
            TestOutcome(
                node_id=node_id,
                file=file,
                line=line,
                status=status,
                duration_s=round(sum(_number(phase.get("duration")) for phase in phases), 6),
                markers=_markers(ctrf_test),
                message=message,
                details=details,
            )
        )
    return outcomes


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
    for entry in phase.get("traceback") or []:
        if (
            isinstance(entry, dict)
            and entry.get("path") == file
            and isinstance(entry.get("lineno"), int)
        ):
            crash_line = entry["lineno"]
    details = cap_tail(longrepr, MAX_DETAILS_CHARS) if isinstance(longrepr, str) else None
    return cap(message, MAX_MESSAGE_CHARS), details, crash_line


def _skip_reason(longrepr: object) -> str | None:
    """pytest-json-report writes a skip as the repr of (path, line, 'Skipped: reason')."""
    if not isinstance(longrepr, str) or not longrepr.startswith("("):
        return None
    try:
        value = ast.literal_eval(longrepr)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], str):
        return value[2].removeprefix("Skipped: ")
    return None


def _ctrf_message(ctrf_test: dict[str, Any] | None) -> str | None:
    if ctrf_test is None:
        return None
    message = ctrf_test.get("message")
    return message if isinstance(message, str) and message else None


def _from_ctrf(test: dict[str, Any]) -> TestOutcome:
    """A degraded outcome for when pytest-json-report is missing: CTRF folds xfail into skipped."""
    raw = test.get("rawStatus")
    status = {
        "passed": Status.PASSED,
        "failed": Status.ERROR if raw in ("setup_failed", "teardown_failed") else Status.FAILED,
        "skipped": Status.XFAILED if raw == "xfailed" else Status.SKIPPED,
    }.get(str(test.get("status")), Status.ERROR)
    file = test.get("filePath") if isinstance(test.get("filePath"), str) else None
    return TestOutcome(
        node_id=test["name"],
        file=file or test["name"].split("::", 1)[0],
        line=None,
        status=status,
        duration_s=_number(test.get("duration")) / 1000,
        markers=_markers(test),
        message=cap(_ctrf_message(test), MAX_MESSAGE_CHARS),
        details=cap_tail(test.get("trace"), MAX_DETAILS_CHARS)
        if isinstance(test.get("trace"), str)
        else None,
    )


def _collection_errors(report: dict[str, Any]) -> list[CollectionError]:
    errors = []
    for collector in report.get("collectors") or []:
        if isinstance(collector, dict) and collector.get("outcome") == "failed":
            longrepr = collector.get("longrepr")
            errors.append(
                CollectionError(
                    node_id=str(collector.get("nodeid", "")),
                    message=cap_tail(longrepr, MAX_DETAILS_CHARS) or ""
                    if isinstance(longrepr, str)
                    else "",
                )
            )
    return errors


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def cap(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters cut]"


def cap_tail(text: str | None, limit: int) -> str | None:
    """Keep the end, where a traceback names the error."""
    if text is None or len(text) <= limit:
        return text
    return f"[{len(text) - limit} earlier characters cut] …\n" + text[-limit:]
