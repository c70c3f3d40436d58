"""Errors the user can act on. Each is reported as one line, never a traceback."""

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    PASSED = 0
    FAILED = 1
    USAGE = 2
    INFRASTRUCTURE = 3


class ScbenchError(Exception):
    """Base class: carries the one-line message and the exit code it maps to."""

    exit_code = ExitCode.USAGE

    def lines(self) -> tuple[str, ...]:
        """The message as it is shown, each of these one line: a line break in one (which only
        an input it quotes can bring) is shown as its escape."""
        return (str(self),)


class UsageError(ScbenchError):
    """Bad command-line input or bad flag values."""


class UsageErrors(UsageError):
    """Several errors found together, each on a line of its own."""

    def __init__(self, heading: str, items: list[str]) -> None:
        super().__init__("\n".join([heading, *items]))
        self.heading = heading
        self.items = items

    def lines(self) -> tuple[str, ...]:
        return (self.heading, *self.items)


class ProblemError(ScbenchError):
    """A problem folder or its config.yaml is not usable."""

    def __init__(self, path: Path, field: str | None, message: str) -> None:
        where = f"{path}: {field}" if field else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.field = field


class InfrastructureError(ScbenchError):
    """The machinery around the tests failed (not the submission)."""

    exit_code = ExitCode.INFRASTRUCTURE
