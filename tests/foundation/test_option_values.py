"""The option parsers both front ends use: what each takes, and the one line it refuses with."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

# A Docker size is read where the Docker settings are; its parser is one of the same kind.
from scbench_ci.executors.docker.settings import size
from scbench_ci.foundation.option_values import (
    BadValue,
    as_text,
    boolean,
    choice,
    duration,
    optional_text,
    positive_number,
    seconds,
    shell_words,
    whole_number,
    words,
)


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (whole_number, "0", 0),
        (whole_number, "12", 12),
        (positive_number, "0.5", 0.5),
        (seconds, "1e3", 1000.0),
        (boolean, "Yes", True),
        (boolean, "off", False),
        (size, "512m", "512m"),
        (optional_text, "", None),
        (optional_text, "python:3.12", "python:3.12"),
        (partial(choice, choices=("a", "b")), "b", "b"),
        (duration, "0", 0.0),
        (duration, "90s", 90.0),
        (duration, "30m", 1800.0),
        (duration, "1.5h", 5400.0),
        (duration, "7d", 604800.0),
    ],
)
def test_what_each_takes(parse: Callable[[str, str], Any], text: str, value: object) -> None:
    assert parse("input x", text) == value


@pytest.mark.parametrize(
    ("parse", "text", "reason"),
    [
        (whole_number, "-1", "'-1' is not a whole number"),
        (whole_number, "+3", "'+3' is not a whole number"),
        (whole_number, "²", "'²' is not a whole number"),
        (partial(whole_number, least=1), "0", "must be at least 1, got '0'"),
        (positive_number, "two", "'two' is not a number"),
        (positive_number, "nan", "must be more than 0, got 'nan'"),
        (seconds, "soon", "'soon' is not a number of seconds"),
        (seconds, "-3", "must be more than 0 seconds, got '-3'"),
        (boolean, "maybe", "'maybe' is not a boolean (use true or false)"),
        (size, "lots", "not a size like 512m or 4g: 'lots'"),
        (size, "0", "not a size like 512m or 4g: '0'"),
        (partial(choice, choices=("a", "b")), "c", "'c' is not one of a, b"),
        (duration, "soon", "'soon' is not a time like 30m, 12h or 7d"),
        (duration, "", "'' is not a time like 30m, 12h or 7d"),
        (duration, "-1h", "must be 0 or more, got '-1h'"),
        (duration, "nand", "must be 0 or more, got 'nand'"),
        (duration, "infd", "must be 0 or more, got 'infd'"),
    ],
)
def test_what_each_refuses_names_the_option_as_its_caller_spells_it(
    parse: Callable[[str, str], Any], text: str, reason: str
) -> None:
    for option in ("--x", "input x"):
        with pytest.raises(BadValue) as error:
            parse(option, text)
        assert (str(error.value), error.value.reason) == (f"{option}: {reason}", reason)


def test_a_choice_names_the_nearest_one() -> None:
    with pytest.raises(BadValue) as error:
        choice("input pass_policy", "core-case", ("core-cases", "all-cases"))
    assert error.value.reason == (
        "'core-case' is not one of core-cases, all-cases (did you mean core-cases?)"
    )


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (words, "a/c1  b/c2\nc/c3", ("a/c1", "b/c2", "c/c3")),
        (shell_words, "-k 'a and b' -x", ("-k", "a and b", "-x")),
    ],
)
def test_words(parse: Callable[[str, str], Any], text: str, value: object) -> None:
    assert parse("x", text) == value


def test_unbalanced_quotes_are_refused() -> None:
    with pytest.raises(BadValue, match=r"^input pytest_args: No closing quotation$"):
        shell_words("input pytest_args", "-k 'open")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (2.0, "2"),
        (1800.0, "1800"),
        (64, "64"),
        ((), ""),
        (("a", "b"), "a b"),
    ],
)
def test_a_default_as_an_input_gives_it(value: object, text: str) -> None:
    assert as_text(value) == text
