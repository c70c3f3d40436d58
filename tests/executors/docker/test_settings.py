"""DockerSettings: each field is one place to add a container limit. It reaches the CLI's flag,
the action's input and its default, the executor and a run's fingerprint from there; each value is
parsed once, by the front end that reads it, with its declaration's parser."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import scbench_ci
from scbench_ci.action.inputs import DEFAULTS, read_inputs
from scbench_ci.cli import evaluate
from scbench_ci.cli.main import parse_arguments
from scbench_ci.executors.choice import make_executor
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.settings import declarations
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.option_values import as_text
from scbench_ci.foundation.scbench_runner import V1_0

CHANGED = {
    "image": "python:3.12",
    "memory": "1g",
    "cpus": "0.5",
    "pids_limit": "64",
    "disk": "256m",
    "use_cache": "false",
    "cache_size": "2g",
    "test_network": "false",
}
"""Each field away from its default, as its flag or its input gives it (a switch: its input)."""
FIELDS = [name for name, _ in declarations(DockerSettings)]
SETTINGS = dict(declarations(DockerSettings))


def test_every_field_has_a_changed_value_here() -> None:
    assert list(CHANGED) == FIELDS


@pytest.mark.parametrize("name", FIELDS)
def test_a_field_reaches_the_flag_the_input_the_executor_and_the_fingerprint(
    name: str, tmp_path: Path
) -> None:
    setting = SETTINGS[name]
    default = getattr(DockerSettings(), name)
    value = setting.parse(setting.flag, CHANGED[name])
    assert value != default
    changed = dataclasses.replace(DockerSettings(), **{name: value})

    flag = [setting.flag] if setting.metavar is None else [setting.flag, CHANGED[name]]
    where = ("--problem", "p", "--checkpoint", "checkpoint_1", "--submission", "s")
    from_cli = evaluate.options(parse_arguments(["evaluate", *where, *flag]))
    assert from_cli.executor_settings == changed

    assert DEFAULTS[setting.input] == as_text(default)
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_PROBLEM": "p", "INPUT_CHECKPOINT": "c"}
    from_action = read_inputs({**env, f"INPUT_{setting.input.upper()}": CHANGED[name]}).options
    assert from_action.executor_settings == changed

    executor = make_executor("docker", changed, warn=print)
    assert isinstance(executor, DockerExecutor)
    assert executor.settings == changed  # whole: its internals read each field from there

    fingerprinted = from_cli.executor_settings.fingerprinted("docker", V1_0)["executor"]
    assert (name in fingerprinted) is setting.fingerprinted
    if setting.fingerprinted:
        assert fingerprinted[name] == value


@pytest.mark.parametrize("memory", ["4x", "lots", "", "-1"])
def test_a_memory_limit_that_is_not_a_size_is_a_usage_error(memory: str) -> None:
    with pytest.raises(UsageError, match="--memory: not a size like 512m or 4g"):
        SETTINGS["memory"].parse("--memory", memory)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"cpus": 0.0}, "--cpus: must be more than 0, got '0'"),
        ({"cpus": float("nan")}, "--cpus: must be more than 0, got 'nan'"),
        ({"pids_limit": 0}, "--pids-limit: must be at least 1, got '0'"),
        ({"disk": "none"}, "--disk: not a size like 512m or 4g: 'none'"),
    ],
)
def test_a_value_its_flag_could_not_give_is_refused(given: dict[str, object], message: str) -> None:
    """By the flag's parser, and the action's and the API's alike (each names the option as
    its caller spells it)."""
    [(name, value)] = given.items()
    setting = SETTINGS[name]
    with pytest.raises(UsageError) as error:
        setting.parse(setting.flag, as_text(value))
    assert str(error.value) == message
    with pytest.raises(UsageError, match=f"^{name}: "):
        scbench_ci.evaluate([], **given)  # type: ignore[arg-type]


def test_every_default_is_a_value_its_flag_could_give() -> None:
    """DockerSettings does not parse its values when made (the front ends parse them, the CLI
    makes the defaults to build its flags): each default is parsed here instead."""
    defaults = DockerSettings()
    for name, setting in SETTINGS.items():
        value = getattr(defaults, name)
        assert setting.parse(setting.flag, as_text(value)) == value, name
