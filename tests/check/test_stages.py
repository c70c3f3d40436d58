"""The dynamic stages' findings from runs' results, without running anything."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.check.known_failures import KnownFailure
from scbench_ci.check.stages import (
    Place,
    collection_findings,
    empty_findings,
    flaky_findings,
    inventory_findings,
    known_list_findings,
    network_findings,
    oracle_findings,
    time_findings,
)
from scbench_ci.foundation.scbench_runner import PAPER, V1_0
from scbench_ci.job.reports import Status
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Group, Problem
from scbench_ci.results.findings import Finding, Severity, Stage
from scbench_ci.results.inventory import UNREPORTED
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind, RepeatCount, TestResult
from scbench_ci.results.verdict import count_groups
from testing.paths import CHECK_REPO_PROBLEMS

E, W = Severity.ERROR, Severity.WARNING
FILE = "tests/test_checkpoint_1.py"


@pytest.fixture(scope="module")
def problem() -> Problem:
    return load_problem(CHECK_REPO_PROBLEMS / "clean")


@pytest.fixture(scope="module")
def place(problem: Problem) -> Place:
    return Place(problem, problem.root.parent)


def make_test(name: str, status: Status, group: Group = Group.CORE, **fields: object) -> TestResult:
    values: dict[str, object] = {
        "id": f"{FILE}::{name}",
        "checkpoint": "checkpoint_1",
        "group": group,
        "status": status,
        "duration_s": 0.1,
        "markers": (),
        "message": None if status is Status.PASSED else "assert 1 == 2\nmore",
        "traceback": None,
        "file": FILE,
        "line": 7,
    }
    return TestResult(**{**values, **fields})  # type: ignore[arg-type]


def result(*tests: TestResult, failure: Failure | None = None) -> CheckpointResult:
    return CheckpointResult(
        name="checkpoint_1",
        include_prior_tests=True,
        passed=False,
        failure=failure,
        pytest_exit_code=1,
        duration_s=1.0,
        groups=count_groups(tests, False),
        tests=tests,
        warnings=(),
    )


def brief(findings: list[Finding]) -> list[tuple[Stage, Severity, str, int | None, str | None]]:
    return [(f.stage, f.severity, f.file, f.line, f.test) for f in findings]


def known(*names: str, checkpoint: str = "checkpoint_1") -> list[KnownFailure]:
    return [
        KnownFailure(f"{FILE}::{name}", "why", checkpoint, "clean/tests/known_failures.txt", n)
        for n, name in enumerate(names, 1)
    ]


# Collection.

# As pytest reports them: the tests are staged in .evaluation_tests/, as SCBench stages them.
IMPORT_ERROR = """ImportError while importing test module '/w/.evaluation_tests/test_cp.py'.
Traceback:
/venv/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
.evaluation_tests/helpers.py:2: in <module>
    import nothing
.evaluation_tests/test_checkpoint_1.py:4: in <module>
    from helpers import x
