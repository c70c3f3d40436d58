"""The options both front ends build: the executor's settings as the fingerprint has them, the
default number of jobs, the executor made of them, and the submission templates they take."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scbench_ci.executors.choice import (
    EXECUTOR_NAMES,
    LOCAL_NOTICE,
    NoSettings,
    each_executors_settings,
    make_executor,
)
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.image_recipe import recipe_digest
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.local import LocalExecutor
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.option_values import BadValue
from scbench_ci.foundation.scbench_runner import PAPER, V1_0, ScbenchRunner
from scbench_ci.options import (
    EvaluationOptions,
    MergeOptions,
    check_shared_submission,
    checkpoint_choice,
    fields_of,
    job_count,
    submission_template,
)
from scbench_ci.options.declared import EXECUTOR_SETTINGS, JOBS, POLICY, QUIET
from testing.problems import ProblemFolder

OPTIONS = EvaluationOptions(
    problems=(Path("problem"), Path("problems")),
    checkpoint="all",
    submission="solutions/{checkpoint}",
    output_dir=Path("out"),
    executor="docker",
    settings_by_executor=each_executors_settings(
        {
            "image": "python:3.12",
            "memory": "1g",
            "cpus": 0.5,
            "pids_limit": 64,
            "disk": "256m",
            "test_network": True,
            "use_cache": False,
        }
    ),
    include_prior_tests=False,
    entrypoint="python3 main.py",
    environment=Path("env.yaml"),
    test_timeout_s=12,
    session_timeout_s=600,
    policy="any-case",
    pytest_args=("-x",),
    jobs=3,
    skip_existing=True,
)


@pytest.mark.parametrize("scbench", [V1_0, PAPER])
def test_the_fingerprint_has_docker_s_settings_as_before(scbench: ScbenchRunner) -> None:
    """As earlier versions made them (not whether the cache is used), with the recipe of the
    image built when none is named: their signed results are still reused."""
    assert OPTIONS.executor_settings.fingerprinted("docker", scbench) == {
        "executor": {
            "executor": "docker",
            "image": "python:3.12",
            "memory": "1g",
            "cpus": 0.5,
            "pids_limit": 64,
            "disk": "256m",
            "test_network": True,
        },
        "recipe": recipe_digest(scbench.image_recipe),
    }


def test_the_local_executor_s_fingerprint_is_its_name() -> None:
    """It has no settings: Docker's limits and image recipe change nothing it runs."""
    local = dataclasses.replace(OPTIONS, executor="local")
    assert local.executor_settings == NoSettings()
    fingerprinted = local.executor_settings.fingerprinted("local", V1_0)
    assert fingerprinted == {"executor": {"executor": "local"}}


def test_jobs_are_auto_by_default_or_a_count_of_at_least_one() -> None:
    options = EvaluationOptions(problems=(), checkpoint="all", submission="s", output_dir=Path("o"))
    assert options.jobs == "auto"
    assert job_count("--jobs", "auto") == "auto"
    assert job_count("--jobs", "3") == 3
    for bad, reason in (("0", "must be at least 1, got '0'"), ("Auto", "'Auto' is not a whole")):
        with pytest.raises(BadValue, match=reason):
            job_count("--jobs", bad)


def test_the_docker_executor_gets_every_limit() -> None:
    executor = make_executor(OPTIONS.executor, OPTIONS.executor_settings, warn=print)
    assert isinstance(executor, DockerExecutor)
    settings = executor.settings
    assert (settings.image, settings.memory, settings.cpus, settings.pids_limit) == (
        "python:3.12",
        "1g",
        0.5,
        64,
    )
    assert (settings.disk, settings.use_cache, settings.test_network) == ("256m", False, True)


def test_the_local_executor() -> None:
    local = dataclasses.replace(OPTIONS, executor="local")
    said: list[str] = []
    executor = make_executor(local.executor, local.executor_settings, warn=said.append)
    assert isinstance(executor, LocalExecutor)
    assert said == [LOCAL_NOTICE]


@pytest.mark.parametrize("value", ["../c", "/c", "c" * 101])
def test_a_checkpoint_is_a_name_or_all(value: str) -> None:
    assert checkpoint_choice("--checkpoint", "all") == "all"
    with pytest.raises(UsageError, match=f"^--checkpoint: '{value[:5]}.* is not a checkpoint"):
        checkpoint_choice("--checkpoint", value)


@pytest.mark.parametrize(
    "template", [".", "runs/x/{problem}/{checkpoint}/snapshot", "solutions/{checkpoint}"]
)
def test_a_template_of_known_placeholders_is_taken_as_it_is(template: str) -> None:
    assert submission_template("--submission", template) == template


@pytest.mark.parametrize(
    ("template", "unknown"),
    [
        ("examples/{problems}/solutions/{checkpoint}", "{problems}"),
        ("runs/{problem}/{Checkpoint}", "{Checkpoint}"),
        ("solutions/{}", "{}"),
    ],
)
def test_an_unknown_placeholder_is_refused_by_name(template: str, unknown: str) -> None:
    with pytest.raises(BadValue) as raised:
        submission_template("input submission", template)
    assert str(raised.value) == (
        f"input submission: {template!r}: unknown placeholder {unknown} "
        "(the known ones: {problem}, {checkpoint})"
    )


def test_several_problems_need_problem_in_the_submission(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        ProblemFolder(tmp_path / "problems" / name)
    problems = (tmp_path / "problems",)
    with pytest.raises(UsageError) as raised:
        check_shared_submission(
            "sol/{checkpoint}", problems, option="--submission", allow="give --x"
        )
    assert str(raised.value) == (
        "--submission: 'sol/{checkpoint}' has no {problem}, so each of the 2 problems would be "
        "evaluated against the same folder; put {problem} in it, or give --x if that is meant"
    )
    check_shared_submission("{problem}/{checkpoint}", problems, option="--submission", allow="")
    # One problem, given as itself or as the only one in its folder, has the folder to itself.
    alone = (tmp_path / "problems/alpha",)
    check_shared_submission("sol/{checkpoint}", alone, option="--submission", allow="")


def test_the_fields_an_options_type_has_are_filled_and_each_executor_s_settings_are_one() -> None:
    given = {"jobs": 3, "quiet": True, "memory": "1g", "policy": "any", "oracle_policy": "all"}
    declarations = (JOBS, QUIET, *EXECUTOR_SETTINGS, POLICY)
    value = {**{setting.name: setting.default for setting in EXECUTOR_SETTINGS}, **given}
    fields = fields_of(EvaluationOptions, declarations, lambda option: value[option.name])
    # `quiet` is no field of EvaluationOptions.
    settings = fields.pop("settings_by_executor")
    assert fields == {"jobs": 3, "policy": "any"}
    assert tuple(settings) == EXECUTOR_NAMES  # each executor's, the others' at their defaults
    assert settings["docker"] == DockerSettings(memory="1g")
    assert settings["local"] == NoSettings()
    merged = fields_of(MergeOptions, declarations, lambda option: value[option.name])
    assert merged == {}  # no field of MergeOptions, no Docker settings either
