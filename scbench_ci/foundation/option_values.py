"""Options, declared once, and their values read from text: one parser per kind, for the CLI's
flags, the action's inputs and the API's keywords alike. Each parser returns the value or raises a
`BadValue` naming the option as its caller spells it (`--jobs`, `input jobs`, `jobs`); the CLI's
argument types wrap them (`cli/arguments.py`)."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scbench_ci.foundation.errors import UsageError

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class BadValue(UsageError):
    """`<option>: <reason>`; `reason` alone is what argparse shows after its own prefix."""

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(f"{option}: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Option:
    """One option, declared once: the CLI's flag, the action's input and its default, the Python
    API's keyword and the parser of its text all come from here, so the front ends cannot drift
    apart and a bad value has one reason wherever it is given. Where a command needs another
    default or help, it uses `dataclasses.replace` of the declaration."""

    name: str
    """The Python API's keyword, and the name the CLI's parsed arguments hold it under."""
    default: Any
    """The value when it is not given, in every front end; None with `required`: none."""
    parse: Callable[[str, str], Any]
    """(the option as the caller spells it, text) -> the value; a BadValue when it is not one."""
    help: str
    """The flag's help (argparse's `%(default)s` is the default)."""
    flag: str | None = None
    """The CLI's flag; a boolean's is a switch that turns it from its default (`--no-cache`),
    or, with default None, a pair of switches (`--x`, `--no-x`)."""
    short: str | None = None
    """The flag's one-letter form (`-j`)."""
    input: str | None = None
    """The action's input."""
    keyword: bool = True
    """Whether the Python API takes it as a keyword named `name`."""
    absent: str = ""
    """Why it has no flag, no input or no keyword (a test holds every declaration to that)."""
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    """The values it takes, when they are a list of names (shown in the flag's help)."""
    input_default: str | None = None
    """The input's default as action.yml declares it, when it is not the default as text: `""`
    where the command decides (an empty input means its default)."""
    required: bool = False
    """The CLI refuses to run without it."""
    repeated: bool = False
    """The flag may be given again; each value is parsed and kept in order."""
    off_help: str = ""
    """The help of `--no-<flag>`, for a boolean whose default is None."""
    field: str | None = None
    """The field of the commands' options types it sets, where that is not `name`
    (`EvaluationOptions.test_timeout_s` for `test_timeout`); see `options.fields_of`."""
    group: str = ""
    """The heading the CLI's help lists its flag under (empty: the command's own list)."""

    @property
    def field_name(self) -> str:
        return self.field or self.name

    @property
    def is_switch(self) -> bool:
        return self.parse is boolean

    @property
    def input_text(self) -> str:
        """The input's default, as action.yml declares it."""
        return as_text(self.default) if self.input_default is None else self.input_default


def as_text(value: object) -> str:
    """A value as a flag or an input gives it: `` for none, `true`, `2` for 2.0, words for a
    tuple."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return " ".join(as_text(one) for one in value)
    return str(value)


def did_you_mean(given: str, candidates: Sequence[str]) -> str:
    """` (did you mean X?)` for the nearest of `candidates`, or nothing."""
    close = difflib.get_close_matches(given, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def optional_text(option: str, value: str) -> str | None:
    """Empty: not given."""
    return value or None


def path(option: str, value: str) -> Path:
    return Path(value)


def words(option: str, value: str) -> tuple[str, ...]:
    """Separated by spaces or lines."""
    return tuple(value.split())


def shell_words(option: str, value: str) -> tuple[str, ...]:
    """Split as a shell would (`-k 'a and b' -x`)."""
    try:
        return tuple(shlex.split(value))
    except ValueError as error:
        raise BadValue(option, str(error)) from None


def whole_number(option: str, value: str, least: int = 0, most: int | None = None) -> int:
    """Digits only: no sign, no spaces."""
    if not (value.isascii() and value.isdigit()):
        raise BadValue(option, f"{value!r} is not a whole number")
    if int(value) < least:
        raise BadValue(option, f"must be at least {least}, got {value!r}")
    if most is not None and int(value) > most:
        raise BadValue(option, f"must be at most {most}, got {value!r}")
    return int(value)


def positive_number(option: str, value: str, what: str = "a number", unit: str = "") -> float:
    """`what` names the kind of number, `unit` follows the 0 it must be more than."""
    try:
        number = float(value)
    except ValueError:
        raise BadValue(option, f"{value!r} is not {what}") from None
    if not number > 0:  # NaN too
        raise BadValue(option, f"must be more than 0{unit}, got {value!r}")
    return number


def seconds(option: str, value: str) -> float:
    return positive_number(option, value, "a number of seconds", " seconds")


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(option: str, value: str) -> float:
    """A time like `90s`, `30m`, `12h` or `7d` (a bare number is seconds), 0 or more: seconds."""
    number, unit = (value[:-1], value[-1]) if value[-1:] in _DURATION_UNITS else (value, "s")
    try:
        seconds = float(number) * _DURATION_UNITS[unit]
    except ValueError:
        raise BadValue(option, f"{value!r} is not a time like 30m, 12h or 7d") from None
    if not 0 <= seconds < float("inf"):  # NaN too
        raise BadValue(option, f"must be 0 or more, got {value!r}")
    return seconds


def choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    """One of `choices`, as it is; the nearest one named when it is not."""
    if value not in choices:
        hint = did_you_mean(value, choices)
        raise BadValue(option, f"{value!r} is not one of {', '.join(choices)}{hint}")
    return value


def boolean(option: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise BadValue(option, f"{value!r} is not a boolean (use true or false)")
