"""Report parsing, on reports written by a real pytest run and on crafted edge cases."""

import json
import warnings
from pathlib import Path

import pytest

from scbench_ci.executors.base import ExecutionRequest
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.foundation.layout import REPORTS_DIR
from scbench_ci.job.pytest_command import build_test_command
from scbench_ci.job.reports import (
    FAILING,
    MAX_MESSAGE_CHARS,
    NOT_CALLED,
    PASSING,
    UNPRINTABLE_ID,
    Reports,
    Status,
    read_reports,
)
from scbench_ci.job.workspace import stage_workspace
from scbench_ci.problem.load import load_problem
from scbench_ci.trust.seal import CTRF_REPORT, PYTEST_REPORT, read_report_files
from testing.problems import ProblemFolder

EVERY_OUTCOME = """
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke in setup")


def test_plain():
    pass


@pytest.mark.error
def test_error_marked():
    assert 1 == 2, "one is not two"


@pytest.mark.parametrize("x", [1, 2], ids=["error", "other"])
def test_param(x):
    assert x


@pytest.mark.xfail(reason="known bug")
def test_expected_failure():
    assert False


@pytest.mark.xfail
def test_unexpected_pass():
    pass


def test_setup_error(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


class TestGroup:
    @pytest.mark.slow
    @pytest.mark.functionality
    def test_in_class(self):
        pass


def test_long_message():
    raise ValueError("x" * 5000)
"""


@pytest.fixture(scope="module")
def real_reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    base = tmp_path_factory.mktemp("reports")
    folder = ProblemFolder(
        base / "problem",
        {
            "name": "outcomes",
            "entry_file": "main",
            "markers": {"slow": {"description": "slow", "group": "Functionality"}},
            "checkpoints": {"checkpoint_1": {}},
        },
    )
    folder.write("tests/test_checkpoint_1.py", EVERY_OUTCOME)
    (base / "submission").mkdir()
    problem = load_problem(folder.root)
    checkpoint = problem.checkpoint("checkpoint_1")
    workspace = stage_workspace(
        problem,
        checkpoint,
        include_prior_tests=True,
        submission=base / "submission",
        root=base / "workspace",
    )
    (base / "logs").mkdir()
    command = build_test_command(
        problem,
        checkpoint,
        entrypoint="true",
        environment_env={},
        test_timeout_s=checkpoint.timeout_s,
    )
    result = LocalExecutor().execute(
        ExecutionRequest(
            workspace=workspace.root,
            log_dir=base / "logs",
            setup_commands=(),
            command=command,
            session_timeout_s=300,
            seal_key="test-key",
            echo=None,
        )
    )
    assert result.exit_code == 1, (base / "logs/pytest.log").read_text()
    reports = read_reports(read_report_files(workspace.root / REPORTS_DIR))
    assert isinstance(reports, Reports)
    return reports


def test_every_outcome_is_exact(real_reports: Reports) -> None:
    # Run from .evaluation_tests/, as SCBench stages them; named as the problem names them.
    assert {t.node_id.split("::", 1)[0] for t in real_reports.tests} == {
        "tests/test_checkpoint_1.py"
    }
    statuses = {t.node_id.split("::", 1)[1]: t.status for t in real_reports.tests}
    assert statuses == {
        "test_plain": Status.PASSED,
        "test_error_marked": Status.FAILED,
        "test_param[error]": Status.PASSED,
        "test_param[other]": Status.PASSED,
        "test_expected_failure": Status.XFAILED,
        "test_unexpected_pass": Status.XPASSED,
        "test_setup_error": Status.ERROR,
        "test_skipped": Status.SKIPPED,
        "TestGroup::test_in_class": Status.PASSED,
        "test_long_message": Status.FAILED,
    }
    assert real_reports.exit_code == 1
    assert real_reports.problems == ()
    assert real_reports.collection_errors == ()


def test_markers_are_marks(real_reports: Reports) -> None:
    """`markers`: the marks pytest knows (results.json's), not the keywords."""
    markers = {t.node_id.split("::", 1)[1]: t.markers for t in real_reports.tests}
    assert markers["test_error_marked"] == ("error",)
    assert markers["test_param[error]"] == ()  # a parametrize id is not a mark
    assert markers["test_plain"] == ()
    assert set(markers["TestGroup::test_in_class"]) == {"slow", "functionality"}
    assert markers["test_expected_failure"] == ("xfail",)


