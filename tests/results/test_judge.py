import functools
import json
from dataclasses import replace
from pathlib import Path

import jsonschema

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.scbench_runner import PAPER
from scbench_ci.job.reports import Reports, Status
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Checkpoint, Group, Problem
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.judge import judge_checkpoint
from scbench_ci.results.model import CheckpointResult, FailureKind, why_failed
from scbench_ci.results.verdict import verdict
from scbench_ci.trust.seal import Broken, Seal
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder
from testing.results import (
    checkpoint_documents,
    make_execution,
    make_outcome,
    make_reports,
    make_run,
)

# The tests judged here belong to checkpoint_2 unless they say otherwise.
_outcome = functools.partial(make_outcome, file="test_checkpoint_2.py")
SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
SEALED = Seal(killed=0)


def _judge(
    problem: Problem,
    tested: tuple[Checkpoint, ...],
    reports: Reports,
    logs: Path,
    *,
    execution: ExecutionResult | None = None,
    seal: Seal | Broken = SEALED,
    policy_name: str = "any",
    warnings: tuple[str, ...] = (),
) -> CheckpointResult:
    """The last of `tested` judged from these reports."""
    return judge_checkpoint(
        problem,
        tested[-1],
        include_prior_tests=True,
        execution=execution or make_execution(reports.exit_code),
        seal=seal,
        reports=reports,
        log_dir=logs,
        policy_name=policy_name,
        session_timeout_s=60,
        warnings=warnings,
        scbench=PAPER,
    )


def test_unsealed_reports_count_nothing(problem_folder: ProblemFolder, logs: Path) -> None:
    problem = load_problem(problem_folder.root)
    cp1 = problem.checkpoints[0]
    forged = make_reports(_outcome("a", Status.PASSED, file="test_checkpoint_1.py"), exit_code=0)
    for seal in Broken:
        result = _judge(problem, (cp1,), forged, logs, seal=seal)
        assert result.tests == ()
        assert all(counts.total == 0 for counts in result.groups.values())
        assert not result.passed


def test_judge_groups_counts_and_verdict(problem_folder: ProblemFolder, logs: Path) -> None:
    problem_folder.config["markers"] = {"slow": {"group": "Functionality"}}
    problem_folder.save()
    problem = load_problem(problem_folder.root)
    cp1, cp2 = problem.checkpoints[:2]
    reports = make_reports(
        _outcome("old", Status.FAILED, "error", file="test_checkpoint_1.py"),
        _outcome("core_a", Status.PASSED),
        _outcome("core_b", Status.XPASSED),
        _outcome("core_c", Status.XFAILED),
        _outcome("core_d", Status.SKIPPED),
        _outcome("err", Status.ERROR, "error"),
        _outcome("slow", Status.FAILED, "slow"),
    )
    result = _judge(problem, (cp1, cp2), reports, logs, policy_name="core-cases")
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

    failing = _judge(problem, (cp1, cp2), reports, logs, policy_name="all-cases", warnings=("w",))
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
    reports = make_reports(_outcome("a", Status.PASSED, file="test_checkpoint_1.py"))
    timed_out = make_execution(None, timed_out_in="tests")
    result = _judge(problem, (cp1,), reports, logs, execution=timed_out)
    assert result.failure is not None and result.failure.kind is FailureKind.TIMEOUT
    assert not result.passed


def test_warnings_say_what_may_explain_the_outcome(
    problem_folder: ProblemFolder, logs: Path
) -> None:
    """The caller's first, then the limits the run reached, the processes killed after their
    command ended, and what the reports could not hold; each in that order."""
    problem = load_problem(problem_folder.root)
    cp1 = problem.checkpoints[0]
    reports = replace(
        make_reports(_outcome("a", Status.PASSED, file="test_checkpoint_1.py"), exit_code=0),
        problems=("a message was cut",),
    )
    execution = replace(make_execution(0, limits=("the disk limit",)), leftover_processes=2)
    result = _judge(problem, (cp1,), reports, logs, execution=execution, warnings=("left out",))
    assert result.warnings == (
        "left out",
        "the disk limit",
        "2 process(es) were still running after their command ended and were killed",
        "a message was cut",
    )
    assert result.passed and result.failure is None
    unsealed = _judge(problem, (cp1,), reports, logs, execution=execution, seal=Broken.UNSEALED)
    assert "a message was cut" not in unsealed.warnings
