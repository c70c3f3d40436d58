"""The declarations are the one source of every option: each has a flag, an input and a keyword
or says why not; the CLI's flags, action.yml's inputs and the API's keywords are theirs, with
their defaults; and a bad value gets the same reason from the CLI, the action and the API."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest
import yaml

import scbench_ci
from scbench_ci.action.inputs import ActionInputs, read_inputs
from scbench_ci.api import CHECK_KEYWORDS, EVALUATE_KEYWORDS
from scbench_ci.cli.main import COMMANDS, parse_arguments
from scbench_ci.executors.settings import Setting
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.option_values import BadValue, Option, optional_text, path, words
from scbench_ci.job.plan import Target
from scbench_ci.options import (
    CheckOptions,
    CleanupOptions,
    EvaluationOptions,
    MergeOptions,
    PlanOptions,
    SummaryOptions,
    declared,
)
from testing.paths import REPO_ROOT
from testing.runner import input_variable

DECLARED: list[Option] = [
    *(value for value in vars(declared).values() if isinstance(value, Option)),
    *declared.EXECUTOR_SETTINGS,
]
ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
REQUIRED = {
    "evaluate": ["--problem", "p", "--checkpoint", "checkpoint_1", "--submission", "s"],
    "plan": ["--problem", "p"],
    "merge": ["results.json"],
    "check": ["p"],
    "summary": ["results.json"],
    "history": ["results.json"],
    "cleanup": [],
}
"""What each command cannot be parsed without."""
ACCEPT_ANY_TEXT = (optional_text, path, words)
BAD_TEXT = {
    "jobs": "0",
    "reruns": "-1",
    "repeat": "0",
    "policy": "most",
    "oracle_policy": "all-case",
    "fail_on": "tests",
    "fail_on_policy": "maybe",
    "details": "some",
    "history": "101",
    "test_timeout": "-3",
    "session_timeout": "soon",
    "memory": "4",
    "cpus": "0",
    "pids_limit": "x",
    "disk": "0",
    "cache_size": "lots",
    "unused_for_s": "a while",
    "use_cache": "sometimes",
    "test_network": "rarely",
    "include_prior_tests": "perhaps",
    "flaky_passes": "often",
    "quality": "some",
    "scbench": "0.3",
    "skip_existing": "yes please",
    "same_submission": "twice",
    "executor": "podman",
    "engine": "spark",
    "ray_address": "nowhere",
    "checkpoint": "../c",
    "submission": "x/{problems}",
    "shards": "0",
    "test_shards": "none",
    "pytest_args": "-k 'open",
    "command": "check-all",
    "comment": "loud",
    "check_run": "sure",
    "job_summary": "short",
    "annotations": "some",
    "upload_artifact": "later",
    "retention_days": "7d",
    "owner": "nobody",
}
"""A text each option's parser refuses, for every option whose parser refuses any."""


def _name(option: Option) -> str:
    return f"{option.name}:{option.flag or option.input}"


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parsers = {}
    for command, module in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=command)
        module.add_arguments(parser)
        parsers[command] = parser
    return parsers


PARSERS = _parsers()


@pytest.mark.parametrize("option", DECLARED, ids=_name)
def test_every_declaration_has_a_flag_an_input_and_a_keyword_or_says_why_not(
    option: Option,
) -> None:
    missing = [what for what in ("flag", "input", "keyword") if not getattr(option, what)]
    assert bool(missing) == bool(option.absent), (missing, option.absent)


def test_the_action_s_inputs_are_the_declared_ones_as_action_yml_lists_them() -> None:
    inputs = [option.input for option in declared.ACTION_INPUTS]
    assert inputs == list(ACTION["inputs"])
    assert {option.input for option in DECLARED if option.input} == set(inputs)
    for option in declared.ACTION_INPUTS:
        spec = ACTION["inputs"][option.input]
        assert not spec.get("required"), option.input  # an empty input means its default
        assert str(spec.get("default", "")) == option.input_text, option.input


def _makes(option: Option, action: argparse.Action) -> bool:
    """Whether the flag is the one the declaration makes."""
    flags = [flag for flag in action.option_strings if flag.startswith("--")]
    off = option.flag and f"--no-{option.flag.removeprefix('--')}"
    if flags[0] == off and option.default is None:
        return True  # the pair's second switch
    if flags[0] != option.flag or (option.short and option.short not in action.option_strings):
        return False
    if option.required:
        return action.required
    return action.default == ([] if option.repeated else option.default)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_of_every_command_is_a_declaration_s_with_its_default(command: str) -> None:
    for action in PARSERS[command]._actions:
        if not action.option_strings:
            continue  # a positional argument: what the command reads (problems, results)
        if isinstance(action, argparse._HelpAction):
            continue
        declarations = [option for option in DECLARED if option.name == action.dest]
        assert any(_makes(option, action) for option in declarations), action.option_strings


@pytest.mark.parametrize(
    ("function", "options"),
    [(scbench_ci.evaluate, EVALUATE_KEYWORDS), (scbench_ci.check_problems, CHECK_KEYWORDS)],
    ids=["evaluate", "check_problems"],
)
def test_the_api_s_keywords_are_the_declared_ones_with_their_defaults(
    function: Any, options: tuple[Option, ...]
) -> None:
    keywords = {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name not in ("output", "echo")
    }
    assert keywords == {option.name: option.default for option in options}


