"""The flags the CLI's commands share: a bad value is argparse's usage error, the reason the option
parser's; the Docker executor's flags are DockerSettings'."""

from __future__ import annotations

import re

import pytest

from scbench_ci.cli import evaluate
from scbench_ci.cli import main as cli_main
from scbench_ci.cli.arguments import STDOUT
from scbench_ci.cli.main import parse_arguments
from scbench_ci.commands.error_handler import Ending
from scbench_ci.executors.docker.settings import DockerSettings

WHERE = ("evaluate", "--problem", "p", "--checkpoint", "checkpoint_1", "--submission", "s")


@pytest.mark.parametrize(
    ("flag", "value", "reason"),
    [
        ("--jobs", "0", "must be at least 1, got '0'"),
        ("--reruns", "-1", "'-1' is not a whole number"),
        ("--timeout", "-3", "must be more than 0 seconds, got '-3'"),
        ("--session-timeout", "soon", "'soon' is not a number of seconds"),
        ("--memory", "lots", "not a size like 512m or 4g: 'lots'"),
        ("--disk", "0", "not a size like 512m or 4g: '0'"),
        ("--cpus", "0", "must be more than 0, got '0'"),
        ("--pids-limit", "x", "'x' is not a whole number"),
    ],
)
def test_a_bad_value_is_a_usage_error_with_the_parser_s_reason(
    flag: str, value: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_arguments([*WHERE, flag, value])
    assert stopped.value.code == 2
    # A flag with a short form is named by both (`-j/--jobs`).
    assert re.search(
        f"error: argument (-./)?{flag}: {re.escape(reason)}\n", capsys.readouterr().err
    )


def test_without_docker_flags_the_settings_are_the_defaults() -> None:
    assert evaluate.options(parse_arguments(list(WHERE))).executor_settings == DockerSettings()


@pytest.mark.parametrize("command", ["evaluate", "check"])
def test_the_help_says_what_follows_double_dash_goes_to_pytest(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_arguments([command, "--help"])
    assert stopped.value.code == 0
    usage, _, rest = capsys.readouterr().out.partition("\n\n")
    assert usage.endswith(" [-- PYTEST ARGS]")
    assert "Whatever follows `--` is given to pytest as it is" in " ".join(rest.split())


@pytest.mark.parametrize(
    ("printed", "expected"), [("PASSED [ 50", "PASSED [ 50\n"), ("done\n", "done\n")]
)
def test_an_interrupted_run_s_message_starts_on_a_line_of_its_own(
    capsys: pytest.CaptureFixture[str], printed: str, expected: str
) -> None:
    """A test's output cut mid-line by Ctrl-C is ended before `scbench-ci: interrupted`."""
    STDOUT.line_open = False
    STDOUT.write(printed)
    cli_main._report(Ending(130, "interrupted", cancelled=True))
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (expected, "scbench-ci: interrupted\n")


def test_plan_s_checkpoint_is_checked_as_evaluate_s(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_arguments(["plan", "--problem", "p", "--checkpoint", "../c"])
    assert stopped.value.code == 2
    assert "error: argument --checkpoint: '../c' is not a checkpoint name" in (
        capsys.readouterr().err
    )
