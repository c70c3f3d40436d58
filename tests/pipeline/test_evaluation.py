"""evaluation.py, the run of many jobs: its plan, the output folder made ready, the executor's
pre-flight before any job, the jobs run (streamed one at a time, or side by side with progress
lines) in the order their durations ask, one result per checkpoint folder in the jobs' order
(a repeated checkpoint's runs combined), and the run's results and SCBench's rows.

Runs use the local executor on real problems (pytest through uvx); a job whose submission folder
does not exist runs nothing, which is how the tests of ordering and of the output folder stay
fast. Each job's own evaluation is `tests/pipeline/test_job_evaluation.py`'s.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.version import __version__
from scbench_ci.job.plan import Target
from scbench_ci.options import EvaluationOptions
from scbench_ci.pipeline.evaluation import RUN_FILES, evaluate_jobs, evaluate_plan, plan_evaluation
from scbench_ci.pipeline.placement import OnThisMachine
from scbench_ci.results.model import FailureKind, RepeatCount
from scbench_ci.results.scbench_format import CHECKPOINT_RESULTS_FILE
from testing.problems import ProblemFolder

UNPULLABLE = "127.0.0.1:9/scbench-ci/missing:0"
"""Refused at once: nothing listens on port 9 (the daemon treats 127.0.0.0/8 as insecure)."""


def _problem(root: Path, name: str, checkpoints: int) -> Path:
    config = {
        "name": name,
        "entry_file": "main",
        "checkpoints": {f"checkpoint_{n}": {} for n in range(1, checkpoints + 1)},
    }
    return ProblemFolder(root / name, config).root


def _submit(root: Path, problem: str, checkpoint: str) -> None:
    folder = root / "submissions" / problem / checkpoint
    folder.mkdir(parents=True)
    (folder / "main.py").write_text("print('hello')\n")


def _options(root: Path, *problems: Path, **settings: object) -> EvaluationOptions:
    return EvaluationOptions(
        problems=problems,
        checkpoint="all",
        submission=str(root / "submissions/{problem}/{checkpoint}"),
        output_dir=root / "out",
        **{"executor": "local", **settings},  # type: ignore[arg-type]
    )


def _local() -> OnThisMachine:
    return OnThisMachine(LocalExecutor())


def test_the_plan_is_the_targets_when_named_else_problems_by_checkpoints(tmp_path: Path) -> None:
    alpha = _problem(tmp_path, "alpha", 3)
    beta = _problem(tmp_path, "beta", 2)
    options = _options(tmp_path, alpha, beta)
    assert [job.key for job in plan_evaluation(options).jobs] == [
        "alpha/checkpoint_1",
        "alpha/checkpoint_2",
        "alpha/checkpoint_3",
        "beta/checkpoint_1",
        "beta/checkpoint_2",
    ]
    selected = _options(tmp_path, alpha, beta, select=("beta/checkpoint_2", "alpha/checkpoint_1"))
    assert [job.key for job in plan_evaluation(selected).jobs] == [
        "alpha/checkpoint_1",
        "beta/checkpoint_2",
    ]
    # Named targets replace problems x checkpoint x submission, which are then not read.
    target = Target(beta, "checkpoint_2", tmp_path / "elsewhere")
    named = _options(tmp_path, tmp_path / "no-such-problem", targets=(target,))
    [job] = plan_evaluation(named).jobs
    assert (job.key, job.submission) == ("beta/checkpoint_2", tmp_path / "elsewhere")


def test_results_come_in_the_jobs_order_whatever_order_they_ran_in(tmp_path: Path) -> None:
    """The longest known job starts first; the results, the problems and SCBench's rows keep
    the plan's order. No submission exists here: each job is a missing-submission fail."""
    alpha = _problem(tmp_path, "alpha", 3)
    beta = _problem(tmp_path, "beta", 1)
    options = _options(tmp_path, alpha, beta, jobs=1)
    echo = io.StringIO()
    durations = {
        "alpha/checkpoint_1": 1.0,
        "alpha/checkpoint_2": 30.0,
        "alpha/checkpoint_3": 60.0,
        "beta/checkpoint_1": 90.0,
    }
    run = evaluate_plan(options, plan_evaluation(options), _local(), echo, durations)

    started = [line for line in echo.getvalue().splitlines() if line.startswith("===")]
    assert [line.split(" (")[0] for line in started] == [
        "=== beta / checkpoint_1",
        "=== alpha / checkpoint_3",
        "=== alpha / checkpoint_2",
        "=== alpha / checkpoint_1",
    ]
    assert [(p.name, [c.name for c in p.checkpoints]) for p in run.problems] == [
        ("alpha", ["checkpoint_1", "checkpoint_2", "checkpoint_3"]),
        ("beta", ["checkpoint_1"]),
    ]
    assert all(c.failure and c.failure.kind is FailureKind.MISSING for _, c in run.checkpoints())
    assert not run.passed and not run.infrastructure_failure
    rows = (tmp_path / "out" / CHECKPOINT_RESULTS_FILE).read_text().splitlines()
    assert [(row["problem"], row["checkpoint"], row["path"]) for row in map(json.loads, rows)] == [
        ("alpha", "checkpoint_1", str(tmp_path / "out" / "alpha")),
        ("alpha", "checkpoint_2", str(tmp_path / "out" / "alpha")),
        ("alpha", "checkpoint_3", str(tmp_path / "out" / "alpha")),
        ("beta", "checkpoint_1", str(tmp_path / "out" / "beta")),
    ]


