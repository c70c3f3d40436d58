"""argparse as a person expects it: a flag is spelled out (no prefix matching), a typo is named
with the nearest flag, command or choice ("did you mean"), a flag of pytest's is sent after `--`,
and an error is its message after one line of usage, not the whole usage."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NoReturn

from scbench_ci.foundation.option_values import did_you_mean
from scbench_ci.trust.terminal import inert

# Flags a pytest user types by habit; scbench-ci has none of them (its own `-q` is `--quiet`,
# and `evaluate`'s `-v` is `--verbose`).
PYTEST_FLAGS = frozenset(
    {"-k", "-x", "-m", "-s", "-v", "-vv", "-l", "-p", "-r", "--lf", "--ff", "--pdb", "--tb",
     "--maxfail", "--exitfirst", "--last-failed", "--failed-first", "--capture", "--durations",
     "--co", "--collect-only", "--deselect", "--ignore", "--sw", "--stepwise"}
)  # fmt: skip
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>.*?)' \(choose from (?P<choices>.*)\)")


class ForgivingParser(argparse.ArgumentParser):
    def __init__(
        self, *args: object, instead: Mapping[str, str] | None = None, **kwargs: object
    ) -> None:
        """`instead`: choices a person may try that are none, and what does their job (a
        command's name that another command's flag does, say)."""
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.instead = dict(instead or {})

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found and found["given"] in self.instead:
            message = f"{message}: {self.instead[found['given']]}"
        elif found:
            choices = re.findall(r"'(.*?)'", found["choices"])
            message = f"{message}{did_you_mean(found['given'], choices)}"
        self.exit(
            2, f"{_short_usage(self.prog)}\n{self.prog}: error: {inert(message, one_line=True)}\n"
        )

    def refuse_unknown_flags(self, arguments: Sequence[str]) -> None:
        """Names the first flag this parser does not have, with the nearest one it has or a
        hint that pytest's flags follow `--`: before parsing, so that a misspelt required flag
        is named rather than reported missing."""
        known = self._option_string_actions
        takes_value = False
        for argument in arguments:
            if takes_value:
                takes_value = False
                continue
            if not argument.startswith("-") or argument == "-" or _number(argument):
                continue
            flag, has_value = argument.split("=", 1)[0], "=" in argument
            action = known.get(flag)
            if action is not None:
                takes_value = action.nargs != 0 and not has_value
                continue
            self.error(_unknown_flag(flag, known, self.prog))


def _unknown_flag(flag: str, known: Iterable[str], prog: str) -> str:
    if flag in PYTEST_FLAGS:
        return (
            f"unrecognized argument {flag}: pytest's arguments go after `--` "
            f"({prog} ... -- {flag} ...)"
        )
    long_flags = [name for name in known if name.startswith("--")]
    return f"unrecognized argument {flag}{did_you_mean(flag, long_flags)}"


def _number(argument: str) -> bool:
    try:
        float(argument)
    except ValueError:
        return False
    return True


def _short_usage(prog: str) -> str:
    """One line where argparse prints every flag: the error, last, is what the eye lands on."""
    return f"usage: {prog} [options] (every option: {prog} --help)"
