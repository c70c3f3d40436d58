"""Submissions hostile to the quality measure (scb-check parses them with native parsers, in the
sandbox, after the tests), through the real CLI: the tests' verdict is what it would be without
the measure, and a missing measure says why.

Each is wordstat's reference solution with files added (`testing/hostile_submissions.py`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.examples import group_counts
from testing.hostile_submissions import (
    EXECUTORS,
    PARSER_CRASH,
    SOLVED_COUNTS,
    evaluate,
    quality_hostile,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("nothing_survives")]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_file_that_crashes_the_parser_leaves_the_verdict_and_says_why(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    submission = quality_hostile(tmp_path, {"deep.py": PARSER_CRASH})

    code, checkpoint, output = evaluate(submission, tmp_path, executor, test_image)

    assert code == 0, output
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == SOLVED_COUNTS
    quality = checkpoint["quality"]
    assert quality["measures"] is None
    assert quality["reason"].startswith("scb-check failed with exit code")
    if executor == "docker":
        assert "too many nested parentheses" in quality["reason"]


def test_links_out_of_the_submission_are_neither_followed_nor_measured(
    tmp_path: Path, test_image: str
) -> None:
    submission = quality_hostile(tmp_path, {})
    os.symlink("/etc/passwd", submission / "passwd.py")
    os.symlink("../../../outside.py", submission / "outside.py")
    (tmp_path / "outside.py").write_text("def secret():\n    return 42\n")

    code, checkpoint, output = evaluate(submission, tmp_path, "docker", test_image)

    assert code == 0, output
    assert group_counts(checkpoint) == SOLVED_COUNTS
    assert any("point outside it and were left out" in w for w in checkpoint["warnings"])
    measures = checkpoint["quality"]["measures"]
    assert measures is not None, checkpoint["quality"]
    assert measures["files_scanned"] == 1  # wordstat.py alone


def test_no_quality_measures_nothing(tmp_path: Path, test_image: str) -> None:
    submission = quality_hostile(tmp_path, {"deep.py": PARSER_CRASH})

    code, checkpoint, output = evaluate(submission, tmp_path, "docker", test_image, "--no-quality")

    assert code == 0, output
    assert checkpoint["quality"] is None
    assert "quality" not in checkpoint["phases"]
