"""Hostile submissions through the real CLI: they get the verdict their code deserves, and nothing
of theirs outlives the run or lands outside the output folder.

Each submission is a folder of tests/threats/hostile/ laid over one of wordstat's submissions
(`testing/hostile_submissions.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scbench_ci.executors.output import MAX_LOG_BYTES
from scbench_ci.job.reports import MAX_MESSAGE_CHARS, MAX_TRACEBACK_CHARS
from scbench_ci.outputs.summary import MAX_BYTES as MAX_SUMMARY_BYTES
from testing.examples import group_counts
from testing.hostile_submissions import (
    BROKEN_COUNTS,
    CHECKPOINT_OUT,
    EXECUTORS,
    SOLVED,
    SOLVED_COUNTS,
    evaluate,
    hostile,
    processes_of_the_test,
)

# Each runs scbench-ci end to end, as every test under tests/integration does.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("nothing_survives")]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize(
    "overlay",
    [
        "root_conftest",  # threat 1
        "root_configs",  # threat 1
        "own_tests",  # threat 2
        "prewritten_reports",  # threat 3
        "customize",  # threat 4
    ],
)
def test_the_submission_cannot_steer_pytest(
    overlay: str, executor: str, tmp_path: Path, test_image: str
) -> None:
    code, checkpoint, output = evaluate(hostile(tmp_path, overlay), tmp_path, executor, test_image)

    assert code == 1, output
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == BROKEN_COUNTS


@pytest.mark.parametrize("overlay", ["own_tests", "prewritten_reports"])
def test_a_discarded_folder_is_said(overlay: str, tmp_path: Path, test_image: str) -> None:
    _, checkpoint, _ = evaluate(hostile(tmp_path, overlay), tmp_path, "local", test_image)

    # The problem's tests are staged in .evaluation_tests/ (the submission's own tests/ stays,
    # as under SCBench): a submission's .evaluation_tests/ is what is discarded.
    folder = ".evaluation_tests" if overlay == "own_tests" else ".scbench"
    assert any(f"submission's {folder} was discarded" in n for n in checkpoint["notices"])


def test_a_report_rewriter_is_killed_before_the_reports_are_written(
    tmp_path: Path, test_image: str
) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "report_rewriter"), tmp_path, "docker", test_image
    )

    assert code == 1, output
    assert group_counts(checkpoint) == BROKEN_COUNTS
    assert (
        "1 process(es) were still running after their command ended and were killed"
        in (checkpoint["warnings"])
    )


def test_runner_and_tests_cannot_be_changed_from_inside(tmp_path: Path, test_image: str) -> None:
    submission = hostile(tmp_path, "planting")
    # The second run uses the runner cache the first one tried to poison.
    for _ in range(2):
        code, checkpoint, output = evaluate(submission, tmp_path, "docker", test_image)

        assert code == 1, output
        assert group_counts(checkpoint) == BROKEN_COUNTS


# Three tests must each time out (1 s) within the session's 8 s.
@pytest.mark.serial
@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_submission_that_never_answers_times_out(
    executor: str, tmp_path: Path, test_image: str, nothing_survives: Path
) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "timeouts"),
        tmp_path,
        executor,
        test_image,
        "--timeout",
        "1",
        "--session-timeout",
        "8",
    )

    assert code == 1, output
    assert checkpoint["failure"]["kind"] == "timeout"
    # Without the per-test timeout the first test would wait for the submission for 10 s.
    # pytest-timeout's stack dump comes between a test's name and its outcome: FAILED may begin
    # a line.
    log = (tmp_path / CHECKPOINT_OUT / "pytest.log").read_text()
    assert len(re.findall(r"(?:^| )FAILED ", log, flags=re.M)) >= 3
    left = processes_of_the_test(nothing_survives).values()
    assert not any("scbench-hostile-sleeper" in cmdline for _, cmdline in left)


def test_a_fork_bomb_hits_the_process_limit(tmp_path: Path, test_image: str) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "fork_bomb"),
        tmp_path,
        "docker",
        test_image,
        "--pids-limit",
        "128",
        "--cpus",
        "1",
        "--timeout",
        "3",
    )

    # Starved of processes and CPU, pytest may fail inside; either way the checkpoint fails, as
    # the submission's doing, and says which limit it hit.
    assert code == 1, output
    assert checkpoint["passed"] is False
    assert checkpoint["failure"] is None or checkpoint["failure"]["kind"] == "resources"
    assert any("the process limit (128) was reached" in w for w in checkpoint["warnings"])


def test_a_memory_hog_hits_the_memory_limit(tmp_path: Path, test_image: str) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "memory_hog"), tmp_path, "docker", test_image, "--memory", "384m"
    )

    assert code == 1, output
    assert checkpoint["groups"]["Core"]["passed"] == 0
    assert any("the memory limit (384m) was reached" in w for w in checkpoint["warnings"])


def test_a_flood_is_capped_and_the_summary_stays_readable(tmp_path: Path, test_image: str) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "flood"), tmp_path, "docker", test_image, "--disk", "256m"
    )

    # The full disk leaves pytest no room for its reports: a fail of the submission's making, and
    # the result says why.
    assert code == 1, output
    assert checkpoint["failure"]["kind"] == "resources"
    assert "the disk limit (256m) was reached: /workspace full" in checkpoint["failure"]["message"]
    out = tmp_path / "out"
    assert (out / "wordstat/checkpoint_1/pytest.log").stat().st_size <= MAX_LOG_BYTES + 1024
    for test in checkpoint["tests"]:
        assert len(test["message"] or "") <= MAX_MESSAGE_CHARS + 100
        assert len(test["details"] or "") <= MAX_TRACEBACK_CHARS + 100
    summary = (out / "summary.md").read_text()
    assert len(summary.encode()) <= MAX_SUMMARY_BYTES
    assert summary.startswith("## ")


def test_the_tests_have_the_network_unless_it_is_cut(tmp_path: Path, test_image: str) -> None:
    submission = hostile(tmp_path, "network", base=SOLVED)

    code, checkpoint, output = evaluate(
        submission, tmp_path, "docker", test_image, "--no-test-network"
    )
    assert code == 0, output
    assert group_counts(checkpoint) == SOLVED_COUNTS

    # As in SCBench, by default.
    code, checkpoint, output = evaluate(submission, tmp_path, "docker", test_image)
    assert code == 1, output
    assert checkpoint["groups"]["Core"]["passed"] == 0
    assert "escaped: internet" in (tmp_path / CHECKPOINT_OUT / "pytest.log").read_text()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_links_and_specials_in_the_reports_folder_stay_inside(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "archive_escape"), tmp_path, executor, test_image
    )

    assert code == 1, output
    assert group_counts(checkpoint) == BROKEN_COUNTS
    out = tmp_path / "out"
    assert {path.name for path in out.iterdir()} == {
        "checkpoint_results.jsonl",
        "results.json",
        "summary.md",
        "wordstat",
    }
    expected = {
        "ctrf-report.json",
        "evaluation.json",
        "evaluation",  # SCBench's own files beside evaluation.json
        "pytest-report.json",
        "inventory.json",  # SCBench 1.0's inventory of the tests, as the runner took it
        "pytest.log",
        "quality.log",  # scb-check's own output
        "result.json",
        "result.sig",
        "setup.log",  # SCBench's setup, which runs for every submission
    }
    assert {path.name for path in (out / "wordstat/checkpoint_1").iterdir()} == expected
    assert not any(path.is_symlink() for path in out.rglob("*"))
    assert list(outside.iterdir()) == []
