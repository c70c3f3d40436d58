"""The one place the request and the executor are made from the options (both front ends')."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from scbench_ci.evaluation import EvaluationRequest
from scbench_ci.executors.docker import DockerExecutor
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.options import EvaluationOptions

OPTIONS = EvaluationOptions(
    problem=Path("problem"),
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
)


def test_the_request_carries_every_option_of_the_evaluation() -> None:
    assert OPTIONS.request() == EvaluationRequest(
        problem_dir=Path("problem"),
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
    )


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
