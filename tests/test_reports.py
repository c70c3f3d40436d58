"""Report parsing, on reports written by a real pytest run and on crafted edge cases."""

import json
from pathlib import Path

import pytest

from scbench_ci.command import CTRF_REPORT, PYTEST_REPORT, build_command
from scbench_ci.executors.base import ExecutionRequest
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.problem import load_problem
from scbench_ci.reports import MAX_MESSAGE_CHARS, Reports, Status, read_reports
from scbench_ci.workspace import REPORTS_DIR, stage_workspace
from tests.conftest import ProblemFolder

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
    command = build_command(
        problem,
        checkpoint,
        entrypoint="true",
        workspace_dir=str(workspace.root),
        environment_env={},
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
    reports = read_reports(workspace.root / REPORTS_DIR)
    assert reports is not None
    return reports


def test_every_outcome_is_exact(real_reports: Reports) -> None:
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


def test_markers_are_marks_not_keywords(real_reports: Reports) -> None:
    markers = {t.node_id.split("::", 1)[1]: t.markers for t in real_reports.tests}
    assert markers["test_error_marked"] == ("error",)
    assert markers["test_param[error]"] == ()  # a parametrize id is not a marker
    assert markers["test_plain"] == ()
    assert set(markers["TestGroup::test_in_class"]) == {"slow", "functionality"}
    assert markers["test_expected_failure"] == ("xfail",)


def test_messages_lines_and_durations(real_reports: Reports) -> None:
    tests = {t.node_id.split("::", 1)[1]: t for t in real_reports.tests}
    failed = tests["test_error_marked"]
    assert failed.message == "AssertionError: one is not two\nassert 1 == 2"
    assert failed.details is not None and "one is not two" in failed.details
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


def test_no_reports_at_all(tmp_path: Path) -> None:
    assert read_reports(tmp_path) is None


def test_unreadable_reports_count_as_missing(tmp_path: Path) -> None:
    _write(tmp_path, PYTEST_REPORT, "{not json")
    _write(tmp_path, CTRF_REPORT, "[1, 2]")
    assert read_reports(tmp_path) is None


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
                    "nodeid": "tests/test_checkpoint_1.py",
                    "outcome": "failed",
                    "longrepr": "ImportError while importing module\nE   ModuleNotFoundError: x",
                },
            ],
        },
    )
    reports = read_reports(tmp_path)
    assert reports is not None
    assert reports.exit_code == 2
    (error,) = reports.collection_errors
    assert error.node_id == "tests/test_checkpoint_1.py"
    assert "ModuleNotFoundError: x" in error.message
    assert reports.problems == (
        "ctrf-report.json was not written",
        "without the CTRF report no test's markers are known",
    )


def test_ctrf_alone_is_used_in_a_degraded_way(tmp_path: Path) -> None:
    _write(
        tmp_path,
        CTRF_REPORT,
        {
            "results": {
                "tests": [
                    {"name": "tests/test_checkpoint_1.py::a", "status": "passed", "duration": 1500},
                    {
                        "name": "tests/test_checkpoint_1.py::b",
                        "status": "failed",
                        "rawStatus": "setup_failed",
                        "message": "boom",
                        "tags": ["error"],
                    },
                    {
                        "name": "tests/test_checkpoint_1.py::c",
                        "status": "skipped",
                        "rawStatus": "xfailed",
                        "tags": ["xfail::reason_x"],
                    },
                    {
                        "name": "tests/test_checkpoint_1.py::d",
                        "status": "failed",
                        "tags": ["slow::3"],
                    },
                    {"name": "tests/test_checkpoint_1.py::e", "status": "other"},
                ]
            }
        },
    )
    reports = read_reports(tmp_path)
    assert reports is not None
    assert [(t.status, t.markers) for t in reports.tests] == [
        (Status.PASSED, ()),
        (Status.ERROR, ("error",)),
        (Status.XFAILED, ("xfail",)),
        (Status.FAILED, ("slow",)),
        (Status.ERROR, ()),
    ]
    assert reports.tests[0].duration_s == 1.5
    assert reports.problems == ("pytest-report.json was not written",)


def test_unknown_outcome_and_test_missing_from_ctrf(tmp_path: Path) -> None:
    _write(
        tmp_path,
        PYTEST_REPORT,
        {
            "exitcode": 1,
            "tests": [
                {"nodeid": "tests/test_checkpoint_1.py::a", "outcome": "weird", "lineno": 0},
                {"nodeid": "tests/test_checkpoint_1.py::b", "outcome": "passed"},
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
                    {"name": "tests/test_checkpoint_1.py::b", "status": "passed", "tags": ["error"]}
                ]
            }
        },
    )
    reports = read_reports(tmp_path)
    assert reports is not None
    assert [(t.status, t.markers, t.line) for t in reports.tests] == [
        (Status.ERROR, (), 1),
        (Status.PASSED, ("error",), None),
    ]
    assert reports.problems == (
        "tests/test_checkpoint_1.py::a: unknown outcome 'weird'",
        "tests/test_checkpoint_1.py::a is missing from ctrf-report.json",
    )
