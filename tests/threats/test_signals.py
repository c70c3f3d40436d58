"""A submission that stops the test runner early gains nothing by it (Docker executor only: on
the local executor its SIGINT would reach every process of the user running the suite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.examples import scbench_evaluate
from testing.hostile_submissions import (
    SOLVED,
    hostile,
)
from testing.results import checkpoint_documents

pytestmark = pytest.mark.usefixtures("nothing_survives")

STOPPED_TEST = "tests/test_checkpoint_1.py::test_counts_simple_file"
"""The first test: the one running when the submission sends SIGINT."""


def test_sigint_to_every_process_regresses_what_did_not_run(
    tmp_path: Path, test_image: str
) -> None:
    image = ("--image", test_image)
    baseline_run, baseline = scbench_evaluate(
        "wordstat", "checkpoint_1", SOLVED, tmp_path / "baseline", *image, executor="docker"
    )
    assert baseline_run.returncode == 0, baseline_run.stdout + baseline_run.stderr
    (before,) = checkpoint_documents(baseline)
    passing = {t["id"] for t in before["tests"] if t["status"] == "passed"}
    assert len(passing) == 14

    run, results = scbench_evaluate(
        "wordstat",
        "checkpoint_1",
        str(hostile(tmp_path, "interrupter", base=SOLVED)),
        tmp_path / "out",
        *image,
        "--baseline",
        str(tmp_path / "baseline"),
        "--fail-on",
        "regressions",
        executor="docker",
    )

    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "Traceback" not in output
    (checkpoint,) = checkpoint_documents(results)
    assert checkpoint["passed"] is False
    assert checkpoint["failure"]["kind"] == "interrupted"
    statuses = {t["id"]: t["status"] for t in checkpoint["tests"]}
    assert statuses.pop(STOPPED_TEST) == "error"
    # SCBench 1.0's inventory: each test that never ran counts as failed.
    assert set(statuses.values()) == {"failed"} and len(statuses) == 14
    assert checkpoint["totals"]["passed"] == 0
    comparison = results["comparison"]
    assert {c["test"] for c in comparison["regressions"]} == passing
    assert comparison["totals"]["removed"] == 0
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == results
