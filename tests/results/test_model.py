import functools
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from scbench_ci.executors.base import PYTEST_LOG, SETUP_LOG, ExecutionResult
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Group
from scbench_ci.reports import CollectionError, Reports, Status, TestOutcome
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.model import (
    INFRASTRUCTURE_KINDS,
    FailureKind,
    detect_failure,
    judge_checkpoint,
    verdict,
    why_failed,
)
from scbench_ci.trust.seal import Broken, Seal
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder
from testing.results import checkpoint_documents, make_outcome, make_run

# The tests judged here belong to checkpoint_2 unless they say otherwise.
_outcome = functools.partial(make_outcome, file="test_checkpoint_2.py")
SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())


def _execution(
    exit_code: int | None = 1,
    setup: int | None = None,
    timed_out_in: str | None = None,
    runner: int | None = None,
    limits: tuple[str, ...] = (),
) -> ExecutionResult:
    return ExecutionResult(
        exit_code=exit_code,
        setup_exit_code=setup,
        timed_out_in=timed_out_in,  # type: ignore[arg-type]
        duration_s=1.5,
        runner_exit_code=runner,
        limits_hit=limits,
    )


def _reports(
    *tests: TestOutcome, exit_code: int = 1, collection_errors: tuple[CollectionError, ...] = ()
) -> Reports:
    return Reports(
        tests=tests, exit_code=exit_code, collection_errors=collection_errors, problems=()
    )


SEALED = Seal(killed=0)
MEMORY = "the memory limit (4g) was reached: the kernel killed 1 process(es)"
NO_REPORT = "pytest-report.json was not written"


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    (tmp_path / PYTEST_LOG).write_text("".join(f"line {i}\n" for i in range(100)))
    (tmp_path / SETUP_LOG).write_text("resolving\nerror: no such package: nope\n")
    return tmp_path


@pytest.mark.parametrize(
    ("execution", "seal", "reports", "kind", "message"),
    [
        (
            _execution(None, runner=2),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.INFRASTRUCTURE,
            "installing the test runner (pytest, its plugins and the test dependencies) failed "
            "with exit code 2",
        ),
        (
            _execution(None, timed_out_in="tests"),
            Broken.UNSEALED,
            NO_REPORT,
            FailureKind.TIMEOUT,
            "the session timeout of 60 s stopped the tests",
        ),
        (
            _execution(None, timed_out_in="setup"),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.TIMEOUT,
            "the session timeout of 60 s stopped the setup",
        ),
        (
            _execution(2),
            Broken.NOT_STARTED,
            NO_REPORT,
            FailureKind.INFRASTRUCTURE,
            "the test runner did not start (exit code 2)",
        ),
        (
            _execution(137),
            Broken.UNSEALED,
            _reports(exit_code=0),
            FailureKind.ABORTED,
            "the test runner was stopped before it sealed its reports (exit code 137): no test "
            "outcome is counted",
        ),
        (
            _execution(137, limits=(MEMORY,)),
            Broken.UNSEALED,
            NO_REPORT,
            FailureKind.RESOURCES,
            f"the test runner ended without reporting (exit code 137): {MEMORY}",
        ),
        (
            _execution(1),
            Broken.MISMATCH,
            _reports(exit_code=0),
            FailureKind.TAMPERED,
            "the reports are not the ones the test runner wrote (their seal does not match): "
            "something changed them after they were written, so no test outcome is counted",
        ),
        (
            _execution(1),
            SEALED,
            "pytest-report.json is larger than 268435456 bytes",
            FailureKind.REPORTS,
            "pytest's report could not be used: pytest-report.json is larger than 268435456 bytes",
        ),
        (
            _execution(1, limits=(MEMORY,)),
            SEALED,
            NO_REPORT,
            FailureKind.RESOURCES,
            f"pytest's report could not be used ({NO_REPORT}): {MEMORY}",
        ),
        (
            _execution(2),
            SEALED,
            _reports(
                exit_code=2,
                collection_errors=(
                    CollectionError("tests/test_checkpoint_2.py", "E   SyntaxError"),
                ),
            ),
            FailureKind.COLLECTION,
            "errors collecting tests/test_checkpoint_2.py",
        ),
        (
            _execution(2),
            SEALED,
            _reports(exit_code=2),
            FailureKind.INTERRUPTED,
            "pytest was interrupted (exit code 2)",
        ),
        (
            _execution(3),
            SEALED,
            _reports(exit_code=3),
            FailureKind.INTERNAL,
            "pytest hit an internal error (exit code 3)",
        ),
        (
            _execution(3, limits=(MEMORY,)),
            SEALED,
            _reports(exit_code=3),
            FailureKind.RESOURCES,
            f"pytest stopped with an internal error: {MEMORY}",
        ),
        (
            _execution(4),
            SEALED,
            NO_REPORT,
            FailureKind.USAGE,
            "pytest rejected its command line (usage error)",
        ),
        (
            _execution(5),
            SEALED,
            _reports(exit_code=5),
            FailureKind.NO_TESTS,
            "pytest collected no tests",
        ),
    ],
)
def test_failure_kinds(
    logs: Path,
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    kind: FailureKind,
    message: str,
) -> None:
    failure = detect_failure(execution, seal, reports, logs, 60)
    assert failure is not None
    assert (failure.kind, failure.message) == (kind, message)
    assert failure.log_tail


