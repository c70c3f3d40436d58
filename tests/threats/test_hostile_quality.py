"""Submissions hostile to the quality measure (scb-check parses them with native parsers, in the
sandbox, after the tests), through the real CLI: the tests' verdict is what the submission's code
earns, a missing measure says why, and a quality limit (`--fail-on "policy verbosity>0.2"`) holds
a submission to figures of all its source files or fails it: neither its own ignore files, nor
folder names, nor a measure it makes fail let it pass.

Each is the threat problem's passing submission (its `main.py` prints `ok`) with files added.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from testing.hostile_submissions import PARSER_CRASH, RUNS_APP, SLOPPY
from tests.threats.conftest import Threat, no_traceback

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("nothing_survives")]

LIMIT = ("--fail-on", "policy verbosity>0.2")


def judged(threat: Threat, *more: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """The run and the checkpoint's entry of results.json, after a run whose tests all passed."""
    run = threat.evaluate(*more)
    no_traceback(run)
    results = json.loads((threat.output / "results.json").read_text())
    (checkpoint,) = results["problems"][0]["checkpoints"]
    assert checkpoint["failure"] is None, run.stdout + run.stderr
    assert checkpoint["totals"]["passed"] == checkpoint["totals"]["total"] == 3
    return run, dict(checkpoint)


def evaluated(threat: Threat, *more: str) -> dict[str, Any]:
    """The checkpoint's entry of results.json, after a run whose tests all passed (exit 0)."""
    run, checkpoint = judged(threat, *more)
    assert run.returncode == 0, run.stdout + run.stderr
    return checkpoint


def failed_the_limit(threat: Threat, why: str) -> dict[str, Any]:
    """The checkpoint's entry, after a run under LIMIT that passed its tests and failed (exit 1)
    the limit for `why` (the verdict line's words)."""
    run, checkpoint = judged(threat, *LIMIT)
    assert run.returncode == 1, run.stdout + run.stderr
    assert checkpoint["passed"] is True
    assert f"Verdict: FAILED (code quality fails the --fail-on limits: demo/checkpoint_1 {why}" in (
        run.stdout
    ), run.stdout
    return checkpoint


def test_a_gitignore_and_an_ignore_comment_decide_nothing_of_the_measure(threat: Threat) -> None:
    """Without `--include-all` scb-check skipped what the `.gitignore` names (the figures of a
    two-line main.py passed the limit), and an ignore comment it rejects made the measure fail
    (a missing measure passed every limit)."""
    (threat.submission / "main.py").write_text(RUNS_APP)
    (threat.submission / "app.py").write_text(f"{SLOPPY}x = 1  # scbc ignore[not-a-rule]\n")
    (threat.submission / ".gitignore").write_text("app.py\n")

    checkpoint = failed_the_limit(threat, "verbosity 0.9")

    measures = checkpoint["quality"]["measures"]
    assert (measures["files_scanned"], measures["verbosity"] > 0.9) == (2, True)
    assert checkpoint["quality"]["unmeasured"] == {"count": 0, "files": []}


def test_code_in_a_build_folder_or_a_file_its_parser_cannot_read_is_named(threat: Threat) -> None:
    """scb-check skips a folder named like build output and a file its parser cannot read (a
    Latin-1 file with a non-ASCII name in it, which Python runs), even with `--include-all`,
    without a word: the figures of main.py alone passed the limit."""
    (threat.submission / "build").mkdir()
    (threat.submission / "build/app.py").write_text(SLOPPY)
    (threat.submission / "legacy.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n\xe9t\xe9 = 1\n" + SLOPPY.encode()
    )
    (threat.submission / "main.py").write_text(
        "import os, sys\n\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'build'))\n"
        "from legacy import \xe9t\xe9\nfrom app import run\n\nrun()\n"
    )

    checkpoint = failed_the_limit(
        threat, "left 2 source files of the submission unmeasured: build/app.py, legacy.py)"
    )

    assert checkpoint["quality"]["measures"]["files_scanned"] == 1
    assert checkpoint["quality"]["unmeasured"] == {
        "count": 2,
        "files": ["build/app.py", "legacy.py"],
    }


def test_a_file_that_crashes_the_parser_leaves_the_verdict_and_fails_a_limit(
    threat: Threat,
) -> None:
    threat.submission_prints("ok")
    (threat.submission / "deep.py").write_text(PARSER_CRASH)

    quality = failed_the_limit(threat, "not measured: scb-check failed")["quality"]

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
