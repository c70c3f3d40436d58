"""scbench_format.py under SCBench 1.0's rules: its `evaluation.json` (three buckets, four
groups counted, the collection hash, its infrastructure flag), its report without what
scbench-ci's runner adds, and its `checkpoint_results.jsonl` row (`get_evaluation_metrics` at
0a2e7bec: strict, core and isolated pass rates, `delta.*` after another checkpoint). The
whole files are held to SCBench 1.0's own in tests/integration/test_scbench_1_0_files.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.scbench_runner import V1_0
from scbench_ci.job.reports import Reports, Status
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Problem
from scbench_ci.results.inventory import tc_hash
from scbench_ci.results.judge import judge_checkpoint
from scbench_ci.results.model import CheckpointResult
from scbench_ci.results.scbench_format import (
    checkpoint_results_row,
    evaluation_json,
    write_evaluation,
)
from scbench_ci.trust.seal import Seal
from testing.problems import ProblemFolder
from testing.results import make_outcome

OWN = ".evaluation_tests/test_checkpoint_2.py"


@pytest.fixture
def problem(tmp_path: Path) -> Problem:
    folder = ProblemFolder(
        tmp_path / "problem",
        {
            "name": "demo",
            "version": 2,
            "entry_file": "main",
            "markers": {"slow": {"description": "slow", "group": "Functionality"}},
            "checkpoints": {"checkpoint_1": {}, "checkpoint_2": {"version": 3}},
        },
    )
    return load_problem(folder.root)


def _inventory(ids: list[str], collected: int) -> bytes:
    passes = [
        {"marker": "error", "keyword": "checkpoint_2", "exit": 0, "ids": [f"{OWN}::err"]},
        {"marker": None, "keyword": "checkpoint_2", "exit": 0, "ids": ids},
    ]
    return json.dumps(
        {"collected": collected, "taken_by": "session", "reasons": [], "passes": passes}
    ).encode()


@pytest.fixture
def judged(problem: Problem, tmp_path: Path) -> CheckpointResult:
    """checkpoint_2: a problem-defined marker (Core by the inventory), an xfailed test (its own
    bucket), an error, an id with a space (not in the inventory), one never reported."""
    outcomes = (
        make_outcome("slow_case", Status.PASSED, "slow", file="test_checkpoint_2.py"),
        make_outcome("xf", Status.XFAILED, file="test_checkpoint_2.py"),
        make_outcome("err", Status.ERROR, file="test_checkpoint_2.py"),
        make_outcome("p[a b]", Status.PASSED, file="test_checkpoint_2.py"),
        make_outcome("old", Status.PASSED),
    )
    ids = [f"{OWN}::{name}" for name in ("slow_case", "xf", "err", "never")]
    checkpoint = problem.checkpoint("checkpoint_2")
    return judge_checkpoint(
        problem,
        checkpoint,
        include_prior_tests=True,
        execution=ExecutionResult(
            exit_code=1, setup_exit_code=None, timed_out_in=None, duration_s=1.5
        ),
        seal=Seal(killed=0),
        reports=Reports(tests=outcomes, exit_code=1, collection_errors=(), problems=()),
        log_dir=tmp_path,
        policy_name="core-cases",
        session_timeout_s=60,
        warnings=(),
        scbench=V1_0,
        inventory=_inventory([*ids, ".evaluation_tests/test_checkpoint_1.py::old"], 5),
        inventory_expected=True,
    )


def test_evaluation_json_is_scbench_1_0_s(problem: Problem, judged: CheckpointResult) -> None:
    document = evaluation_json(problem, judged, entrypoint="uv run main.py", scbench=V1_0)
    assert document is not None
    assert list(document) == [
        "schema_version",
        "problem_name",
        "problem_version",
        "checkpoint_name",
        "checkpoint_version",
        "duration",
        "entrypoint",
        "tests",
        "pass_counts",
        "total_counts",
        "pytest_exit_code",
        "pytest_collected",
        "test_collection_hash",
        "infrastructure_failure",
    ]
    assert document["tests"] == {
        # The inventory's first, by node id; then the one it does not hold.
        "checkpoint_1-Regression": {"passed": ["old"], "failed": [], "skipped": []},
        "checkpoint_2-Error": {"passed": [], "failed": ["err"], "skipped": []},
        "checkpoint_2-Core": {
            "passed": ["slow_case", "p[a b]"],
            "failed": ["never"],
            "skipped": ["xf"],
        },
    }
    assert document["pass_counts"] == {"Core": 2, "Functionality": 0, "Regression": 1, "Error": 0}
    # Every test counts, the xfailed one and the one never reported too.
    assert document["total_counts"] == {"Core": 4, "Functionality": 0, "Regression": 1, "Error": 1}
    assert document["pytest_collected"] == 5
    assert document["test_collection_hash"] == tc_hash(
        {
            "checkpoint_1-Regression": ["old"],
            "checkpoint_2-Core": ["never", "slow_case", "xf"],
            "checkpoint_2-Error": ["err"],
        }
    )
    # A collected test was never reported.
    assert document["infrastructure_failure"] is True


def test_the_row_is_what_scbench_1_0_s_metrics_derive(
    problem: Problem, judged: CheckpointResult
) -> None:
    row = checkpoint_results_row(problem, judged, path="run/demo", scbench=V1_0, after_another=True)
    assert row == {
        "problem": "demo",
        "version": 2,
        "checkpoint": "checkpoint_2",
        "path": "run/demo",
        "idx": 2,
        "state": "unknown",
        "is_first": False,
        "is_last": True,
        "strict_pass_rate": 3 / 6,
        "core_pass_rate": 2 / 4,
        "isolated_pass_rate": 2 / 5,
        "total_tests": 6,
        "passed_tests": 3,
        "core_total": 4,
        "core_passed": 2,
        "functionality_total": 0,
        "functionality_passed": 0,
        "error_total": 1,
        "error_passed": 0,
        "regression_total": 1,
        "regression_passed": 1,
        "delta.loc": 0.0,
        "delta.ast_grep_violations": 0.0,
        "delta.churn_ratio": 0.0,
    }
    first = checkpoint_results_row(problem, judged, path="run/demo", scbench=V1_0)
    assert not any(key.startswith("delta.") for key in first)


def test_the_report_beside_it_has_nothing_scbench_ci_s_runner_added(
    problem: Problem, judged: CheckpointResult, tmp_path: Path
) -> None:
    report = {
        "exitcode": 1,
        "collectors": [],
        "tests": [{"nodeid": "t.py::a", "outcome": "passed", "markers": ["slow"], "reruns": 1}],
    }
    document = evaluation_json(problem, judged, entrypoint="uv run main.py", scbench=V1_0)
    assert document is not None
    write_evaluation(tmp_path, document, scbench=V1_0, report=report)
    written = json.loads((tmp_path / "evaluation/report.json").read_text())
    assert written == {"exitcode": 1, "tests": [{"nodeid": "t.py::a", "outcome": "passed"}]}


@pytest.mark.parametrize(
    ("rule", "keys"),
    [
        ("skipped_bucket", {"tests"}),
        ("every_group_counted", {"pass_counts", "total_counts"}),
        ("collection_hash", {"test_collection_hash"}),
    ],
)
def test_each_difference_of_evaluation_json_is_the_runner_s_own_rule(
    problem: Problem, judged: CheckpointResult, rule: str, keys: set[str]
) -> None:
    """Each rule of `ScbenchRunner` decides its part of the file and nothing else."""
    full = evaluation_json(problem, judged, entrypoint="uv run main.py", scbench=V1_0)
    without = evaluation_json(
        problem, judged, entrypoint="uv run main.py", scbench=replace(V1_0, **{rule: False})
    )
    assert full is not None and without is not None
    assert {key for key in full.keys() | without.keys() if full.get(key) != without.get(key)} == (
        keys
    )


def test_the_row_and_report_follow_their_own_rules(
    problem: Problem, judged: CheckpointResult, tmp_path: Path
) -> None:
    paper_row = replace(V1_0, strict_rates=False)
    row = checkpoint_results_row(problem, judged, path="run/demo", scbench=paper_row)
    assert "pass_rate" in row and "duration" in row and "strict_pass_rate" not in row
    report = {"tests": [{"nodeid": "t.py::a", "outcome": "passed", "markers": ["slow"]}]}
    document = evaluation_json(problem, judged, entrypoint="uv run main.py", scbench=V1_0)
    assert document is not None
    write_evaluation(tmp_path, document, scbench=replace(V1_0, bare_report=False), report=report)
    written = json.loads((tmp_path / "evaluation/report.json").read_text())
    assert written["tests"][0]["markers"] == ["slow"]
