"""Submissions hostile to the quality measure (scb-check parses them with native parsers, in the
sandbox, after the tests), through the real CLI: the tests' verdict is what the submission's code
earns, and a missing measure says why.

Each is the threat problem's passing submission (its `main.py` prints `ok`) with files added.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from testing.hostile_submissions import PARSER_CRASH
from tests.threats.conftest import Threat, no_traceback

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("nothing_survives")]


def evaluated(threat: Threat, *more: str) -> dict[str, Any]:
    """The checkpoint's entry of results.json, after a run whose tests all passed (exit 0)."""
    run = threat.evaluate(*more)
    no_traceback(run)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((threat.output / "results.json").read_text())
    (checkpoint,) = results["problems"][0]["checkpoints"]
    assert checkpoint["failure"] is None
    assert checkpoint["totals"]["passed"] == checkpoint["totals"]["total"] == 3
    return dict(checkpoint)


def test_a_file_that_crashes_the_parser_leaves_the_verdict_and_says_why(threat: Threat) -> None:
    threat.submission_prints("ok")
    (threat.submission / "deep.py").write_text(PARSER_CRASH)

    quality = evaluated(threat)["quality"]

    assert quality["measures"] is None
    assert quality["reason"] == (
        "scb-check failed with exit code 1: TokenError: ('too many nested parentheses', (1, 205))"
    )


def test_links_out_of_the_submission_are_neither_followed_nor_measured(threat: Threat) -> None:
    threat.submission_prints("ok")
    os.symlink("/etc/passwd", threat.submission / "passwd.py")
    (threat.outside / "secret.py").write_text("def secret():\n    return 42\n")
    os.symlink(threat.outside / "secret.py", threat.submission / "secret.py")

    checkpoint = evaluated(threat)

    # SCBench 1.0's snapshot leaves every link out; it is said, with the names.
    assert any("symlink(s) of the submission were left out" in w for w in checkpoint["warnings"])
    measures = checkpoint["quality"]["measures"]
    assert measures is not None, checkpoint["quality"]
    assert (measures["files_scanned"], measures["total_loc"]) == (1, 1)  # main.py alone


def test_no_quality_measures_nothing(threat: Threat) -> None:
    threat.submission_prints("ok")
    (threat.submission / "deep.py").write_text(PARSER_CRASH)

    checkpoint = evaluated(threat, "--no-quality")

    assert checkpoint["quality"] is None
    assert "quality" not in checkpoint["phases"]
