import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.scbench_runner import PAPER
from scbench_ci.job.reports import Reports, Status, TestOutcome
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Group, Problem
from scbench_ci.results.judge import judge_checkpoint, unrun_result
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind
from scbench_ci.results.scbench_format import (
    GROUP_TYPES,
    STATUSES,
    checkpoint_results_row,
    evaluation_json,
    write_checkpoint_results,
    write_evaluation,
)
from scbench_ci.trust.seal import Broken, Seal
from testing.problems import ProblemFolder
from testing.results import make_outcome
from testing.scbench_reader import read_output

_outcome = functools.partial(make_outcome, file="test_checkpoint_2.py")
ENTRYPOINT = "python main.py"
SEALED = Seal(killed=0)
RUN_PATH = "out/run/demo"

# ---------------------------------------------------------------------------------------------
# SCBench's side, transcribed from SprocketLab/slop-code-bench so that drift shows up here.
#
# CorrectnessResults.to_output_dict(), the whole of evaluation.json:
#   src/slop_code/evaluation/report.py @ 203534aadf24c47d79ccb463d084c2dc99ff5b1c
#   (model_config extra="forbid"; fields without a default are required; `tests` in the grouped
#   form of `_group_tests_for_serialization`; stdout, stderr, pytest_ctrf_report and
#   pytest_json_report are excluded from the file). The keys get_evaluation_metrics reads
#   (total_counts, pass_counts, duration) are among the required ones.
# ---------------------------------------------------------------------------------------------
GROUP_TYPE_VALUES = ["Core", "Functionality", "Regression", "Error"]  # report.py GroupType
TEST_STATUS_VALUES = ["passed", "failed", "skipped", "error"]  # report.py TestResult.status
_COUNTS = {
    "type": "object",
    "propertyNames": {"enum": GROUP_TYPE_VALUES},
    "additionalProperties": {"type": "integer"},
}
EVALUATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "problem_name",
        "problem_version",
        "checkpoint_name",
        "checkpoint_version",
        "duration",
        "entrypoint",
        "pytest_exit_code",
        "pytest_collected",
        # Fields with defaults: model_dump() writes them all the same.
        "schema_version",
        "tests",
        "pass_counts",
        "total_counts",
        "infrastructure_failure",
    ],
    "properties": {
        "schema_version": {"const": 1},  # EVALUATION_SCHEMA_VERSION, report.py @ feeab5a
        "problem_name": {"type": "string"},
        "problem_version": {"type": "integer"},
        "checkpoint_name": {"type": "string"},
        "checkpoint_version": {"type": "integer"},
        "duration": {"type": "number"},
        "entrypoint": {"type": "string"},
        "tests": {
            "type": "object",
            "propertyNames": {"pattern": "^.+-(Core|Functionality|Regression|Error)$"},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["passed", "failed"],
                "properties": {
                    "passed": {"type": "array", "items": {"type": "string"}},
                    "failed": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "pass_counts": _COUNTS,
        "total_counts": _COUNTS,
        "pytest_exit_code": {"type": "integer"},
        "pytest_collected": {"type": "integer"},
        "infrastructure_failure": {"type": "boolean"},
    },
}


def scbench_evaluation_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """get_evaluation_metrics after its json.load, as in
    src/slop_code/metrics/checkpoint/extractors.py @ 66d8e34062180623b27d602d9e58e535bf502fc1."""
    tests_by_type = {t: {"passed": 0, "total": 0} for t in ("core", "functionality", "error")}
    tests_by_type["regression"] = {"passed": 0, "total": 0}
    checkpoint_passed = checkpoint_total = 0
    total_passed = total_total = 0
    core_passed = core_total = 0
    for c_type, c_total in metrics["total_counts"].items():
        c_passed = metrics["pass_counts"].get(c_type, 0)
        type_key = c_type.lower()
        if type_key in tests_by_type:
            tests_by_type[type_key]["passed"] = c_passed
            tests_by_type[type_key]["total"] = c_total
        if c_type == "Core":
            core_passed += c_passed
            core_total += c_total
        if c_type != "Regression":
            checkpoint_passed += c_passed
            checkpoint_total += c_total
        total_passed += c_passed
        total_total += c_total
    return {
        "pass_rate": total_passed / total_total if total_total > 0 else 0,
        "core_pass_rate": core_passed / core_total if core_total > 0 else 0,
        "checkpoint_pass_rate": (
            checkpoint_passed / checkpoint_total if checkpoint_total > 0 else 0
        ),
        "duration": metrics["duration"],
        "total_tests": total_total,
        "passed_tests": total_passed,
        "core_total": tests_by_type["core"]["total"],
        "core_passed": tests_by_type["core"]["passed"],
        "functionality_total": tests_by_type["functionality"]["total"],
        "functionality_passed": tests_by_type["functionality"]["passed"],
        "error_total": tests_by_type["error"]["total"],
        "error_passed": tests_by_type["error"]["passed"],
        "regression_total": tests_by_type["regression"]["total"],
        "regression_passed": tests_by_type["regression"]["passed"],
    }


def scbench_evaluation_metrics_strict(metrics: dict[str, Any]) -> dict[str, Any]:
    """The other stored version of get_evaluation_metrics (extractors.py @
    33d4281d1c6260fa3a0f223d305dca53a272044f): no guard against empty counts."""
    total_counts = metrics["total_counts"]
    pass_counts = metrics["pass_counts"]
    total_passed = sum(pass_counts.values())
    total_total = sum(total_counts.values())
    checkpoint_passed = total_passed - pass_counts.get("Regression", 0)
    checkpoint_total = total_total - total_counts.get("Regression", 0)
    return {
        "pass_rate": total_passed / total_total,
        "core_pass_rate": pass_counts.get("Core", 0) / total_counts["Core"],
        "checkpoint_pass_rate": checkpoint_passed / checkpoint_total,
        "duration": metrics["duration"],
        "total_tests": total_total,
        "passed_tests": total_passed,
        "core_total": total_counts["Core"],
        "core_passed": pass_counts.get("Core", 0),
        "functionality_total": total_counts.get("Functionality", 0),
        "functionality_passed": pass_counts.get("Functionality", 0),
        "error_total": total_counts.get("Error", 0),
        "error_passed": pass_counts.get("Error", 0),
        "regression_total": total_counts.get("Regression", 0),
        "regression_passed": pass_counts.get("Regression", 0),
    }


def scbench_evaluation_metrics_oldest(metrics: dict[str, Any]) -> dict[str, Any]:
    """The oldest stored version (src/slop_code/metrics/checkpoint_results.py @
    6b31994d0b22010172bf11f909fa9b6e774b3315): it walks `pass_counts`, not `total_counts`."""
    by_type = {t: {"passed": 0, "total": 0} for t in ("core", "functionality", "error")}
    by_type["regression"] = {"passed": 0, "total": 0}
    checkpoint_passed = checkpoint_total = total_passed = total_total = 0
    core_passed = core_total = 0
    for c_type, c_passed in metrics["pass_counts"].items():
        c_total = metrics["total_counts"][c_type]
        if c_type.lower() in by_type:
            by_type[c_type.lower()] = {"passed": c_passed, "total": c_total}
        if c_type == "Core":
            core_passed += c_passed
            core_total += c_total
        if c_type != "Regression":
            checkpoint_passed += c_passed
            checkpoint_total += c_total
        total_passed += c_passed
        total_total += c_total
    return {
        "pass_rate": total_passed / total_total if total_total > 0 else 0,
        "core_pass_rate": core_passed / core_total if core_total > 0 else 0,
        "checkpoint_pass_rate": checkpoint_passed / checkpoint_total if checkpoint_total else 0,
        "duration": metrics["duration"],
        "total_tests": total_total,
        "passed_tests": total_passed,
        **{f"{t}_total": by_type[t]["total"] for t in by_type},
        **{f"{t}_passed": by_type[t]["passed"] for t in by_type},
    }


# create_problem_reports (src/slop_code/entrypoints/evaluation/metrics.py @
# 1c1b2a5a1cbf412c73689503194d57079a2f190f) puts these first, then get_checkpoint_metrics
# (src/slop_code/metrics/checkpoint/driver.py @ the same commit) adds is_first and is_last and the
# evaluation, inference, quality and rubric fields of the files it finds.
ROW_HEAD = ["problem", "version", "checkpoint", "path", "idx", "state", "is_first", "is_last"]
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def problem(tmp_path: Path) -> Problem:
    folder = ProblemFolder(
        tmp_path / "problem",
        {
            "name": "demo",
            "version": 2,
            "entry_file": "main",
            "checkpoints": {
                "checkpoint_1": {},
                "checkpoint_2": {"version": 3},
                "checkpoint_3": {},
            },
        },
    )
    return load_problem(folder.root)


def _judge(
    problem: Problem,
    name: str,
    *outcomes: TestOutcome,
    exit_code: int = 1,
    seal: Seal | Broken = SEALED,
    tmp_path: Path,
    flaky_passes: bool = False,
) -> CheckpointResult:
    checkpoint = problem.checkpoint(name)
    return judge_checkpoint(
        problem,
        checkpoint,
        include_prior_tests=True,
        execution=ExecutionResult(
            exit_code=exit_code, setup_exit_code=None, timed_out_in=None, duration_s=1.5
        ),
        seal=seal,
        reports=Reports(tests=outcomes, exit_code=exit_code, collection_errors=(), problems=()),
        log_dir=tmp_path,
        policy_name="core-cases",
        session_timeout_s=60,
        warnings=(),
        scbench=PAPER,
        flaky_passes=flaky_passes,
    )


def _unrun(problem: Problem, name: str) -> CheckpointResult:
    failure = Failure(FailureKind.INFRASTRUCTURE, "the Docker daemon is not reachable")
    return unrun_result(problem.checkpoint(name), True, failure)


@pytest.fixture
def mixed(problem: Problem, tmp_path: Path) -> CheckpointResult:
    """checkpoint_2 with every status and every group."""
    return _judge(
        problem,
        "checkpoint_2",
        make_outcome("test_old", Status.PASSED),
        _outcome("test_core_a", Status.PASSED),
        _outcome("test_core_b", Status.FAILED, message="assert 1 == 2"),
        _outcome("test_param[x]", Status.XPASSED),
        _outcome("test_extra", Status.SKIPPED, "functionality"),
        _outcome("test_bad_input", Status.XFAILED, "error"),
        _outcome("test_crash", Status.ERROR, "error"),
        tmp_path=tmp_path,
    )


def test_evaluation_json_is_scbench_correctness_results(
    problem: Problem, mixed: CheckpointResult
) -> None:
    assert evaluation_json(problem, mixed, entrypoint=ENTRYPOINT, scbench=PAPER) == {
        "schema_version": 1,
        "problem_name": "demo",
        "problem_version": 2,
        "checkpoint_name": "checkpoint_2",
        "checkpoint_version": 3,
        "duration": 1.5,
        "entrypoint": "python main.py",
        "tests": {
            "checkpoint_1-Regression": {"passed": ["test_old"], "failed": []},
            "checkpoint_2-Core": {
                "passed": ["test_core_a", "test_param[x]"],
                "failed": ["test_core_b"],
            },
            "checkpoint_2-Functionality": {"passed": [], "failed": ["test_extra"]},
            "checkpoint_2-Error": {"passed": [], "failed": ["test_bad_input", "test_crash"]},
        },
        "pass_counts": {"Core": 2, "Functionality": 0, "Error": 0, "Regression": 1},
        "total_counts": {"Core": 3, "Functionality": 1, "Error": 2, "Regression": 1},
        "pytest_exit_code": 1,
        "pytest_collected": 7,
        "infrastructure_failure": False,
    }


def test_checkpoint_results_row_has_scbench_fields_and_no_invented_ones(
    problem: Problem, mixed: CheckpointResult
) -> None:
    assert checkpoint_results_row(problem, mixed, path=RUN_PATH, scbench=PAPER) == {
        "problem": "demo",
        "version": 2,
        "checkpoint": "checkpoint_2",
        "path": "out/run/demo",
        "idx": 2,
        "state": "unknown",
        "is_first": False,
        "is_last": False,
        "pass_rate": 3 / 7,
        "core_pass_rate": 2 / 3,
        "checkpoint_pass_rate": 2 / 6,
        "duration": 1.5,
        "total_tests": 7,
        "passed_tests": 3,
        "core_total": 3,
        "core_passed": 2,
        "functionality_total": 1,
        "functionality_passed": 0,
        "error_total": 2,
        "error_passed": 0,
        "regression_total": 1,
        "regression_passed": 1,
    }


@pytest.mark.parametrize(
    "reader",
    [
        scbench_evaluation_metrics,
        scbench_evaluation_metrics_strict,
        scbench_evaluation_metrics_oldest,
    ],
)
def test_row_is_what_scbench_derives_from_our_evaluation_json(
    problem: Problem, mixed: CheckpointResult, reader: Any
) -> None:
    document = evaluation_json(problem, mixed, entrypoint=ENTRYPOINT, scbench=PAPER)
    assert document is not None
    row = checkpoint_results_row(problem, mixed, path=RUN_PATH, scbench=PAPER)
    derived = reader(json.loads(json.dumps(document)))
    assert {key: row[key] for key in derived} == derived
    assert list(row) == ROW_HEAD + list(scbench_evaluation_metrics(document))


def test_a_group_without_passes_keeps_its_tests_for_every_reader(
    problem: Problem, tmp_path: Path
) -> None:
    """SCBench's runner leaves such a group out of pass_counts, and its oldest reader then loses
    the group's tests: pass_counts here names it with 0."""
    result = _judge(
        problem,
        "checkpoint_1",
        make_outcome("test_a", Status.FAILED),
        make_outcome("test_b", Status.ERROR),
        tmp_path=tmp_path,
    )
    document = evaluation_json(problem, result, entrypoint=ENTRYPOINT, scbench=PAPER)
    assert document is not None
    assert (document["pass_counts"], document["total_counts"]) == ({"Core": 0}, {"Core": 2})
    row = checkpoint_results_row(problem, result, path=RUN_PATH, scbench=PAPER)
    for reader in (scbench_evaluation_metrics, scbench_evaluation_metrics_oldest):
        assert reader(document)["total_tests"] == row["total_tests"] == 2
    assert row["pass_rate"] == row["core_pass_rate"] == 0
    assert (row["is_first"], row["is_last"], row["idx"]) == (True, False, 1)


def test_rates_are_not_rounded_so_scbench_never_counts_a_near_pass_as_solved(
    problem: Problem, tmp_path: Path
) -> None:
    outcomes = [make_outcome(f"test_{i}", Status.PASSED) for i in range(19999)]
    result = _judge(
        problem,
        "checkpoint_1",
        *outcomes,
        make_outcome("test_last", Status.FAILED),
        tmp_path=tmp_path,
    )
    row = checkpoint_results_row(problem, result, path=RUN_PATH, scbench=PAPER)
    assert row["pass_rate"] == 19999 / 20000
    assert result.counts.pass_rate == 1.0  # what a rounded rate would have said


@pytest.mark.parametrize(
    ("exit_code", "seal", "infrastructure"),
    [
        (0, SEALED, False),
        (1, SEALED, False),
        (5, SEALED, True),  # no tests collected
        (0, Broken.MISMATCH, True),  # tampered reports: nothing is counted
    ],
)
def test_every_evaluation_json_passes_scbench_model(
    problem: Problem, tmp_path: Path, exit_code: int, seal: Seal | Broken, infrastructure: bool
) -> None:
    outcomes = () if exit_code == 5 else (make_outcome("test_a", Status.PASSED),)
    result = _judge(
        problem, "checkpoint_1", *outcomes, exit_code=exit_code, seal=seal, tmp_path=tmp_path
    )
    document = evaluation_json(problem, result, entrypoint=ENTRYPOINT, scbench=PAPER)
    assert document is not None
    jsonschema.validate(json.loads(json.dumps(document)), EVALUATION_SCHEMA)
    assert document["infrastructure_failure"] is infrastructure
    assert document["pytest_exit_code"] == exit_code
    if infrastructure:
        assert document["tests"] == document["pass_counts"] == document["total_counts"] == {}
        assert (
            checkpoint_results_row(problem, result, path=RUN_PATH, scbench=PAPER)["pass_rate"] == 0
        )


def test_a_checkpoint_whose_tests_never_ran_has_no_evaluation_json(problem: Problem) -> None:
    """Like SCBench, which writes none when its runner could not run the tests: the row keeps
    the checkpoint's place and no test fields, which SCBench's summary skips."""
    result = _unrun(problem, "checkpoint_3")
    assert evaluation_json(problem, result, entrypoint=ENTRYPOINT, scbench=PAPER) is None
    assert checkpoint_results_row(problem, result, path=RUN_PATH, scbench=PAPER, state="error") == {
        "problem": "demo",
        "version": 2,
        "checkpoint": "checkpoint_3",
        "path": "out/run/demo",
        "idx": 3,
        "state": "error",
        "is_first": False,
        "is_last": True,
    }


def test_idx_is_the_configured_order_and_first_last_follow_it(tmp_path: Path) -> None:
    folder = ProblemFolder(
        tmp_path / "problem",
        {
            "name": "ordered",
            "entry_file": "main",
            "checkpoints": {"late": {"order": 20}, "early": {"order": 10}},
        },
    )
    problem = load_problem(folder.root)
    rows = {
        name: checkpoint_results_row(
            problem,
            _unrun(problem, name),
            path="p",
            scbench=PAPER,
        )
        for name in ("late", "early")
    }
    assert [(r["idx"], r["is_first"], r["is_last"]) for r in rows.values()] == [
        (20, False, True),
        (10, True, False),
    ]
    assert rows["early"]["version"] == 1


def test_group_and_status_names_are_scbench_own() -> None:
    assert sorted(GROUP_TYPES.values()) == sorted(GROUP_TYPE_VALUES)
    assert set(GROUP_TYPES) == set(Group)
    assert set(STATUSES) == set(Status)
    assert set(STATUSES.values()) <= set(TEST_STATUS_VALUES)
    # pytest_runner.py @ dc40d727e4c966a53a926db1d400d5cc00d8eb93, its status_map
    assert STATUSES[Status.XFAILED] == "skipped"
    assert STATUSES[Status.XPASSED] == "passed"


@pytest.mark.slow  # SCBench's own reader, in an environment uv makes
def test_writers_lay_files_out_as_scbench_does(
    problem: Problem, mixed: CheckpointResult, tmp_path: Path
) -> None:
    document = evaluation_json(problem, mixed, entrypoint=ENTRYPOINT, scbench=PAPER)
    assert document is not None
    checkpoint_dir = tmp_path / "run" / "demo" / "checkpoint_2"
    report = {
        "exitcode": 1,
        "collectors": [{"nodeid": ""}],
        "warnings": [{"message": "w"}],
        "tests": [
            {
                "nodeid": "tests/test_checkpoint_2.py::test_core_a",
                "keywords": ["test_core_a"],
                "setup": {"outcome": "passed", "stdout": "x", "log": []},
                "call": {"outcome": "failed", "traceback": [], "stderr": "y", "longrepr": "E"},
            }
        ],
    }
    path = write_evaluation(
        checkpoint_dir, document, scbench=PAPER, stdout="collected 7 items\n", report=report
    )
    assert path == checkpoint_dir / "evaluation.json"
    assert path.read_text() == json.dumps(document, indent=2)
    # CorrectnessResults.save: the test command's streams, and the report as SCBench's runner has
    # pytest-json-report write it (--json-report-omit of traceback, streams, log, collectors and
    # warnings).
    folder = checkpoint_dir / "evaluation"
    assert sorted(p.name for p in folder.iterdir()) == ["report.json", "stderr.txt", "stdout.txt"]
    assert (folder / "stdout.txt").read_text() == "collected 7 items\n"
    assert (folder / "stderr.txt").read_text() == ""
    assert json.loads((folder / "report.json").read_text()) == {
        "exitcode": 1,
        "tests": [
            {
                "nodeid": "tests/test_checkpoint_2.py::test_core_a",
                "keywords": ["test_core_a"],
                "setup": {"outcome": "passed"},
                "call": {"outcome": "failed", "longrepr": "E"},
            }
        ],
    }
    current = read_output(tmp_path / "run")["demo"]["checkpoints"]["checkpoint_2"]["current"]
    assert current  # SCBench's own check, on the files as written

    rows = [
        checkpoint_results_row(problem, mixed, path=RUN_PATH, scbench=PAPER),
        checkpoint_results_row(
            problem,
            _unrun(problem, "checkpoint_3"),
            path=RUN_PATH,
            scbench=PAPER,
        ),
    ]
    results = write_checkpoint_results(tmp_path / "run" / "checkpoint_results.jsonl", rows)
    assert [json.loads(line) for line in results.read_text().splitlines()] == rows
    # SCBench's summary reads every key a row has and adds them up: no nulls.
    assert all(value is not None for row in rows for value in row.values())


def test_two_rows_for_one_checkpoint_are_refused(
    problem: Problem, mixed: CheckpointResult, tmp_path: Path
) -> None:
    row = checkpoint_results_row(problem, mixed, path=RUN_PATH, scbench=PAPER)
    with pytest.raises(ValueError, match="two rows for problem 'demo', checkpoint 'checkpoint_2'"):
        write_checkpoint_results(tmp_path / "checkpoint_results.jsonl", [row, row])
    assert not (tmp_path / "checkpoint_results.jsonl").exists()


@pytest.mark.parametrize("flaky_passes", [False, True])
def test_a_flaky_test_is_filed_where_the_counts_have_it(
    problem: Problem, tmp_path: Path, flaky_passes: bool
) -> None:
    """SCBench has no flaky status: failed (as its one run could have seen it), or passed with
    `--flaky-passes`; its ids always agree with pass_counts."""
    result = _judge(
        problem,
        "checkpoint_1",
        make_outcome("test_a", Status.PASSED),
        make_outcome("test_b", Status.FLAKY, message="failed on attempt 1"),
        tmp_path=tmp_path,
        flaky_passes=flaky_passes,
    )
    document = evaluation_json(
        problem, result, entrypoint=ENTRYPOINT, scbench=PAPER, flaky_passes=flaky_passes
    )
    assert document is not None
    jsonschema.validate(document, EVALUATION_SCHEMA)
    passed = ["test_a", "test_b"] if flaky_passes else ["test_a"]
    failed = [] if flaky_passes else ["test_b"]
    assert document["tests"] == {"checkpoint_1-Core": {"passed": passed, "failed": failed}}
    assert document["pass_counts"] == {"Core": len(passed)}
    assert document["total_counts"] == {"Core": 2}
    assert STATUSES[Status.FLAKY] == "failed"