def test_keywords_are_pytest_json_report_s_as_scbench_groups_by_them(
    real_reports: Reports,
) -> None:
    """`keywords`: pytest-json-report's, in its order, those shaped like a marker's name (not
    the node's name with its brackets, nor the file's or the folder's): a parametrize id is one,
    and so is the class's name."""
    keywords = {t.node_id.split("::", 1)[1]: t.keywords for t in real_reports.tests}
    assert keywords["test_param[error]"] == ("parametrize", "pytestmark", "error")
    assert keywords["test_param[other]"] == ("parametrize", "pytestmark", "other")
    assert keywords["test_plain"] == ("test_plain",)
    assert keywords["TestGroup::test_in_class"] == (
        "test_in_class",
        "functionality",
        "slow",
        "pytestmark",
        "TestGroup",
    )


def test_messages_lines_and_durations(real_reports: Reports) -> None:
    tests = {t.node_id.split("::", 1)[1]: t for t in real_reports.tests}
    failed = tests["test_error_marked"]
    assert failed.message == "AssertionError: one is not two\nassert 1 == 2"
    assert failed.traceback is not None and "one is not two" in failed.traceback
    assert failed.file == "tests/test_checkpoint_1.py"
    assert failed.line == 16  # the failing assert in the test file
    assert tests["test_plain"].line == 10  # the test's def, 1-based
    assert tests["test_plain"].message is None
    assert tests["test_setup_error"].message == "RuntimeError: fixture broke in setup"
    assert tests["test_skipped"].message == "not today"
    assert tests["test_expected_failure"].message == "known bug"
    long_message = tests["test_long_message"].message
    assert long_message is not None
    assert len(long_message) < MAX_MESSAGE_CHARS + 100
    assert long_message.endswith("more characters cut]")
    assert all(t.duration_s >= 0 for t in real_reports.tests)


def _write(folder: Path, name: str, data: object) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))


def _read(folder: Path) -> Reports:
    reports = read_reports(read_report_files(folder))
    assert isinstance(reports, Reports), reports
    return reports


def test_no_reports_at_all(tmp_path: Path) -> None:
    assert read_reports(read_report_files(tmp_path)) == "pytest-report.json was not written"


def test_an_unreadable_report_gives_no_outcomes_and_says_why(tmp_path: Path) -> None:
    _write(tmp_path, PYTEST_REPORT, "{not json")
    _write(tmp_path, CTRF_REPORT, "[1, 2]")
    reason = read_reports(read_report_files(tmp_path))
    assert isinstance(reason, str)
    assert reason.startswith("pytest-report.json is not valid JSON (Expecting property name")


def test_the_ctrf_report_alone_gives_no_outcomes(tmp_path: Path) -> None:
    _write(tmp_path, CTRF_REPORT, {"results": {"tests": [{"name": "t", "status": "passed"}]}})
    assert read_reports(read_report_files(tmp_path)) == "pytest-report.json was not written"


def test_collection_errors_are_kept(tmp_path: Path) -> None:
    _write(
        tmp_path,
        PYTEST_REPORT,
        {
            "exitcode": 2,
            "tests": [],
            "collectors": [
                {"nodeid": "", "outcome": "passed"},
                {
                    "nodeid": ".evaluation_tests/test_checkpoint_1.py",
                    "outcome": "failed",
                    "longrepr": "ImportError while importing module\nE   ModuleNotFoundError: x",
                },
            ],
        },
    )
    reports = _read(tmp_path)
    assert reports.exit_code == 2
    (error,) = reports.collection_errors
    assert error.node_id == "tests/test_checkpoint_1.py"  # staged in .evaluation_tests/
    assert "ModuleNotFoundError: x" in error.message
    assert reports.problems == ("ctrf-report.json was not written",)


CALLED = {"outcome": "passed", "call": {"outcome": "passed", "duration": 0.0}}
"""A passed test as the runner writes it: its call phase ran."""


