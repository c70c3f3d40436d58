"""The command line forgives as a person expects: a typo is named with the nearest flag, command or
choice, no flag is taken from its prefix, pytest's flags are sent after `--`, values are checked
before anything runs, and an error is one line of usage and the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.cli.main import main

EVALUATE = ("evaluate", "--problem", "p", "--checkpoint", "c", "--submission", "s")


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as ended:
        main(list(argv))
    assert ended.value.code == 2
    err = capsys.readouterr().err
    usage, error, end = err.split("\n")
    assert usage.startswith("usage: scbench-ci") and end == ""
    return error


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ("evaluate", "--submision", "x", "--problem", "p", "--checkpoint", "c"),
            "unrecognized argument --submision (did you mean --submission?)",
        ),
        ((*EVALUATE, "--quite"), "unrecognized argument --quite (did you mean --quiet?)"),
        ((*EVALUATE, "--quite=1"), "unrecognized argument --quite (did you mean --quiet?)"),
        ((*EVALUATE, "--job", "1"), "unrecognized argument --job (did you mean --jobs?)"),
        ((*EVALUATE, "--nothing-like-it"), "unrecognized argument --nothing-like-it"),
        (
            (*EVALUATE, "-k", "parse"),
            "unrecognized argument -k: pytest's arguments go after `--` "
            "(scbench-ci evaluate ... -- -k ...)",
        ),
        (("summary", "r.json", "--outptu", "x"), "unrecognized argument --outptu (did you mean "
         "--output?)"),
    ],
)  # fmt: skip
def test_an_unknown_flag_is_named_with_the_nearest_one(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], expected: str
) -> None:
    error = _error(capsys, *argv)
    assert error.endswith(f": error: {expected}")


def test_a_mistyped_command_or_choice_is_named_with_the_nearest_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _error(capsys, "evalute").endswith("(did you mean evaluate?)")
    assert _error(capsys, *EVALUATE, "--policy", "core-case").endswith("(did you mean core-cases?)")


def test_a_command_of_another_tool_or_stage_says_what_does_its_job(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue #52: `scbench-ci compare` was `invalid choice`, with no pointer to --baseline."""
    error = _error(capsys, "compare", "a.json", "b.json")
    assert "invalid choice: 'compare'" in error
    assert error.endswith(
        ": a run is compared with an earlier one by `scbench-ci evaluate --baseline PATH` (or "
        "`merge --baseline PATH`), PATH an earlier results.json or the folder holding it"
    )
    assert _error(capsys, "report", "r.json").endswith(
        ": `scbench-ci summary RESULTS_JSON` renders a run's summary again"
    )


def test_a_value_that_starts_with_a_dash_is_a_value_not_a_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _error(capsys, *EVALUATE, "--jobs", "-1").endswith(
        "argument -j/--jobs: '-1' is not a whole number"
    )
    assert "unrecognized" not in _error(capsys, *EVALUATE, "--entrypoint", "-m app", "--jobs", "x")


def test_short_flags_are_the_long_ones(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    error = _error(capsys, *EVALUATE, "-j", "0", "-q", "-o", str(tmp_path))
    assert error.endswith("argument -j/--jobs: must be at least 1, got '0'")


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        ("4", "'4' is less than Docker's least memory limit, 6m (did you mean 4g?)"),
        ("5m", "'5m' is less than Docker's least memory limit, 6m"),
        ("lots", "not a size like 512m or 4g: 'lots'"),
    ],
)
def test_a_memory_limit_no_container_starts_in_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], memory: str, expected: str
) -> None:
    assert _error(capsys, *EVALUATE, "--memory", memory).endswith(f"argument --memory: {expected}")


def test_a_typo_s_text_reaches_the_terminal_inert(capsys: pytest.CaptureFixture[str]) -> None:
    error = _error(capsys, *EVALUATE, "--policy", "\x1b]52;c;aGk=\x07")
    assert "\x1b" not in error and "\x07" not in error
