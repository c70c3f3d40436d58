"""`scbench-ci evaluate` end to end on the bundled examples: exact counts per group, exit codes."""

import json
import os
import time
from pathlib import Path

import pytest

from scbench_ci.standalone.pytest_runner import SEAL_PREFIX, START_PREFIX
from testing.examples import (
    EXECUTOR,
    EXPECTED,
    SharedEvaluations,
    group_counts,
    scbench_evaluate,
)
from testing.results import checkpoint_documents
from testing.scbench_reader import all_current, read_output


@pytest.mark.parametrize(("problem", "checkpoint", "submission"), list(EXPECTED))
def test_example(
    problem: str, checkpoint: str, submission: str, shared_evaluations: SharedEvaluations
) -> None:
    exit_code, counts = EXPECTED[(problem, checkpoint, submission)]
    evaluated = shared_evaluations(problem, checkpoint, submission)
    run, results, output = evaluated.run, evaluated.results, evaluated.output
    assert run.returncode == exit_code, run.stdout + run.stderr
    (result,) = checkpoint_documents(results)
    assert group_counts(result) == counts
    assert result["failure"] is None
    assert results["passed"] is (exit_code == 0)
    assert (output / "results.json").is_file()
    for name in ("ctrf-report.json", "pytest-report.json", "pytest.log", "result.json"):
        assert (output / problem / checkpoint / name).is_file()


def test_wordstat_rules_are_visible_per_test(shared_evaluations: SharedEvaluations) -> None:
    results = shared_evaluations("wordstat", "checkpoint_2", "solutions/checkpoint_2").results
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


def test_wordstat_checkpoint_1_marker_named_ids_stay_core(
    shared_evaluations: SharedEvaluations,
) -> None:
    results = shared_evaluations("wordstat", "checkpoint_1", "solutions/checkpoint_1").results
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


def test_scbench_reads_the_evaluation_as_current(shared_evaluations: SharedEvaluations) -> None:
    """The paper's SCBench (testing/scbench_source/, unmodified) keeps our evaluation made by its
    rules (`--scbench paper`): its `eval` finds it current and the problem fully evaluated, its
    `CorrectnessResults` validates it; and the files beside evaluation.json are the session's
    output and its slimmed report. SCBench 1.0's files:
    tests/integration/test_scbench_1_0_files.py."""
    output = shared_evaluations(
        "wordstat", "checkpoint_1", "solutions/checkpoint_1", "--scbench", "paper"
    ).output
    checkpoint_dir = output / "wordstat" / "checkpoint_1"
    found = read_output(output)
    assert all_current(found), found
    assert found["wordstat"]["checkpoints"]["checkpoint_1"]["validates"]
    evaluation = json.loads((checkpoint_dir / "evaluation.json").read_text())
    stdout = (checkpoint_dir / "evaluation/stdout.txt").read_text()
    assert f"collected {evaluation['pytest_collected']} items" in stdout
    assert START_PREFIX not in stdout and SEAL_PREFIX not in stdout
    report = json.loads((checkpoint_dir / "evaluation/report.json").read_text())
    assert "collectors" not in report and "warnings" not in report
    assert len(report["tests"]) == sum(evaluation["total_counts"].values())
    assert all("stdout" not in (test.get("call") or {}) for test in report["tests"])