def test_only_causes_outside_the_submission_are_infrastructure() -> None:
    assert {FailureKind.INFRASTRUCTURE, FailureKind.INTERNAL} == INFRASTRUCTURE_KINDS


def test_a_failing_setup_command_is_no_failure_the_tests_decide(logs: Path) -> None:
    """As under SCBench, whose entry script runs its setup lines without `set -e`."""
    assert detect_failure(_execution(1, setup=2), SEALED, _reports(), logs, 60) is None
    stopped = detect_failure(
        _execution(None, setup=2, timed_out_in="setup"), Broken.NOT_STARTED, NO_REPORT, logs, 60
    )
    assert stopped is not None and stopped.kind is FailureKind.TIMEOUT
    assert stopped.log_tail is not None and "no such package: nope" in stopped.log_tail


def test_failure_log_tails(logs: Path) -> None:
    aborted = detect_failure(_execution(1), Broken.UNSEALED, NO_REPORT, logs, 60)
    assert aborted is not None and aborted.log_tail is not None
    assert aborted.log_tail.splitlines() == [f"line {i}" for i in range(60, 100)]
    collection = detect_failure(
        _execution(2),
        SEALED,
        _reports(
            exit_code=2,
            collection_errors=(CollectionError("a", "first"), CollectionError("b", "second")),
        ),
        logs,
        60,
    )
    assert collection is not None and collection.log_tail == "first\n\nsecond"


def test_ordinary_runs_have_no_failure(logs: Path) -> None:
    assert detect_failure(_execution(0), SEALED, _reports(exit_code=0), logs, 60) is None
    assert detect_failure(_execution(1), SEALED, _reports(), logs, 60) is None


def test_unsealed_reports_count_nothing(problem_folder: ProblemFolder, logs: Path) -> None:
    problem = load_problem(problem_folder.root)
    cp1 = problem.checkpoints[0]
    forged = _reports(_outcome("a", Status.PASSED, file="test_checkpoint_1.py"), exit_code=0)
    for seal in Broken:
        result = judge_checkpoint(
            problem,
            cp1,
            tested=(cp1,),
            include_prior_tests=True,
            execution=_execution(0),
            seal=seal,
            reports=forged,
            log_dir=logs,
            policy_name="any",
            session_timeout_s=60,
            warnings=(),
        )
        assert result.tests == ()
        assert all(counts.total == 0 for counts in result.groups.values())
        assert not result.passed


