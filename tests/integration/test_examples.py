"""`scbench-ci evaluate` end to end on the bundled examples: exact counts per group, exit codes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import EXAMPLES, REPO_ROOT, checkpoint_documents

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
EXECUTOR = os.environ.get("SCBENCH_TEST_EXECUTOR", "local")

# (passed, failed, skipped, total) per group: Core, Functionality, Error, Regression.
Counts = dict[str, tuple[int, int, int, int]]
# fmt: off
EXPECTED: dict[tuple[str, str, str], tuple[int, Counts]] = {
    ("wordstat", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (7, 0, 1, 8), "Functionality": (2, 0, 0, 2), "Error": (4, 0, 0, 4),
        "Regression": (1, 0, 0, 1)}),
    ("wordstat", "checkpoint_2", "solutions/checkpoint_2"): (0, {
        "Core": (7, 0, 0, 7), "Functionality": (2, 1, 0, 3), "Error": (4, 0, 0, 4),
        "Regression": (15, 0, 1, 16)}),
    ("wordstat", "checkpoint_3", "solutions/checkpoint_3"): (0, {
        "Core": (7, 0, 0, 7), "Functionality": (2, 0, 0, 2), "Error": (2, 0, 0, 2),
        "Regression": (1, 0, 0, 1)}),
    ("wordstat", "checkpoint_1", "submissions/broken"): (1, {
        "Core": (2, 5, 1, 8), "Functionality": (0, 2, 0, 2), "Error": (3, 1, 0, 4),
        "Regression": (0, 1, 0, 1)}),
    ("wordstat", "checkpoint_2", "submissions/broken"): (1, {
        "Core": (0, 7, 0, 7), "Functionality": (0, 3, 0, 3), "Error": (3, 1, 0, 4),
        "Regression": (4, 11, 1, 16)}),
    ("wordstat", "checkpoint_3", "submissions/broken"): (1, {
        "Core": (0, 7, 0, 7), "Functionality": (0, 2, 0, 2), "Error": (1, 1, 0, 2),
        "Regression": (0, 1, 0, 1)}),
    ("kvserver", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (3, 0, 0, 3),
        "Regression": (0, 0, 0, 0)}),
    ("kvserver", "checkpoint_2", "solutions/checkpoint_2"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (1, 0, 0, 1),
        "Regression": (7, 0, 0, 7)}),
    ("marks", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (4, 0, 0, 4), "Functionality": (2, 6, 2, 10), "Error": (4, 1, 2, 7),
        "Regression": (0, 1, 0, 1)}),
    # The tests run the entry from a folder of their own: `uv run` there finds the test
    # dependencies (pyyaml) in the runner's environment, as under SCBench's uvx.
    ("settings", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (3, 0, 0, 3), "Functionality": (1, 0, 0, 1), "Error": (1, 0, 0, 1),
        "Regression": (0, 0, 0, 0)}),
    # The tests read stderr as JSON: the first `uv run` after setup prints nothing there.
    ("jsonlog", "checkpoint_1", "solutions/checkpoint_1"): (0, {
        "Core": (4, 0, 0, 4), "Functionality": (0, 0, 0, 0), "Error": (1, 0, 0, 1),
        "Regression": (0, 0, 0, 0)}),
    # No Core test (the module is marked slow): core-cases never passes.
    ("marks", "checkpoint_2", "solutions/checkpoint_2"): (1, {
        "Core": (0, 0, 0, 0), "Functionality": (2, 0, 0, 2), "Error": (1, 0, 0, 1),
        "Regression": (1, 0, 0, 1)}),
}
# fmt: on


def scbench_evaluate(
    problem: str,
    checkpoint: str,
    submission: str,
    output: Path,
    *extra: str,
    executor: str = EXECUTOR,
    cwd: Path | None = None,
    tmpdir: Path | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`tmpdir`: the TMPDIR of the run, where its scratch folders (the workspace) go."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            "--problem",
            str(EXAMPLES / problem),
            "--checkpoint",
            checkpoint,
            "--submission",
            str(EXAMPLES / problem / submission),
            "--output",
            str(output),
            "--executor",
            executor,
            "--quiet",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=None if tmpdir is None else {**os.environ, "TMPDIR": str(tmpdir)},
    )
    results = json.loads((output / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return run, results


def group_counts(checkpoint: dict) -> Counts:
    return {
        name: (g["passed"], g["failed"], g["skipped"], g["total"])
        for name, g in checkpoint["groups"].items()
    }


@pytest.mark.parametrize(("problem", "checkpoint", "submission"), list(EXPECTED))
def test_example(problem: str, checkpoint: str, submission: str, tmp_path: Path) -> None:
    exit_code, counts = EXPECTED[(problem, checkpoint, submission)]
    run, results = scbench_evaluate(problem, checkpoint, submission, tmp_path)
    assert run.returncode == exit_code, run.stdout + run.stderr
    (result,) = checkpoint_documents(results)
    assert group_counts(result) == counts
    assert result["failure"] is None
    assert results["passed"] is (exit_code == 0)
    assert (tmp_path / "results.json").is_file()
    for name in ("ctrf-report.json", "pytest-report.json", "pytest.log", "result.json"):
        assert (tmp_path / problem / checkpoint / name).is_file()


def test_wordstat_rules_are_visible_per_test(tmp_path: Path) -> None:
    _, results = scbench_evaluate("wordstat", "checkpoint_2", "solutions/checkpoint_2", tmp_path)
    tests = {t["id"]: t for t in checkpoint_documents(results)[0]["tests"]}
    by_name = {test_id.split("::", 1)[1]: t for test_id, t in tests.items()}
    # A parameter id equal to a marker name is a keyword, not a marker.
    assert by_name["test_counts[error]"]["group"] == "Regression"  # a checkpoint_1 file
    assert by_name["test_counts[error]"]["markers"] == []
    # The fixture that errors in setup, and the xfail from checkpoint_1 as Regression.
    assert by_name["test_top_matches_frequency_table"]["status"] == "error"
    assert by_name["test_top_matches_frequency_table"]["group"] == "Functionality"
    assert by_name["test_hyphenated_words_split"]["status"] == "xfailed"
    assert by_name["test_hyphenated_words_split"]["checkpoint"] == "checkpoint_1"
    # Every test of the evaluated checkpoint's own file belongs to it; prior files are Regression.
    for test in tests.values():
        if test["file"] == "tests/test_checkpoint_1.py":
            assert (test["checkpoint"], test["group"]) == ("checkpoint_1", "Regression")
        else:
            assert test["checkpoint"] == "checkpoint_2"


def test_wordstat_checkpoint_1_marker_named_ids_stay_core(tmp_path: Path) -> None:
    _, results = scbench_evaluate("wordstat", "checkpoint_1", "solutions/checkpoint_1", tmp_path)
    groups = {
        t["id"].split("::", 1)[1]: t["group"] for t in checkpoint_documents(results)[0]["tests"]
    }
    assert groups["test_counts[error]"] == "Core"
    assert groups["test_counts[functionality]"] == "Core"


def test_wordstat_all_checkpoints(tmp_path: Path) -> None:
    run, results = scbench_evaluate("wordstat", "all", "solutions/{checkpoint}", tmp_path)
    assert run.returncode == 0
    checkpoints = checkpoint_documents(results)
    assert [c["name"] for c in checkpoints] == ["checkpoint_1", "checkpoint_2", "checkpoint_3"]
    for checkpoint in checkpoints:
        key = ("wordstat", checkpoint["name"], f"solutions/{checkpoint['name']}")
        assert group_counts(checkpoint) == EXPECTED[key][1]
    assert [c["include_prior_tests"] for c in checkpoints] == [True, True, False]
    for checkpoint in checkpoints:
        assert (tmp_path / "wordstat" / checkpoint["name"] / "pytest-report.json").is_file()


def _leftovers(tmpdir: Path) -> list[str]:
    """The leaky server's processes still running in a workspace of this test's runs (another
    test session's runs are elsewhere)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        leaky = "kvserver-leak-canary" in cmdline or "kvserver.py --port" in cmdline
        if state != "Z" and leaky and cwd.startswith(str(tmpdir)):
            found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.mark.parametrize("checkpoint", ["checkpoint_1", "checkpoint_2"])
def test_a_leaky_server_does_not_outlive_the_run(checkpoint: str, tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    started = time.monotonic()
    run, results = scbench_evaluate(
        "kvserver", checkpoint, "submissions/leaky", tmp_path / "out", tmpdir=tmpdir
    )
    assert run.returncode == 0, run.stdout
    (result,) = checkpoint_documents(results)
    assert group_counts(result) == EXPECTED[("kvserver", checkpoint, f"solutions/{checkpoint}")][1]
    assert _leftovers(tmpdir) == []
    if EXECUTOR == "local":
        assert any(
            "were still running after their command ended and were killed" in w
            for w in result["warnings"]
        )
    assert time.monotonic() - started < 120
