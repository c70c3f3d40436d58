"""The seal: reports changed after the runner wrote them, forged seals and missing ones are caught,
and the reports are read without following links."""

import os
from pathlib import Path

import pytest

from scbench_ci.standalone.pytest_runner import (
    COLLECTED_PREFIX,
    SEAL_PREFIX,
    START_PREFIX,
    collected_text,
    seal_text,
    start_text,
)
from scbench_ci.trust.seal import (
    CTRF_REPORT,
    INVENTORY,
    PYTEST_REPORT,
    Broken,
    ReportFiles,
    Seal,
    check_seal,
    read_report_files,
    sealed_inventory,
)

KEY = "k" * 64
CTRF = b'{"results": {}}'
PYTEST = b'{"tests": []}'


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A reports folder and a log, sealed as the runner seals them (exit 1, 2 killed)."""
    reports = tmp_path / ".scbench"
    reports.mkdir()
    (reports / CTRF_REPORT).write_bytes(CTRF)
    (reports / PYTEST_REPORT).write_bytes(PYTEST)
    line = seal_text(KEY, 1, 2, [CTRF, PYTEST, None])
    (tmp_path / "pytest.log").write_text(
        f"{START_PREFIX}{start_text(KEY)}\n== 1 failed ==\n\n{SEAL_PREFIX}{line}\n"
    )
    return tmp_path


def check(run: Path, exit_code: int | None = 1) -> Seal | Broken:
    return check_seal(run / "pytest.log", read_report_files(run / ".scbench"), KEY, exit_code)


def test_untouched_reports_pass_and_say_what_was_killed(run: Path) -> None:
    assert check(run) == Seal(killed=2)


def test_a_changed_report_is_caught(run: Path) -> None:
    (run / ".scbench" / PYTEST_REPORT).write_text('{"tests": [], "exitcode": 0}')
    assert check(run) is Broken.MISMATCH


def test_a_removed_report_is_caught(run: Path) -> None:
    (run / ".scbench" / CTRF_REPORT).unlink()
    assert check(run) is Broken.MISMATCH


def test_another_exit_code_is_caught(run: Path) -> None:
    assert check(run, 0) is Broken.MISMATCH


def test_a_seal_made_without_the_key_is_caught(run: Path) -> None:
    forged = seal_text("guess", 1, 2, [CTRF, PYTEST, None])
    with (run / "pytest.log").open("a") as log:
        log.write(f"{SEAL_PREFIX}{forged}\n")
    assert check(run) is Broken.MISMATCH


def test_no_seal_is_caught(run: Path) -> None:
    (run / "pytest.log").write_text(f"{START_PREFIX}{start_text(KEY)}\n== 1 failed ==\n")
    assert check(run) is Broken.UNSEALED


def test_a_killed_process_has_no_seal(run: Path) -> None:
    assert check(run, None) is Broken.UNSEALED


def test_a_runner_that_never_started_is_told_apart(run: Path) -> None:
    (run / "pytest.log").write_text("error: Failed to fetch: pytest\n")
    assert check(run) is Broken.NOT_STARTED


def test_a_start_line_made_without_the_key_is_not_a_start(run: Path) -> None:
    log = run / "pytest.log"
    log.write_text(log.read_text().replace(start_text(KEY), start_text("guess")))
    assert check(run) is Broken.NOT_STARTED


INVENTORY_DATA = b'{"passes": []}'


def test_the_inventory_is_covered_by_the_seal(run: Path) -> None:
    """Under SCBench 1.0's rules the seal covers the inventory too: one that appears after the
    run, or changes, breaks it."""
    (run / ".scbench" / INVENTORY).write_bytes(INVENTORY_DATA)
    assert check(run) is Broken.MISMATCH
    log = run / "pytest.log"
    line = seal_text(KEY, 1, 2, [CTRF, PYTEST, INVENTORY_DATA])
    log.write_text(f"{START_PREFIX}{start_text(KEY)}\n\n{SEAL_PREFIX}{line}\n")
    assert check(run) == Seal(killed=2)
    files = read_report_files(run / ".scbench")
    assert sealed_inventory(log, files, KEY, Seal(killed=2)) == INVENTORY_DATA


def test_an_unsealed_run_keeps_the_inventory_its_collected_line_covers(run: Path) -> None:
    """A run killed after its tests were collected: the line printed then vouches for the
    inventory; a changed inventory or a line made without the key does not."""
    (run / ".scbench" / INVENTORY).write_bytes(INVENTORY_DATA)
    log = run / "pytest.log"
    collected = f"{COLLECTED_PREFIX}{collected_text(KEY, INVENTORY_DATA)}\n"
    log.write_text(f"{START_PREFIX}{start_text(KEY)}\n{collected}== killed ==\n")
    files = read_report_files(run / ".scbench")
    assert check(run, None) is Broken.UNSEALED
    assert sealed_inventory(log, files, KEY, Broken.UNSEALED) == INVENTORY_DATA
    changed = ReportFiles(files.ctrf, files.pytest, (), b'{"passes": [1]}')
    assert sealed_inventory(log, changed, KEY, Broken.UNSEALED) is None
    forged = f"{COLLECTED_PREFIX}{collected_text('guess', INVENTORY_DATA)}\n"
    log.write_text(f"{START_PREFIX}{start_text(KEY)}\n{forged}")
    assert sealed_inventory(log, files, KEY, Broken.UNSEALED) is None
    assert sealed_inventory(log, files, KEY, Broken.NOT_STARTED) is None


def test_reports_are_read_without_following_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(PYTEST)
    reports = tmp_path / ".scbench"
    reports.mkdir()
    (reports / PYTEST_REPORT).symlink_to(outside)
    os.mkfifo(reports / CTRF_REPORT)  # opening it for reading must not wait for a writer

    files = read_report_files(reports)

    assert files == ReportFiles(
        ctrf=None,
        pytest=None,
        problems=(
            f"{CTRF_REPORT} is not a regular file",
            f"{PYTEST_REPORT} could not be read (Too many levels of symbolic links)",
        ),
    )


def test_a_linked_reports_folder_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / PYTEST_REPORT).write_bytes(PYTEST)
    (tmp_path / ".scbench").symlink_to(real)

    files = read_report_files(tmp_path / ".scbench")

    assert (files.ctrf, files.pytest) == (None, None)
    assert files.problems == (".scbench/ is not a folder",)


def test_a_report_over_the_size_limit_is_not_read(run: Path) -> None:
    files = read_report_files(run / ".scbench", limit=len(PYTEST))
    assert files.pytest == PYTEST
    assert files.ctrf is None
    assert files.problems == (f"{CTRF_REPORT} is larger than {len(PYTEST)} bytes",)
