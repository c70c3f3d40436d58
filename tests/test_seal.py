"""The seal: reports changed after pytest wrote them, forged seals and missing ones are caught."""

from pathlib import Path

import pytest

from scbench_ci.command import CTRF_REPORT, PYTEST_REPORT
from scbench_ci.pytest_runner import SEAL_PREFIX, seal_text
from scbench_ci.seal import Seal, check_seal

KEY = "k" * 64


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A reports folder and a log, sealed as the runner seals them (exit 1, 2 killed)."""
    reports = tmp_path / ".scbench"
    reports.mkdir()
    (reports / CTRF_REPORT).write_text('{"results": {}}')
    (reports / PYTEST_REPORT).write_text('{"tests": []}')
    line = seal_text(KEY, 1, 2, [b'{"results": {}}', b'{"tests": []}'])
    (tmp_path / "pytest.log").write_text(f"== 1 failed ==\n\n{SEAL_PREFIX}{line}\n")
    return tmp_path


def test_untouched_reports_pass_and_say_what_was_killed(run: Path) -> None:
    assert check_seal(run / "pytest.log", run / ".scbench", KEY, 1) == Seal(killed=2)


def test_a_changed_report_is_caught(run: Path) -> None:
    (run / ".scbench" / PYTEST_REPORT).write_text('{"tests": [], "exitcode": 0}')
    problem = check_seal(run / "pytest.log", run / ".scbench", KEY, 1)
    assert isinstance(problem, str) and "seal does not match" in problem


def test_a_removed_report_is_caught(run: Path) -> None:
    (run / ".scbench" / CTRF_REPORT).unlink()
    assert isinstance(check_seal(run / "pytest.log", run / ".scbench", KEY, 1), str)


def test_another_exit_code_is_caught(run: Path) -> None:
    assert isinstance(check_seal(run / "pytest.log", run / ".scbench", KEY, 0), str)


def test_a_seal_made_without_the_key_is_caught(run: Path) -> None:
    forged = seal_text("guess", 1, 2, [b'{"results": {}}', b'{"tests": []}'])
    with (run / "pytest.log").open("a") as log:
        log.write(f"{SEAL_PREFIX}{forged}\n")
    assert isinstance(check_seal(run / "pytest.log", run / ".scbench", KEY, 1), str)


def test_no_seal_is_caught(run: Path) -> None:
    (run / "pytest.log").write_text("== 1 failed ==\n")
    problem = check_seal(run / "pytest.log", run / ".scbench", KEY, 1)
    assert problem == "pytest ended without sealing its reports: they cannot be trusted"