def test_markers_come_from_pytest_and_ctrf_only_cross_checks(tmp_path: Path) -> None:
    _write(
        tmp_path,
        PYTEST_REPORT,
        {
            "exitcode": 1,
            "tests": [
                {
                    "nodeid": "tests/test_checkpoint_1.py::a",
                    "outcome": "weird",
                    "lineno": 0,
                    "markers": ["functionality"],
                },
                {"nodeid": "tests/test_checkpoint_1.py::b", **CALLED, "markers": []},
                {"nodeid": "tests/test_checkpoint_1.py::c", "outcome": "error"},
                {"nodeid": "tests/test_checkpoint_1.py::d", **CALLED, "markers": []},
                "garbage",
            ],
        },
    )
    _write(
        tmp_path,
        CTRF_REPORT,
        {
            "results": {
                "tests": [
                    # No tags at all: a test whose fixture failed in setup.
                    {"name": "tests/test_checkpoint_1.py::a", "status": "failed"},
                    {"name": "tests/test_checkpoint_1.py::b", "status": "passed", "tags": ["x::1"]},
                    {"name": "tests/test_checkpoint_1.py::c", "status": "failed", "tags": []},
                ]
            }
        },
    )
    reports = _read(tmp_path)
    assert [(t.status, t.markers, t.line) for t in reports.tests] == [
        (Status.ERROR, ("functionality",), 1),
        (Status.PASSED, (), None),
        (Status.ERROR, (), None),
        (Status.PASSED, (), None),
    ]
    assert reports.problems == (
        "tests/test_checkpoint_1.py::a: unknown outcome 'weird'",
        "tests/test_checkpoint_1.py::b: the markers in ctrf-report.json (x) differ from "
        "pytest's (none); pytest's are used",
        "tests/test_checkpoint_1.py::c: no markers recorded in pytest-report.json",
        "tests/test_checkpoint_1.py::d is missing from ctrf-report.json",
    )


DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 400


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (f'{{"tests": {DEEP}}}', "pytest-report.json is not valid JSON (maximum recursion"),
        ('{"tests": [], "exitcode": NaN}', "pytest-report.json is not valid JSON (NaN is not"),
        ('{"tests": [], "x": -Infinity}', "pytest-report.json is not valid JSON (-Infinity is"),
        ('{"tests": [], "x": ' + "9" * 5000 + "}", "pytest-report.json is not valid JSON (Exceeds"),
        ("[]", "pytest-report.json is not a JSON object"),
    ],
)
def test_report_content_that_breaks_parsers_gives_a_reason(
    tmp_path: Path, content: str, reason: str
) -> None:
    _write(tmp_path, PYTEST_REPORT, content)
    result = read_reports(read_report_files(tmp_path))
    assert isinstance(result, str) and result.startswith(reason), result


def test_a_report_that_is_not_utf8_gives_a_reason(tmp_path: Path) -> None:
    (tmp_path / PYTEST_REPORT).write_bytes(b'{"tests": []}\xff')
    result = read_reports(read_report_files(tmp_path))
    assert result == (
        "pytest-report.json is not valid JSON ('utf-8' codec can't decode byte 0xff in "
        "position 13: invalid start byte)"
    )


def test_out_of_range_values_are_dropped_not_raised(tmp_path: Path) -> None:
    skip = "(" * 50_000 + ")" * 50_000
    test = {
        "outcome": "skipped",
        "lineno": True,
        "setup": {"outcome": "skipped", "duration": 10**400, "longrepr": skip},
        "call": {"outcome": "passed", "duration": "1e400"},
        "teardown": {"outcome": "passed", "duration": -1, "traceback": 7},
        "markers": ["error", 3, "x" * 1000],
    }
    failing = {
        "outcome": "failed",
        "lineno": 10**400,
        "call": {
            "outcome": "failed",
            "crash": {"message": 5},
            "longrepr": 7,
            "traceback": [{"path": "tests/t.py", "lineno": 10**30}, "x"],
        },
        "markers": "error",
    }
    document = {
        "exitcode": 10**400,
        "collectors": {"x": 1},
        "tests": [{"nodeid": "tests/t.py::s", **test}, {"nodeid": "tests/t.py::f", **failing}],
    }
    # 1e400 reads as an infinite float.
    _write(tmp_path, PYTEST_REPORT, json.dumps(document).replace('"1e400"', "1e400"))
    reports = _read(tmp_path)
    skipped, failed = reports.tests
    assert (skipped.status, skipped.line, skipped.duration_s) == (Status.SKIPPED, None, 0.0)
    assert skipped.markers == ("error", "x" * 200)
    assert (failed.status, failed.line, failed.message, failed.traceback) == (
        Status.FAILED,
        None,
        None,
        None,
    )
    assert reports.exit_code is None
    assert reports.collection_errors == ()