def test_judge_groups_counts_and_verdict(problem_folder: ProblemFolder, logs: Path) -> None:
    problem_folder.config["markers"] = {"slow": {"group": "Functionality"}}
    problem_folder.save()
    problem = load_problem(problem_folder.root)
    cp1, cp2 = problem.checkpoints[:2]
    reports = _reports(
        _outcome("old", Status.FAILED, "error", file="test_checkpoint_1.py"),
        _outcome("core_a", Status.PASSED),
        _outcome("core_b", Status.XPASSED),
        _outcome("core_c", Status.XFAILED),
        _outcome("core_d", Status.SKIPPED),
        _outcome("err", Status.ERROR, "error"),
        _outcome("slow", Status.FAILED, "slow"),
    )
    result = judge_checkpoint(
        problem,
        cp2,
        tested=(cp1, cp2),
        include_prior_tests=True,
        execution=_execution(1),
        seal=SEALED,
        reports=reports,
        log_dir=logs,
        policy_name="core-cases",
        session_timeout_s=60,
        warnings=(),
    )
    assert {t.id.split("::")[1]: (t.group, t.checkpoint) for t in result.tests} == {
        "old": (Group.REGRESSION, "checkpoint_1"),
        "core_a": (Group.CORE, "checkpoint_2"),
        "core_b": (Group.CORE, "checkpoint_2"),
        "core_c": (Group.CORE, "checkpoint_2"),
        "core_d": (Group.CORE, "checkpoint_2"),
        "err": (Group.ERROR, "checkpoint_2"),
        "slow": (Group.FUNCTIONALITY, "checkpoint_2"),
    }
    counts = {g.value: (c.passed, c.failed, c.skipped, c.total) for g, c in result.groups.items()}
    assert counts == {
        "Core": (2, 0, 2, 4),
        "Functionality": (0, 1, 0, 1),
        "Error": (0, 1, 0, 1),
        "Regression": (0, 1, 0, 1),
    }
    # core-cases: no Core test fails, but SCBench counts the 2 skipped ones as not passed
    assert not result.passed
    assert why_failed(result, "core-cases") == (
        "2 Core tests skipped or xfailed (SCBench counts a skipped or xfailed test as not passed)"
    )
    assert result.failure is None

    failing = judge_checkpoint(
        problem,
        cp2,
        tested=(cp1, cp2),
        include_prior_tests=True,
        execution=_execution(1),
        seal=SEALED,
        reports=reports,
        log_dir=logs,
        policy_name="all-cases",
        session_timeout_s=60,
        warnings=("w",),
    )
    assert not failing.passed
    assert failing.warnings == ("w",)

    # One problem evaluates each checkpoint once, and a run judges them all by its policy.
    first = replace(result, passed=verdict("all-cases", result.failure, result.groups))
    again = replace(failing, name="checkpoint_3")
    evaluation = make_run(first, again, policy="all-cases", duration_s=2.0)
    output = logs / "output"
    output.mkdir()
    path = write_results(evaluation, output)
    document = json.loads(path.read_text())
    jsonschema.validate(document, SCHEMA)
    assert document["passed"] is False
    assert load_results(path) == evaluation
    assert checkpoint_documents(document)[0]["groups"]["Core"] == {
        "passed": 2,
        "failed": 0,
        "skipped": 2,
        "total": 4,
        "flaky": 0,
        "pass_rate": 0.5,
    }


def test_a_failure_never_passes(problem_folder: ProblemFolder, logs: Path) -> None:
    problem = load_problem(problem_folder.root)
    cp1 = problem.checkpoints[0]
    result = judge_checkpoint(
        problem,
        cp1,
        tested=(cp1,),
        include_prior_tests=True,
        execution=_execution(None, timed_out_in="tests"),
        seal=SEALED,
        reports=_reports(_outcome("a", Status.PASSED, file="test_checkpoint_1.py")),
        log_dir=logs,
        policy_name="any",
        session_timeout_s=60,
        warnings=(),
    )
    assert result.failure is not None and result.failure.kind is FailureKind.TIMEOUT
    assert not result.passed
