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


class UsageError(ScbenchError):
    """Bad command-line input or bad flag values."""


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