FIRST_FAILURE = {
    "duration": 0.01,
    "outcome": "rerun",
    "crash": {"path": "/w/tests/t.py", "lineno": 10, "message": "AssertionError: attempt 1"},
    "traceback": [{"path": "tests/t.py", "lineno": 10, "message": "AssertionError"}],
    "longrepr": "def test_flaky():\n>       assert n >= 2\nE       AssertionError: attempt 1",
}
PASSED_STAGES = {phase: {"duration": 0.5, "outcome": "passed"} for phase in ("setup", "call")}


def test_a_test_that_passed_on_a_rerun_is_flaky_with_its_first_failure(tmp_path: Path) -> None:
    """As the runner writes them with `--reruns` (pytest-json-report's `rerun` outcome, the
    runner's `reruns` and `rerun_failure`; CTRF's `passed` with `flaky`): no problem."""
    _write(
        tmp_path,
        PYTEST_REPORT,
        {
            "exitcode": 1,
            "tests": [
                {
                    "nodeid": "tests/t.py::flaky",
                    "lineno": 7,
                    "outcome": "rerun",
                    **PASSED_STAGES,
                    "markers": [],
                    "reruns": 2,
                    "rerun_failure": FIRST_FAILURE,
                },
                {
                    "nodeid": "tests/t.py::always",
                    "lineno": 12,
                    "outcome": "failed",
                    "call": {**FIRST_FAILURE, "outcome": "failed", "crash": {"message": "last"}},
                    "markers": [],
                    "reruns": 2,
                    "rerun_failure": FIRST_FAILURE,
                },
                {"nodeid": "tests/t.py::fine", **CALLED, "markers": []},
            ],
        },
    )
    _write(
        tmp_path,
        CTRF_REPORT,
        {
            "results": {
                "tests": [
                    {"name": "tests/t.py::flaky", "status": "passed", "flaky": True, "retries": 2},
                    {"name": "tests/t.py::always", "status": "failed", "retries": 2},
                    {"name": "tests/t.py::fine", "status": "passed", "retries": 0},
                ]
            }
        },
    )
    reports = _read(tmp_path)
    flaky, always, fine = reports.tests
    assert (flaky.status, flaky.reruns, flaky.line) == (Status.FLAKY, 2, 10)
    assert flaky.message == "AssertionError: attempt 1"
    assert flaky.traceback == FIRST_FAILURE["longrepr"]
    assert flaky.duration_s == 1.0  # the last attempt's
    assert (always.status, always.reruns, always.message) == (Status.FAILED, 2, "last")
    assert (fine.status, fine.reruns, fine.message) == (Status.PASSED, 0, None)
    assert reports.problems == ()


def test_flaky_is_neither_passing_nor_failing() -> None:
    assert Status.FLAKY not in PASSING and Status.FLAKY not in FAILING
    assert Status.FLAKY.value == "flaky"


@pytest.mark.parametrize(
    ("fields", "reruns", "problem"),
    [
        ({}, 1, None),  # a flaky test was rerun at least once
        ({"reruns": "2", "rerun_failure": "x"}, 1, "unreadable reruns '2'"),
        ({"reruns": True, "rerun_failure": []}, 1, "unreadable reruns 'True'"),
        ({"reruns": -1, "rerun_failure": None}, 1, "unreadable reruns '-1'"),
        ({"reruns": 10**30, "rerun_failure": {"outcome": "passed"}}, 1, "unreadable reruns"),
        ({"reruns": [3], "rerun_failure": {"crash": 5, "traceback": "x", "longrepr": 5}}, 1, "["),
        ({"reruns": 3, "rerun_failure": {"outcome": "rerun", "crash": {"message": 7}}}, 3, None),
    ],
)
def test_garbage_rerun_fields_are_dropped_not_raised(
    tmp_path: Path, fields: dict[str, object], reruns: int, problem: str | None
) -> None:
    test = {"nodeid": "tests/t.py::f", "outcome": "rerun", "markers": [], **fields}
    _write(tmp_path, PYTEST_REPORT, {"exitcode": 0, "tests": [test]})
    reports = read_reports(read_report_files(tmp_path))
    assert isinstance(reports, Reports)
    (flaky,) = reports.tests
    assert (flaky.status, flaky.reruns, flaky.message, flaky.traceback) == (
        Status.FLAKY,
        reruns,
        None,
        None,
    )
    rerun_problems = [p for p in reports.problems if "reruns" in p]
    if problem is None:
        assert rerun_problems == []
    else:
        (found,) = rerun_problems
        assert found.startswith("tests/t.py::f: unreadable reruns") and problem in found