def test_the_run_s_duration_is_whole_milliseconds_as_results_json_keeps_it(tmp_path: Path) -> None:
    """The run's summary renders the duration the run has, `scbench-ci summary` the one
    results.json keeps: rounded once, at the run's end, both render alike (5.85001 s renders as
    5.9 s; saved as 5.85, it renders as 5.8 s)."""
    options = _options(tmp_path, _problem(tmp_path, "alpha", 1))
    run = evaluate_plan(options, plan_evaluation(options), _local(), None, {})
    assert run.duration_s > 0
    assert run.duration_s == round(run.duration_s, 3)


def test_an_earlier_run_s_files_are_removed_before_the_jobs_run(tmp_path: Path) -> None:
    """results.json, summary.md and checkpoint_results.jsonl of an earlier run in the output
    folder would otherwise stand beside this run's job folders as if they were its own."""
    alpha = _problem(tmp_path, "alpha", 1)
    options = _options(tmp_path, alpha)
    output = tmp_path / "out"
    output.mkdir()
    for name in (*RUN_FILES, "notes.txt"):
        (output / name).write_text("from an earlier run\n")
    evaluations = evaluate_jobs(options, plan_evaluation(options).jobs, _local(), None)
    assert [job.key for job, _ in evaluations.results] == ["alpha/checkpoint_1"]
    assert evaluations.side_by_side == 1
    assert sorted(path.name for path in output.iterdir()) == ["alpha", "notes.txt"]


@pytest.mark.slow
def test_a_run_streams_one_job_at_a_time_and_says_what_it_ran_with(tmp_path: Path) -> None:
    """With one job at a time, each job's output is echoed as it comes under its header."""
    alpha = _problem(tmp_path, "alpha", 2)
    _submit(tmp_path, "alpha", "checkpoint_1")
    options = _options(tmp_path, alpha, jobs=1, policy="any")
    echo = io.StringIO()
    run = evaluate_plan(options, plan_evaluation(options), _local(), echo)

    first, second = (checkpoint for _, checkpoint in run.checkpoints())
    assert first.passed and first.failure is None and first.pytest_exit_code == 0
    assert second.failure is not None and second.failure.kind is FailureKind.MISSING
    assert (run.executor, run.jobs, run.policy, run.repeat) == ("local", 1, "any", 1)
    assert run.tool_versions["scbench-ci"] == __version__
    assert run.problems[0].checkpoint_order == ("checkpoint_1", "checkpoint_2")
    text = echo.getvalue()
    header = text.index("=== alpha / checkpoint_1 (")
    assert text.index("test_checkpoint_1.py::test_ok PASSED", header) > header
    assert (tmp_path / "out/alpha/checkpoint_1/pytest.log").is_file()


@pytest.mark.slow
def test_a_repeated_checkpoint_is_one_result_over_its_runs(tmp_path: Path) -> None:
    """Two runs side by side (`--jobs 2`): progress lines instead of their output, and one
    result for the checkpoint, in its folder, counting each test's passes over the runs."""
    alpha = _problem(tmp_path, "alpha", 1)
    _submit(tmp_path, "alpha", "checkpoint_1")
    options = _options(tmp_path, alpha, jobs=2, repeat=2)
    echo = io.StringIO()
    run = evaluate_plan(options, plan_evaluation(options), _local(), echo)

    [(_, checkpoint)] = run.checkpoints()
    assert checkpoint.passed and checkpoint.artifacts == "alpha/checkpoint_1"
    assert [(test.id, test.repeat) for test in checkpoint.tests] == [
        ("tests/test_checkpoint_1.py::test_ok", RepeatCount(passed=2, runs=2))
    ]
    assert (run.jobs, run.repeat) == (2, 2)
    stored = json.loads((tmp_path / "out/alpha/checkpoint_1/result.json").read_text())
    assert stored["tests"][0]["repeat"] == {"passed": 2, "runs": 2}
    assert {"run-1", "run-2"} <= {
        path.name for path in (tmp_path / "out/alpha/checkpoint_1").iterdir()
    }
    assert "test_ok PASSED" not in echo.getvalue()
    assert "alpha / checkpoint_1 (run 2/2)" in echo.getvalue()


def test_the_executor_s_preflight_comes_before_any_job(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    """A place that cannot run the tests (an image no registry serves) is one error before any
    job; with --skip-existing the first job that runs asks for it, and jobs that run nothing
    (here: no submission) need no daemon."""
    alpha = _problem(tmp_path, "alpha", 2)
    placement = OnThisMachine(DockerExecutor(DockerSettings(image=UNPULLABLE)))
    options = _options(tmp_path, alpha, executor="docker")
    jobs = plan_evaluation(options).jobs
    with pytest.raises(InfrastructureError, match=re.escape(UNPULLABLE)):
        evaluate_jobs(options, jobs, placement, None)
    assert not (tmp_path / "out" / "alpha").exists()

    reusing = _options(tmp_path, alpha, executor="docker", skip_existing=True)
    with contextlib.closing(placement):
        evaluations = evaluate_jobs(reusing, jobs, placement, None)
    kinds = [result.failure.kind for _, result in evaluations.results if result.failure]
    assert kinds == [FailureKind.MISSING, FailureKind.MISSING]

    _submit(tmp_path, "alpha", "checkpoint_2")
    with pytest.raises(InfrastructureError, match=re.escape(UNPULLABLE)):
        evaluate_jobs(reusing, jobs, placement, None)
