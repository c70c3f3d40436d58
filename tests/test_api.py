"""The Python API (`scbench_ci.api`, its names in `scbench_ci`): through the real Docker executor
on the bundled examples, the same results test by test as the CLI on the same targets; nothing
left behind without `output`; bad input refused as the CLI refuses it; the reward example."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import io
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import scbench_ci
from scbench_ci import (
    CheckpointResult,
    FailureKind,
    Group,
    InfrastructureError,
    RunResult,
    Status,
    Target,
    UsageError,
)
from scbench_ci.cli import check as cli_check
from scbench_ci.cli import evaluate as cli_evaluate
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import load_results, write_results
from testing.cli import run_cli
from testing.examples import EXPECTED
from testing.images import TEST_IMAGE
from testing.paths import EXAMPLES, REPO_ROOT
from testing.results import make_checkpoint, make_run, make_test, measured
from testing.trees import snapshot

WORDSTAT = EXAMPLES / "wordstat"
KVSERVER = EXAMPLES / "kvserver"
BROKEN = WORDSTAT / "submissions" / "broken"
REWARD_EXAMPLE = REPO_ROOT / "docs" / "examples" / "reward.py"
IN_DOCKER = {"executor": "docker", "image": TEST_IMAGE}


@dataclass(frozen=True)
class Runs:
    targets: list[Target]
    api: scbench_ci.EvaluationResult
    output: Path
    cli: dict[tuple[str, str], CheckpointResult]
    """The CLI's results of the same targets, read back from its results.json."""
    cli_exit_codes: tuple[int, ...]