E   ModuleNotFoundError: No module named 'nothing'"""
SYNTAX_ERROR = """/venv/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
E     File "/scbench/workspace/.evaluation_tests/test_checkpoint_2.py", line 9
E       def test_a(:
E                  ^
E   SyntaxError: invalid syntax"""


def collection_failure(tmp_path: Path, *collectors: tuple[str, str]) -> CheckpointResult:
    report = {
        "exitcode": 2,
        "tests": [],
        "collectors": [
            {"nodeid": node_id, "outcome": "failed", "longrepr": text}
            for node_id, text in collectors
        ],
    }
    (tmp_path / "pytest-report.json").write_text(json.dumps(report))
    failure = Failure(FailureKind.COLLECTION, "test collection failed: ...", "log")
    return result(failure=failure)


def test_each_collection_error_where_the_traceback_last_names_the_tests(
    tmp_path: Path, place: Place, problem: Problem
) -> None:
    run = collection_failure(
        tmp_path,
        (".evaluation_tests/test_checkpoint_1.py", IMPORT_ERROR),
        (".evaluation_tests", SYNTAX_ERROR),
    )
    findings = collection_findings(place, problem.checkpoints[0], run, tmp_path)
    assert [(f.file, f.line, f.message) for f in findings] == [
        (
            "clean/tests/test_checkpoint_1.py",
            4,
            "does not collect: ModuleNotFoundError: No module named 'nothing'",
        ),
        ("clean/tests/test_checkpoint_2.py", 9, "does not collect: SyntaxError: invalid syntax"),
    ]
    assert {(f.stage, f.severity, f.checkpoint) for f in findings} == {
        (Stage.COLLECTION, E, "checkpoint_1")
    }


def test_a_collection_error_without_a_place_is_the_collector_s_file(
    tmp_path: Path, place: Place, problem: Problem
) -> None:
    run = collection_failure(tmp_path, ("tests/test_checkpoint_1.py", "something broke"))
    (finding,) = collection_findings(place, problem.checkpoints[0], run, tmp_path)
    assert (finding.file, finding.line, finding.message) == (
        "clean/tests/test_checkpoint_1.py",
        None,
        "does not collect: something broke",
    )


def test_other_failures_of_a_collection(tmp_path: Path, place: Place, problem: Problem) -> None:
    checkpoint = problem.checkpoints[1]
    usage = Failure(
        FailureKind.USAGE, "pytest rejected its command line", "x\nERROR: bad conftest\n"
    )
    none = Failure(FailureKind.NO_TESTS, "pytest collected no tests")
    assert collection_findings(place, checkpoint, result(), tmp_path) == []
    assert [
        (f.file, f.line, f.message)
        for failure in (usage, none)
        for f in collection_findings(place, checkpoint, result(failure=failure), tmp_path)
    ] == [
        (
            "clean/tests/test_checkpoint_2.py",
            None,
            "the tests do not collect (usage): pytest rejected its command line: ERROR: bad "
            "conftest",
        ),
        ("clean/tests/test_checkpoint_2.py", None, "pytest collects no test from it"),
    ]


# Oracle.


def test_failing_tests_the_policy_counts_and_the_list_does_not_hold(
    place: Place, problem: Problem
) -> None:
    run = result(
        make_test("test_ok", Status.PASSED),
        make_test("test_core", Status.FAILED),
        make_test("test_listed", Status.FAILED),
        make_test("test_error_group", Status.ERROR, Group.ERROR),
        make_test("test_skipped", Status.SKIPPED),
        make_test("test_flaky", Status.FLAKY),
    )
    checkpoint = problem.checkpoints[0]
    by_policy = {
        name: brief(oracle_findings(place, checkpoint, run, known("test_listed"), name, True))
        for name in ("all-cases", "core-cases", "any")
    }
    core = (Stage.ORACLE, E, "clean/tests/test_checkpoint_1.py", 7, f"{FILE}::test_core")
    error = (Stage.ORACLE, E, "clean/tests/test_checkpoint_1.py", 7, f"{FILE}::test_error_group")
    assert by_policy == {"all-cases": [core, error], "core-cases": [core], "any": []}
    (finding,) = oracle_findings(place, checkpoint, run, [], "core-cases", True)[:1]
    assert finding.message == (
        f"{FILE}::test_core failed with the reference solution, and tests/known_failures.txt "
        "does not list it: assert 1 == 2"
    )


def test_a_reference_that_fails_the_policy_without_a_failing_test(
    place: Place, problem: Problem
) -> None:
    """A skipped Core test is not a failing one, but SCBench counts it as not passed."""
    skipped_core = result(make_test("test_a", Status.PASSED), make_test("test_b", Status.SKIPPED))
    checkpoint = problem.checkpoints[0]
    (finding,) = oracle_findings(place, checkpoint, skipped_core, [], "core-cases", True)
    assert (finding.file, finding.line) == ("clean/solutions/checkpoint_1", None)
    assert finding.message == (
        "the reference solution fails the oracle policy core-cases (every Core test passes): "
        "1 Core test skipped or xfailed (SCBench counts a skipped or xfailed test as not passed)"
    )
    assert oracle_findings(place, checkpoint, skipped_core, [], "any", True) == []


def test_a_run_of_the_reference_that_did_not_finish(place: Place, problem: Problem) -> None:
    run = result(failure=Failure(FailureKind.TIMEOUT, "the session timeout of 9 s stopped it"))
    (finding,) = oracle_findings(place, problem.checkpoints[0], run, [], "all-cases", True)
    assert (finding.stage, finding.file, finding.line) == (
        Stage.ORACLE,
        "clean/solutions/checkpoint_1",
        None,
    )
    assert "(timeout): the session timeout of 9 s stopped it" in finding.message
    # When the tests do not collect, the collection stage says why.
    assert oracle_findings(place, problem.checkpoints[0], run, [], "all-cases", False) == []


def test_listed_tests_count_in_finished_runs_of_their_own_checkpoint() -> None:
    first = result(make_test("test_passes", Status.PASSED), make_test("test_fails", Status.FAILED))
    later_test = make_test("test_fails", Status.PASSED, Group.REGRESSION)
    second = replace(result(later_test), name="checkpoint_2")
    stopped = replace(result(failure=Failure(FailureKind.TIMEOUT, "x")), name="checkpoint_3")
    entries = [
        *known("test_passes", "test_fails", "test_gone"),
        *known("test_never_ran", checkpoint="checkpoint_3"),
    ]
    findings = known_list_findings(entries, [first, second, stopped])
    assert [(f.line, f.test, f.severity) for f in findings] == [
        (1, f"{FILE}::test_passes", W),
        (3, f"{FILE}::test_gone", W),
    ]


# Empty submission, flaky, time.


def test_core_tests_that_pass_against_nothing_are_vacuous(place: Place, problem: Problem) -> None:
    run = result(
        make_test("test_vacuous", Status.PASSED),
        make_test("test_xpassed", Status.XPASSED),
        make_test("test_fails", Status.FAILED),
        make_test("test_error_group", Status.PASSED, Group.ERROR),
        make_test("test_regression", Status.PASSED, Group.REGRESSION),
    )
    findings = empty_findings(place, problem.checkpoints[0], run, True)
    assert [(f.stage, f.severity, f.test) for f in findings] == [
        (Stage.EMPTY, E, f"{FILE}::test_vacuous"),
        (Stage.EMPTY, E, f"{FILE}::test_xpassed"),
    ]


def test_an_empty_run_that_did_not_finish(place: Place, problem: Problem) -> None:
    checkpoint = problem.checkpoints[0]
    timeout = result(failure=Failure(FailureKind.TIMEOUT, "stopped"))
    collection = result(failure=Failure(FailureKind.COLLECTION, "the tests import it"))
    (finding,) = empty_findings(place, checkpoint, timeout, True)
    assert (finding.severity, finding.file, finding.line) == (
        W,
        "clean/tests/test_checkpoint_1.py",
        None,
    )
    assert empty_findings(place, checkpoint, timeout, False) == []
    assert empty_findings(place, checkpoint, collection, True) == []


def test_flaky_and_slow_tests(place: Place, problem: Problem) -> None:
    checkpoint = problem.checkpoints[0]
    flaky = make_test("test_coin", Status.FLAKY, repeat=RepeatCount(passed=1, runs=3), line=9)
    steady = make_test("test_steady", Status.PASSED, duration_s=2.0)
    slow = make_test("test_slow", Status.PASSED, duration_s=2.01)
    (found,) = flaky_findings(place, checkpoint, [flaky, steady])
    assert (found.stage, found.severity, found.line, found.test) == (
        Stage.FLAKY,
        E,
        9,
        f"{FILE}::test_coin",
    )
    assert "passed 1 of 3 runs; assert 1 == 2" in found.message
    (late,) = time_findings(place, checkpoint, [steady, slow, flaky], 4.0)
    assert (late.stage, late.severity, late.test) == (Stage.TIME, W, f"{FILE}::test_slow")
    assert f"{FILE}::test_slow took 2.0 s of its 4 s timeout" in late.message


def test_tests_whose_outcome_changes_without_the_network(place: Place, problem: Problem) -> None:
    checkpoint = problem.checkpoints[0]
    online = result(
        make_test("test_fetches", Status.PASSED),
        make_test("test_local", Status.PASSED),
        make_test("test_fails_with_the_network", Status.FAILED, line=15),
        make_test("test_needs_no_network_to_fail", Status.FAILED),
        make_test("test_coin", Status.FLAKY),
        make_test("test_of_an_earlier_checkpoint", Status.PASSED, checkpoint="checkpoint_0"),
        make_test("test_not_run_offline", Status.PASSED),
    )
    offline = result(
        make_test(
            "test_fetches", Status.FAILED, message="URLError: Network is unreachable", line=12
        ),
        make_test("test_local", Status.PASSED),
        make_test("test_fails_with_the_network", Status.PASSED),
        make_test("test_needs_no_network_to_fail", Status.ERROR),
        make_test("test_coin", Status.FAILED),
        make_test("test_of_an_earlier_checkpoint", Status.FAILED, checkpoint="checkpoint_0"),
    )

    found = network_findings(place, checkpoint, online, offline)

    # Each test once, in its own checkpoint's run; a flaky one is the flaky stage's.
    # Placed where the failing run failed, not at the passing test's first line.
    assert brief(found) == [
        (Stage.ORACLE, W, "clean/" + FILE, 12, f"{FILE}::test_fetches"),
        (Stage.ORACLE, W, "clean/" + FILE, 15, f"{FILE}::test_fails_with_the_network"),
    ]
    assert found[0].message == (
        f"{FILE}::test_fetches passed with the network and failed without it: it reaches the "
        "network, or is flaky (SCBench's tests have the network, and scbench-ci's unless "
        "--no-test-network): URLError: Network is unreachable"
    )
    assert network_findings(place, checkpoint, online, online) == []


def test_runs_without_the_network_that_did_not_finish(place: Place, problem: Problem) -> None:
    checkpoint = problem.checkpoints[0]
    timeout = Failure(FailureKind.TIMEOUT, "the session timeout of 9 s stopped it")
    passing = result(make_test("test_fetches", Status.PASSED))

    (finding,) = network_findings(place, checkpoint, passing, result(failure=timeout))
    assert brief([finding]) == [(Stage.ORACLE, W, "clean/solutions/checkpoint_1", None, None)]
    assert "with the network cut after setup did not finish (timeout)" in finding.message
    # The oracle's own run did not finish: the oracle stage says so, not this one.
    assert network_findings(place, checkpoint, result(failure=timeout), passing) == []


def test_where_scbench_1_0_s_inventory_surprises(place: Place, problem: Problem) -> None:
    """A test of the checkpoint whose id holds a space (never in SCBench 1.0's inventory), and a
    test collected but never reported; a prior checkpoint's spaced id is its own checkpoint's."""
    checkpoint = problem.checkpoint("checkpoint_1")
    oracle = result(
        make_test("test_p[a b]", Status.PASSED, line=9),
        make_test("test_p[a-b]", Status.PASSED),
        make_test("test_q[c d]", Status.PASSED, checkpoint="checkpoint_0"),
        make_test("test_gone", Status.FAILED, message=UNREPORTED, line=None),
    )
    # The paper's runner takes no inventory: a spaced id counts as any other.
    assert inventory_findings(place, checkpoint, oracle, PAPER) == []
    found = inventory_findings(place, checkpoint, oracle, V1_0)
    assert brief(found) == [
        (Stage.ORACLE, W, "clean/tests/test_checkpoint_1.py", 9, f"{FILE}::test_p[a b]"),
        (Stage.ORACLE, W, "clean/tests/test_checkpoint_1.py", None, f"{FILE}::test_gone"),
    ]
    assert "its node id holds a space" in found[0].message
    assert "never reported by the reference solution's run" in found[1].message
