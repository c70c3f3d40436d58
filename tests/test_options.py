"""The one place the request and the executor are made from the options (both front ends')."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from scbench_ci.evaluation import EvaluationRequest
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.options import EvaluationOptions

OPTIONS = EvaluationOptions(
    problems=(Path("problem"), Path("problems")),
    checkpoint="all",
    submission="solutions/{checkpoint}",
    output_dir=Path("out"),
    executor="docker",
    include_prior_tests=False,
    entrypoint="python3 main.py",
    environment=Path("env.yaml"),
    image="python:3.12",
    memory="1g",
    cpus=0.5,
    pids_limit=64,
    disk="256m",
    test_network=True,
    use_cache=False,
    test_timeout_s=12,
    session_timeout_s=600,
    policy="any-case",
    pytest_args=("-x",),
    jobs=3,
    skip_existing=True,
)


def test_the_request_carries_every_option_of_the_evaluation() -> None:
    assert OPTIONS.request() == EvaluationRequest(
        problems=(Path("problem"), Path("problems")),
        checkpoint="all",
        submission="solutions/{checkpoint}",
        output_dir=Path("out"),
        policy="any-case",
        session_timeout_s=600,
        include_prior_tests=False,
        entrypoint="python3 main.py",
        environment_file=Path("env.yaml"),
        test_timeout_s=12,
        pytest_args=("-x",),
        jobs=3,
        skip_existing=True,
        settings={
            "executor": "docker",
            "image": "python:3.12",
            "memory": "1g",
            "cpus": 0.5,
            "pids_limit": 64,
            "disk": "256m",
            "test_network": True,
        },
    )


def test_by_default_as_many_jobs_as_the_cores_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    default = dataclasses.replace(OPTIONS, jobs=None)
    assert default.request().jobs == 8  # 0.5 CPUs each
    assert dataclasses.replace(default, cpus=2.0).request().jobs == 2
    assert dataclasses.replace(default, cpus=3.0).request().jobs == 1
    assert dataclasses.replace(default, executor="local").request().jobs == 4


def test_the_docker_executor_gets_every_limit() -> None:
    executor = OPTIONS.make_executor(warn=print)
    assert isinstance(executor, DockerExecutor)
    assert (executor.image, executor.memory, executor.cpus, executor.pids_limit) == (
        "python:3.12",
        "1g",
        0.5,
        64,
    )
    assert (executor.disk, executor.use_cache, executor.test_network) == ("256m", False, True)


def test_the_local_executor() -> None:
    local = dataclasses.replace(OPTIONS, executor="local")
    assert isinstance(local.make_executor(warn=print), LocalExecutor)