def test_a_failed_test_with_garbage_reruns_keeps_its_status(tmp_path: Path) -> None:
    test = {"nodeid": "tests/t.py::f", "outcome": "failed", "markers": [], "reruns": {"a": 1}}
    _write(tmp_path, PYTEST_REPORT, {"exitcode": 1, "tests": [test]})
    (failed,) = _read(tmp_path).tests
    assert (failed.status, failed.reruns) == (Status.FAILED, 0)


def test_flaky_is_not_an_outcome_pytest_writes(tmp_path: Path) -> None:
    test = {"nodeid": "tests/t.py::f", "outcome": "flaky", "markers": []}
    _write(tmp_path, PYTEST_REPORT, {"exitcode": 0, "tests": [test]})
    reports = _read(tmp_path)
    assert reports.tests[0].status is Status.ERROR
    assert "tests/t.py::f: unknown outcome 'flaky'" in reports.problems


@pytest.mark.parametrize("outcome", ["passed", "xpassed"])
def test_a_pass_without_a_call_phase_is_an_error(tmp_path: Path, outcome: str) -> None:
    """pytest stopped between the test's setup and its call (a SIGINT): the setup passed, so
    pytest-json-report's outcome says passed, but the test itself never ran."""
    setup_only = {"setup": {"outcome": "passed", "duration": 0.1}}
    _write(
        tmp_path,
        PYTEST_REPORT,
        {
            "exitcode": 2,
            "tests": [
                {"nodeid": "tests/t.py::ran", **CALLED, "markers": []},
                {"nodeid": "tests/t.py::stopped", "outcome": outcome, **setup_only, "markers": []},
            ],
        },
    )
    reports = _read(tmp_path)
    ran, stopped = reports.tests
    assert ran.status is Status.PASSED
    assert (stopped.status, stopped.message) == (Status.ERROR, NOT_CALLED)
    assert f"tests/t.py::stopped: {NOT_CALLED}" in reports.problems


def test_a_node_id_that_is_no_name_is_kept_escaped(tmp_path: Path) -> None:
    """A conftest can rename its items: an id with an escape sequence is kept with it escaped,
    and said, so that results.json (whose schema takes printable names only) can be written."""
    hostile = "tests/test_checkpoint_1.py::t\x1b]0;owned\x07\u202e"
    _write(tmp_path, PYTEST_REPORT, {"exitcode": 0, "tests": [{"nodeid": hostile, **CALLED}]})
    _write(tmp_path, CTRF_REPORT, {"results": {"tests": [{"name": hostile, "status": "passed"}]}})
    reports = _read(tmp_path)
    (test,) = reports.tests
    assert test.node_id == "tests/test_checkpoint_1.py::t\\x1b]0;owned\\x07\\u202e"
    assert test.node_id.isprintable() and test.status is Status.PASSED
    assert f"{test.node_id}: {UNPRINTABLE_ID}" in reports.problems


@pytest.mark.parametrize(
    "reason",
    [
        # Every escape repr writes: a backslash, quotes, line ends, tabs, \x, \u and \U.
        "a\\b'c\"\n\r\t\x07\u2028\U0001f600 é",
        "only a 'quote'",
    ],
)
def test_a_skip_reason_is_read_back_from_its_repr(tmp_path: Path, reason: str) -> None:
    skip = repr(("tests/t.py", 3, f"Skipped: {reason}"))
    test = {"nodeid": "tests/t.py::s", "outcome": "skipped", "setup": {"longrepr": skip}}
    _write(tmp_path, PYTEST_REPORT, {"tests": [test]})
    assert _read(tmp_path).tests[0].message == reason


@pytest.mark.parametrize("escape", ["\\ ", "\\d", "\\N{BULLET}", "\\0", "\\X41", "\\u12"])
def test_a_skip_reason_with_an_escape_repr_never_writes_is_not_read(
    tmp_path: Path, escape: str
) -> None:
    """Not evaluated at all: Python's parser would warn of `\\ ` and `\\d` on the terminal."""
    skip = f"('tests/t.py', 3, 'Skipped: a{escape}b')"
    test = {"nodeid": "tests/t.py::s", "outcome": "skipped", "setup": {"longrepr": skip}}
    _write(tmp_path, PYTEST_REPORT, {"tests": [test]})
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        message = _read(tmp_path).tests[0].message
    assert (message, warned) == (None, [])
