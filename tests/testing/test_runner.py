"""The runner emulation itself, against what actions/runner's source says (see runner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.paths import REPO_ROOT
from testing.runner import (
    ActionManifest,
    RunnerHost,
    input_variable,
    read_env_file,
    split_arguments,
)

OLD_STYLE = """\
name: v1 style
inputs:
  entrypoint:
    default: ""
  two words:
    description: no default
runs:
  using: docker
  image: Dockerfile
"""


def manifest(tmp_path: Path, text: str) -> ActionManifest:
    path = tmp_path / "action.yml"
    path.write_text(text)
    return ActionManifest.load(path)


@pytest.mark.parametrize(
    ("arguments", "argv"),
    [
        (
            'run --entrypoint "python3 wordstat.py" image',
            ["run", "--entrypoint", "python3 wordstat.py", "image"],
        ),
        ('image  "a" "" "b c"', ["image", "a", "", "b c"]),
        ('"say \\"hi\\""', ['say "hi"']),
        ('a\\\\b "c\\\\"', ["a\\\\b", "c\\"]),
        ("one\ntwo\tthree", ["one\ntwo", "three"]),  # a newline does not separate
        ('"in ""quotes"""', ['in "quotes"']),
        ("image ", ["image"]),
    ],
)
def test_arguments_are_split_as_dotnet_splits_them(arguments: str, argv: list[str]) -> None:
    assert split_arguments(arguments) == argv


def test_input_variables_are_named_as_the_runner_names_them() -> None:
    assert input_variable("retention_days") == "INPUT_RETENTION_DAYS"
    assert input_variable("two words") == "INPUT_TWO_WORDS"
    assert input_variable("my-input") == "INPUT_MY-INPUT"
    assert input_variable("entryPoint") == "INPUT_ENTRYPOINT"


def test_defaults_fill_the_inputs_a_step_leaves_out(tmp_path: Path) -> None:
    action = manifest(tmp_path, OLD_STYLE)
    inputs = action.step_inputs({"Entrypoint": "python3 wordstat.py", "extra": "kept"})
    # Keys ignore case and keep the step's spelling; an input without a default is "".
    assert list(inputs.items()) == [
        ("Entrypoint", "python3 wordstat.py"),
        ("extra", "kept"),
        ("two words", ""),
    ]


def test_without_runs_entrypoint_the_entrypoint_input_is_the_program(tmp_path: Path) -> None:
    action = manifest(tmp_path, OLD_STYLE)
    given = action.step_inputs({"entrypoint": "python3 wordstat.py", "ARGS": "-x 'y z'"})
    assert action.container_entrypoint(given) == "python3 wordstat.py"
    assert action.container_args(given) == "-x 'y z'"
    default = action.step_inputs({})
    assert action.container_entrypoint(default) == ""  # empty: no --entrypoint
    assert action.container_args(default) is None


def test_our_action_yml_keeps_the_program_whatever_the_inputs() -> None:
    action = ActionManifest.load(REPO_ROOT / "action.yml")
    inputs = action.step_inputs({"entrypoint": "python3 wordstat.py", "args": "--evil"})
    assert action.container_entrypoint(inputs) == "/opt/venv/bin/python"
    assert action.container_args(inputs) == ' "/opt/scbench-ci/entrypoint.py"'
    assert split_arguments(action.container_args(inputs) or "") == ["/opt/scbench-ci/entrypoint.py"]


def test_runs_args_are_quoted_one_by_one(tmp_path: Path) -> None:
    action = manifest(
        tmp_path,
        OLD_STYLE + '  args: ["a b", "", "say \\"hi\\"", "back\\\\slash"]\n',
    )
    arguments = action.container_args(action.step_inputs({}))
    assert arguments is not None
    # The runner doubles every backslash, and .NET keeps one that precedes no quote as it is.
    assert split_arguments(arguments) == ["a b", "", 'say "hi"', "back\\\\slash"]


def test_a_default_that_is_not_a_string_fails_as_on_the_runner(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="is not a string"):
        manifest(tmp_path, OLD_STYLE.replace('default: ""', "default: false"))


def test_host_paths_are_translated_to_the_container_mounts(tmp_path: Path) -> None:
    host = RunnerHost(tmp_path / "runner")
    assert host.translate(str(host.home)) == "/github/home"
    assert host.translate(str(host.file_commands / "set_output_1")) == (
        "/github/file_commands/set_output_1"
    )
    assert host.translate(str(host.workspace / "a/b")) == "/github/workspace/a/b"
    assert host.translate(str(host.temp / "other")) == "/github/runner_temp/other"
    assert host.translate(str(host.workspace) + "-sibling") == str(host.workspace) + "-sibling"
    assert host.translate("plain value") == "plain value"


def test_output_files_are_read_by_the_runner_rules() -> None:
    text = "a=1\nb<<EOF\nline 1\nline 2\nEOF\n\nc<<X\nX\nd=x=y\n"
    assert read_env_file(text) == {"a": "1", "b": "line 1\nline 2", "c": "", "d": "x=y"}
    with pytest.raises(AssertionError, match="matching delimiter not found"):
        read_env_file("b<<EOF\nvalue\n")
    with pytest.raises(AssertionError, match="invalid format"):
        read_env_file("no separator\n")