def test_every_declared_keyword_is_a_keyword_of_the_api() -> None:
    taken = {option.name for option in (*EVALUATE_KEYWORDS, *CHECK_KEYWORDS)}
    assert {option.name for option in DECLARED if option.keyword} == taken


@pytest.mark.parametrize("option", DECLARED, ids=_name)
def test_every_option_that_refuses_a_text_has_one_here(option: Option) -> None:
    """So that the test below covers each: a new option needs a bad text, or takes any."""
    if option.is_switch and not (option.input or option.keyword):
        return  # only a CLI switch: no text to refuse
    if option.name in BAD_TEXT:
        with pytest.raises(BadValue):
            option.parse("x", BAD_TEXT[option.name])
    else:
        assert option.parse in ACCEPT_ANY_TEXT, option.name


def _cli_reason(option: Option, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    command = next(
        name
        for name, parser in PARSERS.items()
        if any(option.flag in action.option_strings for action in parser._actions)
    )
    with pytest.raises(SystemExit) as stopped:
        parse_arguments([command, *REQUIRED[command], option.flag or "", text])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    flags = "/".join(flag for flag in (option.short, option.flag) if flag)
    prefix = f"scbench-ci {command}: error: argument {flags}: "
    assert error.startswith(prefix), error
    return error.removeprefix(prefix)


def _action_reason(option: Option, text: str, workspace: Path) -> str:
    assert option.input is not None
    env = {
        "GITHUB_WORKSPACE": str(workspace),
        input_variable("problem"): "p",
        input_variable("checkpoint"): "checkpoint_1",
        input_variable(option.input): text,
    }
    with pytest.raises(UsageError) as raised:
        read_inputs(env)
    prefix = f"input {option.input}: "
    assert str(raised.value).startswith(prefix), str(raised.value)
    return str(raised.value).removeprefix(prefix)


def _api_reason(option: Option, text: str, workspace: Path) -> str:
    if option.name in {one.name for one in EVALUATE_KEYWORDS}:
        target = Target(workspace / "p", "checkpoint_1", workspace / "s")
        call = lambda: scbench_ci.evaluate([target], **{option.name: text})  # noqa: E731
    else:
        call = lambda: scbench_ci.check_problems([workspace / "p"], **{option.name: text})  # noqa: E731
    with pytest.raises(UsageError) as raised:
        call()
    prefix = f"{option.name}: "
    assert str(raised.value).startswith(prefix), str(raised.value)
    return str(raised.value).removeprefix(prefix)


@pytest.mark.parametrize("option", [o for o in DECLARED if o.name in BAD_TEXT], ids=_name)
def test_a_bad_value_has_the_same_reason_from_the_cli_the_action_and_the_api(
    option: Option, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = BAD_TEXT[option.name]
    with pytest.raises(BadValue) as parsed:
        option.parse("x", text)
    reasons = {}
    if option.flag and not option.is_switch:
        reasons["cli"] = _cli_reason(option, text, capsys)
    if option.input:
        reasons["action"] = _action_reason(option, text, tmp_path)
    # The API takes pytest's arguments as a list, not as a shell's text.
    if option.keyword and option is not declared.PYTEST_ARGS:
        reasons["api"] = _api_reason(option, text, tmp_path)
    assert reasons
    assert reasons == dict.fromkeys(reasons, parsed.value.reason)


READ_BY_THE_FRONT_END = {
    "evaluate": {"same_submission", "baseline", "quiet", "verbose", "workflow_report"},
    "check": {"quiet"},
    "merge": {"baseline"},
    "plan": {"baseline"},
    "summary": set(),
    "cleanup": set(),
}
"""What each command's CLI reads itself: the options that set no field of its options type."""
OPTIONS_TYPES = {
    "evaluate": (declared.EVALUATE, EvaluationOptions),
    "check": (declared.CHECK, EvaluationOptions, CheckOptions),
    "merge": (declared.MERGE, MergeOptions),
    "plan": (declared.PLAN, PlanOptions),
    "summary": (declared.SUMMARY, SummaryOptions),
    "cleanup": (declared.CLEANUP, CleanupOptions),
}


@pytest.mark.parametrize("command", OPTIONS_TYPES)
def test_every_option_of_a_command_sets_a_field_of_its_options_or_is_read_apart(
    command: str,
) -> None:
    """A declaration whose field is misspelt would be dropped by `fields_of` without a word."""
    options, *options_types = OPTIONS_TYPES[command]
    fields = {field.name for one in options_types for field in dataclasses.fields(one)}
    apart = {
        option.name
        for option in options
        if not isinstance(option, Setting) and option.field_name not in fields
    }
    assert apart == READ_BY_THE_FRONT_END[command]


def test_every_input_sets_a_field_of_the_options_or_of_the_action_s_inputs() -> None:
    fields = {field.name for field in dataclasses.fields(EvaluationOptions)}
    fields |= {field.name for field in dataclasses.fields(CheckOptions)}
    fields |= {field.name for field in dataclasses.fields(ActionInputs)}
    apart = {
        option.name
        for option in declared.ACTION_INPUTS
        if not isinstance(option, Setting) and option.field_name not in fields
    }
    # The one a command checks its submission with, and the one fail_on is made of.
    assert apart == {"same_submission", "fail_on_policy"}
