"""job_evaluation.py, one job: its checkpoint staged, run by the local executor (Docker's where
a run cannot take place), judged, and its files written into its job folder; a signed earlier
result reused by `--skip-existing`, and refused when anything it was made from changed."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.choice import each_executors_settings
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.job.plan import Job, plan_jobs
from scbench_ci.options import EvaluationOptions
from scbench_ci.pipeline.job_evaluation import evaluate_job
from scbench_ci.pipeline.placement import OnThisMachine
from scbench_ci.results.model import FailureKind
from testing.problems import ProblemFolder

UNPULLABLE = "127.0.0.1:9/scbench-ci/missing:0"
"""Refused at once: nothing listens on port 9 (the daemon treats 127.0.0.0/8 as insecure)."""


def _job(options: EvaluationOptions) -> Job:
    [job] = plan_jobs(
        options.problems, "checkpoint_1", options.submission, options.output_dir, None
    ).jobs
    return job


def _options(tmp_path: Path, **settings: object) -> EvaluationOptions:
    problem = ProblemFolder(
        tmp_path / "problem",
        {"name": "demo", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
    )
    submission = tmp_path / "submission"
    submission.mkdir(exist_ok=True)
    (submission / "main.py").write_text("print('hello')\n")
    defaults = {"submission": str(submission), "executor": "local"}
    return EvaluationOptions(
        problems=(problem.root,),
        checkpoint="checkpoint_1",
        output_dir=tmp_path / "out",
        **{**defaults, **settings},  # type: ignore[arg-type]
    )


def _no_preflight() -> None:
    raise AssertionError("the executor was asked for although nothing was to run")


def _preflight() -> None:
    pass


@pytest.mark.slow
def test_a_job_is_run_judged_and_written_into_its_folder(tmp_path: Path) -> None:
    options = _options(tmp_path)
    job = _job(options)
    output = tmp_path / "out"
    output.mkdir()
    (tmp_path / "submission" / "outside").symlink_to("/etc/hostname")
    echo = io.StringIO()
    result = evaluate_job(
        options, job, output, None, OnThisMachine(LocalExecutor()), _preflight, echo, ("n",)
    )

    assert result.passed and result.failure is None and result.pytest_exit_code == 0
    assert (result.submission, result.artifacts) == (str(tmp_path / "submission"), job.artifacts)
    assert result.started_at and result.fingerprint and not result.reused
    phases = list(result.phases)
    assert phases[0] == "stage" and phases[-1] == "reports"
    assert {"setup", "tests"} <= set(result.phases)
    assert result.notices[-1] == "n"
    [warning] = result.warnings
    # SCBench 1.0's rules, the default: its snapshot leaves out every link, outside or not.
    assert warning == (
        "1 symlink(s) of the submission were left out, as SCBench's snapshot leaves out every "
        "link: outside"
    )
    assert f"warning: {warning}" in echo.getvalue()
    folder = output / job.artifacts
    names = {path.name for path in folder.iterdir()}
    assert {"pytest.log", "setup.log", "pytest-report.json", "ctrf-report.json"} <= names
    assert {"result.json", "result.sig", "evaluation.json"} <= names
    assert json.loads((folder / "result.json").read_text())["fingerprint"] == result.fingerprint


@pytest.mark.slow
def test_a_signed_result_is_reused_for_the_same_inputs_only(tmp_path: Path) -> None:
    options = _options(tmp_path, skip_existing=True)
    job = _job(options)
    output = tmp_path / "out"
    output.mkdir()
    placement = OnThisMachine(LocalExecutor())
    first = evaluate_job(options, job, output, None, placement, _preflight, None)

    again = evaluate_job(options, job, output, None, placement, _no_preflight, None)
    assert again.reused and again.fingerprint == first.fingerprint
    assert [test.id for test in again.tests] == [test.id for test in first.tests]

    other_rules = replace(options, scbench="paper")
    judged = evaluate_job(other_rules, job, output, None, placement, _preflight, None)
    assert not judged.reused and judged.fingerprint != first.fingerprint

    other_policy = replace(options, policy="all-cases")
    changed = evaluate_job(other_policy, job, output, None, placement, _preflight, None)
    assert not changed.reused and changed.fingerprint != first.fingerprint

    (tmp_path / "submission" / "main.py").write_text("print('changed')\n")
    edited = evaluate_job(other_policy, job, output, None, placement, _preflight, None)
    assert not edited.reused and edited.fingerprint != changed.fingerprint


def test_a_missing_submission_is_a_fail_that_runs_nothing(tmp_path: Path) -> None:
    options = _options(tmp_path, submission=str(tmp_path / "submissions/{checkpoint}"))
    job = _job(options)
    output = tmp_path / "out"
    output.mkdir()
    placement = OnThisMachine(LocalExecutor())
    result = evaluate_job(options, job, output, None, placement, _no_preflight, None)
    assert result.failure is not None and result.failure.kind is FailureKind.MISSING
    assert result.failure.message == (
        f"the submission folder {tmp_path / 'submissions/checkpoint_1'} does not exist"
    )
    assert result.fingerprint is None
    assert {path.name for path in (output / job.artifacts).iterdir()} == {"result.json"}


def test_a_run_that_cannot_take_place_is_an_infrastructure_failure_never_signed(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    settings = each_executors_settings({"image": UNPULLABLE})
    options = _options(tmp_path, executor="docker", settings_by_executor=settings)
    job = _job(options)
    output = tmp_path / "out"
    output.mkdir()
    placement = OnThisMachine(DockerExecutor(options.executor_settings))
    result = evaluate_job(options, job, output, None, placement, _preflight, None)
    assert result.failure is not None and result.failure.kind is FailureKind.INFRASTRUCTURE
    assert UNPULLABLE in result.failure.message
    assert result.infrastructure_failure and not result.passed
    assert list(result.phases) == ["stage"] and result.fingerprint
    assert not (output / job.artifacts / "result.sig").exists()
