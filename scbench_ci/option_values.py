"""Option values read from text: one parser per kind, for the CLI's flags and the action's inputs
alike. Each returns the value or raises a `BadValue` naming the option as its caller spells it
(`--jobs`, `input jobs`); the CLI's argument types wrap them (`cli/arguments.py`)."""

from __future__ import annotations

from scbench_ci.errors import UsageError

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class BadValue(UsageError):
    """`<option>: <reason>`; `reason` alone is what argparse shows after its own prefix."""

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(f"{option}: {reason}")
        self.reason = reason


def optional_text(option: str, value: str) -> str | None:
    """Empty: not given."""
    return value or None


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


def choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    """One of `choices`, as it is."""
    if value not in choices:
        raise BadValue(option, f"{value!r} is not one of {', '.join(choices)}")
    return value


def boolean(option: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise BadValue(option, f"{value!r} is not a boolean (use true or false)")