@pytest.fixture(scope="module")
def runs(docker_client: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """One API run of four targets (out of order, one of them a submission folder that does not
    exist), and the CLI's runs of the three that exist."""
    folder = tmp_path_factory.mktemp("api")
    targets = [
        Target(WORDSTAT, "checkpoint_2", BROKEN),
        Target(KVSERVER, "checkpoint_1", KVSERVER / "solutions" / "checkpoint_1"),
        Target(EXAMPLES / "marks", "checkpoint_1", folder / "no-such-submission"),
        Target(WORDSTAT, "checkpoint_1", WORDSTAT / "solutions" / "checkpoint_1"),
    ]
    api = scbench_ci.evaluate(targets, output=folder / "api", jobs=2, **IN_DOCKER)
    solutions = run_cli(
        "evaluate", "--problem", WORDSTAT, "--problem", KVSERVER, "--checkpoint", "checkpoint_1",
        "--submission", f"{EXAMPLES}/{{problem}}/solutions/{{checkpoint}}",
        "--output", folder / "cli-solutions", "--executor", "docker", "--image", TEST_IMAGE,
        "--jobs", "2", "--quiet",
    )  # fmt: skip
    broken = run_cli(
        "evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_2", "--submission", BROKEN,
        "--output", folder / "cli-broken", "--executor", "docker", "--image", TEST_IMAGE,
        "--quiet",
    )  # fmt: skip
    cli = {
        (problem.name, checkpoint.name): checkpoint
        for name in ("cli-solutions", "cli-broken")
        for problem, checkpoint in load_results(folder / name / "results.json").checkpoints()
    }
    yield Runs(targets, api, folder / "api", cli, (solutions.returncode, broken.returncode))


def _per_test(checkpoint: CheckpointResult) -> dict[str, tuple[object, ...]]:
    """Each test's outcome; whether it has a message, not its text (pytest's diff of two dicts
    lists their items in an order that differs from process to process)."""
    return {
        t.id: (t.checkpoint, t.group, t.status, t.markers, t.message is None)
        for t in checkpoint.tests
    }


def test_each_target_gets_the_cli_s_results_test_by_test(runs: Runs) -> None:
    assert runs.cli_exit_codes == (0, 1)
    names = [(target.problem.name, target.checkpoint) for target in runs.targets]
    assert [c.name for c in runs.api.checkpoints] == [checkpoint for _, checkpoint in names]
    for (problem, name), result in zip(names, runs.api.checkpoints, strict=True):
        if problem == "marks":
            continue
        expected = runs.cli[(problem, name)]
        assert _per_test(result) == _per_test(expected)
        assert len(result.tests) > 0
        assert (result.passed, result.groups, result.failure) == (
            expected.passed,
            expected.groups,
            expected.failure,
        )


def test_the_run_is_one_results_json_problem_by_problem(runs: Runs) -> None:
    assert runs.api.exit_code == ExitCode.FAILED
    assert runs.api.results_path == runs.output / "results.json"
    stored = load_results(runs.output / "results.json")
    in_memory = runs.api.run
    assert isinstance(in_memory, RunResult)
    # Problems in the order the targets first name them, each one's checkpoints in its order.
    assert [(p.name, [c.name for c in p.checkpoints]) for p in in_memory.problems] == [
        ("wordstat", ["checkpoint_1", "checkpoint_2"]),
        ("kvserver", ["checkpoint_1"]),
        ("marks", ["checkpoint_1"]),
    ]
    for (_, kept), (_, read) in zip(in_memory.checkpoints(), stored.checkpoints(), strict=True):
        assert isinstance(kept.tests, tuple)
        assert _per_test(kept) == _per_test(read)
        assert (runs.output / kept.artifacts / "pytest-report.json").is_file() or not kept.tests


def test_a_missing_submission_is_the_target_s_failure_not_an_error(runs: Runs) -> None:
    missing = runs.api.checkpoints[2]
    assert missing.failure is not None and missing.failure.kind is FailureKind.MISSING
    assert "no-such-submission" in missing.failure.message
    assert not missing.passed


@pytest.fixture(scope="module")
def unkept(docker_client: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An API run without `output`, its scratch folders in an empty temporary folder and its
    working directory another, and a snapshot of its submission before it."""
    submission = WORDSTAT / "solutions" / "checkpoint_1"
    before = snapshot(submission)
    scratch = tmp_path_factory.mktemp("scratch")
    workdir = tmp_path_factory.mktemp("workdir")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(scratch))
        patch.chdir(workdir)
        result = scbench_ci.evaluate([Target(WORDSTAT, "checkpoint_1", submission)], **IN_DOCKER)
    yield result, before, snapshot(submission), scratch, workdir


def test_without_output_nothing_is_left_behind(unkept: Any, runs: Runs) -> None:
    result, _, _, scratch, workdir = unkept
    assert list(scratch.iterdir()) == []
    assert list(workdir.iterdir()) == []
    assert result.results_path is None
    assert result.exit_code == ExitCode.PASSED
    (checkpoint,) = result.checkpoints
    # Its tests are in memory: the file they were written to is gone.
    assert isinstance(checkpoint.tests, tuple)
    assert _per_test(checkpoint) == _per_test(runs.cli[("wordstat", "checkpoint_1")])


def test_the_submission_is_unchanged(unkept: Any) -> None:
    _, before, after, _, _ = unkept
    assert after == before


def test_check_gives_the_problem_s_findings_and_leaves_nothing(
    docker_client: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    echo = io.StringIO()
    checked = scbench_ci.check_problems([EXAMPLES / "jsonlog"], repeat=1, echo=echo, **IN_DOCKER)
    assert list(tmp_path.iterdir()) == []
    # Its progress goes to `echo`, and nothing to the process's own output.
    assert "jsonlog / checkpoint_1" in echo.getvalue()
    assert capfd.readouterr() == ("", "")
    assert checked.exit_code == ExitCode.PASSED and checked.results_path is None
    (problem,) = checked.run.problems
    assert problem.check is not None and problem.check.passed
    (oracle,) = problem.checkpoints
    assert oracle.passed and isinstance(oracle.tests, tuple) and len(oracle.tests) == 5


@pytest.mark.parametrize(
    ("keyword", "value", "flag", "text", "reason"),
    [
        ("jobs", 0, "--jobs", "0", "must be at least 1, got '0'"),
        ("memory", "lots", "--memory", "lots", "not a size like 512m or 4g: 'lots'"),
        ("policy", "most", "--policy", "most", "'most'"),
        ("session_timeout", -1, "--session-timeout", "-1", "must be more than 0 seconds"),
        ("executor", "podman", "--executor", "podman", "'podman'"),
    ],
)
@pytest.mark.slow
def test_a_bad_option_is_the_cli_s_message_naming_the_keyword(
    keyword: str, value: object, flag: str, text: str, reason: str
) -> None:
    cli = run_cli(
        "evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1", "--submission", BROKEN,
        f"{flag}={text}",
    )  # fmt: skip
    assert cli.returncode == 2 and reason in cli.stderr
    with pytest.raises(UsageError) as raised:
        scbench_ci.evaluate([Target(WORDSTAT, "checkpoint_1", BROKEN)], **{keyword: value})
    assert str(raised.value).startswith(f"{keyword}: ")
    assert reason in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        ([], "targets: no target given"),
        (Target(WORDSTAT, "checkpoint_1", BROKEN), "targets: a list of Target, not one Target"),
        ([(WORDSTAT, "checkpoint_1", BROKEN)], "targets[0]: not a Target"),
        ([Target(WORDSTAT, 1, BROKEN)], "targets[0].checkpoint: "),
        ([Target(WORDSTAT, "checkpoint_9", BROKEN)], "no checkpoint 'checkpoint_9'"),
        ([Target(EXAMPLES / "nowhere", "checkpoint_1", BROKEN)], "nowhere"),
        (
            [Target(WORDSTAT, "checkpoint_1", BROKEN), Target(WORDSTAT, "checkpoint_1", BROKEN)],
            "targets[1]: wordstat/checkpoint_1 is already a target",
        ),
    ],
)
def test_a_bad_target_is_named(targets: Any, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        scbench_ci.evaluate(targets)
    assert message in str(raised.value)


def test_pytest_args_are_a_list_not_a_string() -> None:
    with pytest.raises(UsageError, match="pytest_args: a list of arguments"):
        scbench_ci.evaluate([Target(WORDSTAT, "checkpoint_1", BROKEN)], pytest_args="-x")


def test_an_unusable_docker_is_an_infrastructure_error(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError):
        scbench_ci.evaluate(
            [Target(WORDSTAT, "checkpoint_1", BROKEN)],
            executor="docker",
            image="scbench-ci-test/no-such-image:none",
            output=tmp_path,
        )


@pytest.mark.parametrize("executor", [{}, {"executor": "auto"}, {"executor": "docker"}])
def test_without_a_daemon_nothing_runs_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executor: dict[str, str]
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    target = Target(WORDSTAT, "checkpoint_1", BROKEN)
    with pytest.raises(InfrastructureError, match="--executor local to run the tests on this "):
        scbench_ci.evaluate([target], **executor)
    with pytest.raises(InfrastructureError, match=r"^cannot reach the Docker daemon"):
        scbench_ci.check_problems([WORDSTAT], **executor)


def test_without_a_daemon_the_local_executor_runs_when_asked_and_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    target = Target(WORDSTAT, "checkpoint_1", BROKEN)
    with pytest.warns(RuntimeWarning, match=r"^scbench-ci: --executor local: .* without a contai"):
        ran = scbench_ci.evaluate([target], executor="local")
    assert ran.run.executor == "local"


def test_every_name_is_there_and_check_problems_beside_the_check_package() -> None:
    assert scbench_ci.check_problems.__module__ == "scbench_ci.api"
    assert isinstance(scbench_ci.check, ModuleType)  # imported by the CLI's check above
    for name in scbench_ci.__all__:
        assert getattr(scbench_ci, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        scbench_ci.nothing  # noqa: B018


def _cli_defaults(add_arguments: Any, *required: str) -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return vars(parser.parse_args(list(required)))


# The API's keywords that are named otherwise than the CLI's flags' destinations.
_RENAMED = {"output": None, "echo": None, "pytest_args": None}


@pytest.mark.parametrize(
    ("function", "add_arguments", "required"),
    [
        (
            scbench_ci.evaluate,
            cli_evaluate.add_arguments,
            ("--problem", "p", "--checkpoint", "c", "--submission", "s"),
        ),
        (scbench_ci.check_problems, cli_check.add_arguments, ("p",)),
    ],
)
def test_the_keywords_default_to_the_cli_s_defaults(
    function: Any, add_arguments: Any, required: tuple[str, ...]
) -> None:
    cli = _cli_defaults(add_arguments, *required)
    keywords = list(inspect.signature(function).parameters.values())[1:]
    assert all(keyword.kind is inspect.Parameter.KEYWORD_ONLY for keyword in keywords)
    for keyword in keywords:
        name = _RENAMED.get(keyword.name, keyword.name)
        if name is not None:
            assert keyword.default == cli[name], keyword.name


def _reward_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reward_example", REWARD_EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reward_is_1_for_a_pass_else_the_core_share() -> None:
    reward = _reward_module().reward
    passing = make_checkpoint(make_test("a", Status.PASSED))
    assert reward(passing) == 1.0
    half = make_checkpoint(make_test("a", Status.PASSED), make_test("b", Status.FAILED))
    assert reward(half) == 0.5
    # Failed by its policy (core-cases needs a Core test), with none.
    no_core = replace(make_checkpoint(make_test("a", Status.PASSED, Group.ERROR)), passed=False)
    assert reward(no_core) == 0.0
    stopped = make_checkpoint(
        failure=scbench_ci.Failure(FailureKind.INFRASTRUCTURE, "the daemon went away")
    )
    assert reward(stopped) is None


def test_the_reward_example_prints_each_submission_s_reward(docker_client: object) -> None:
    solution = WORDSTAT / "solutions" / "checkpoint_1"
    run = subprocess.run(
        [sys.executable, REWARD_EXAMPLE, WORDSTAT, "checkpoint_1", solution, BROKEN, "--image",
         TEST_IMAGE],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert (run.returncode, run.stderr) == (0, "")
    # Nothing but the rewards: the API prints nothing without `echo`. The broken submission
    # passes 2 of checkpoint_1's 8 Core tests (testing/examples.EXPECTED).
    assert run.stdout.splitlines() == [f"1.000 {solution}", f"0.250 {BROKEN}"]


def test_history_gives_the_trends_with_each_run_s_code_quality(tmp_path: Path) -> None:
    run = None
    for day, figures in enumerate([(0.05, 0.2), (0.07, 0.3)], start=1):
        checkpoint = measured(make_checkpoint(make_test("a", Status.PASSED)), *figures)
        tonight = make_run(checkpoint, started_at=f"2026-05-0{day}T01:30:00+00:00")
        run = with_history(tonight, 10, None, carried(run))
    assert run is not None
    path = write_results(run, tmp_path)

    found = scbench_ci.history(path)

    assert found is not None and found.runs == 2
    assert [(q.verbosity, q.erosion, q.measured) for q in found.quality] == [
        (0.05, 0.2, 1),
        (0.07, 0.3, 1),
    ]
    path.write_text(path.read_text().replace('"erosion": 0.3', '"erosion": 3'))
    with pytest.raises(UsageError, match=r"\.erosion: 3 is greater than the maximum of 1"):
        scbench_ci.history(path)


# The examples whose tests give their subprocesses the most time (a busy machine's evaluations
# side by side are slow), one of them twice.
SESSION_TARGETS = [
    Target(EXAMPLES / "settings", "checkpoint_1", EXAMPLES / "settings/solutions/checkpoint_1"),
    Target(EXAMPLES / "marks", "checkpoint_1", EXAMPLES / "marks/solutions/checkpoint_1"),
    Target(EXAMPLES / "settings", "checkpoint_1", EXAMPLES / "settings/solutions/checkpoint_1"),
]


def test_a_session_called_from_threads_gives_each_example_its_counts(
    docker_client: object,
) -> None:
    """Two threads at once over three targets (two of them the same, so of one container
    shape): every evaluation's exit code and counts are the example's
    (testing/examples.EXPECTED), as `evaluate` gives them."""
    with (
        scbench_ci.Session(jobs=1, **IN_DOCKER) as session,
        ThreadPoolExecutor(max_workers=2) as threads,
    ):
        evaluations = list(threads.map(lambda one: session.evaluate([one]), SESSION_TARGETS))
    for target, evaluation in zip(SESSION_TARGETS, evaluations, strict=True):
        [checkpoint] = evaluation.checkpoints
        key = (Path(target.problem).name, target.checkpoint, _under(target))
        exit_code, counts = EXPECTED[key]
        assert (evaluation.exit_code, _counts(checkpoint)) == (exit_code, counts), key


def _under(target: Target) -> str:
    return Path(target.submission).relative_to(Path(target.problem)).as_posix()


def _counts(checkpoint: CheckpointResult) -> dict[str, tuple[int, int, int, int]]:
    return {
        group.value: (counts.passed, counts.failed, counts.skipped, counts.total)
        for group, counts in checkpoint.groups.items()
    }


def test_a_session_takes_evaluate_s_keywords_and_refuses_others() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'targets'"):
        scbench_ci.Session(targets=[])
    with pytest.raises(UsageError, match=r"^jobs: "):
        scbench_ci.Session(jobs="many")
    with (
        pytest.warns(RuntimeWarning),
        scbench_ci.Session(executor="local") as session,
        pytest.raises(UsageError, match="targets: no target given"),
    ):
        session.evaluate([])
