"""Why a failing test failed, in one line: the exception behind it, found where pytest's message
hides it. A test that runs the submission and asserts on its exit status fails with
`assert 1 == 0`, and the submission's own error (`ModuleNotFoundError: ...`) is only inside the
`CompletedProcess(...)` repr of the message, in its `stderr='...'`; a test that compares the
submission's stderr shows it as a string literal. The cause is then the exception that ends
that traceback (or the stderr's last line), else the message's first line.

Messages are untrusted text: literals are read with `ast.literal_eval` (strings only, never
code), and the caller escapes whatever it shows.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from enum import Enum

from scbench_ci.results.model import TestResult

TRACEBACK = "Traceback (most recent call last):"
STRING_LITERAL = r"""b?(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
STDERR_LITERAL = re.compile(rf"\bstderr=({STRING_LITERAL})")
"""A CompletedProcess repr's stderr field."""
ANY_LITERAL = re.compile(STRING_LITERAL)
LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What str.splitlines() splits at."""
MAX_SCANNED_CHARS = 200_000
"""Of a message, at most this much is searched for literals (messages are capped below it)."""
MAX_CAUSE_CHARS = 300


class Source(Enum):
    STDERR = "the submission's stderr"
    """The stderr of a command the test ran (a CompletedProcess in its message)."""
    OUTPUT = "a traceback in the output the test compared"
    MESSAGE = "the test's message"


@dataclass(frozen=True)
class Cause:
    text: str
    """One line: `ModuleNotFoundError: No module named 'x'`, or the message's first line."""
    source: Source
    output: str | None
    """The stderr or output it was found in, whole; None when it is the message."""


def cause_of(test: TestResult) -> Cause:
    """The cause of a failing test's failure (see the module's doc)."""
    message = test.message or ""
    for text in (message, test.traceback or ""):
        found = _in_stderr(text[:MAX_SCANNED_CHARS]) or _in_literal(text[:MAX_SCANNED_CHARS])
        if found is not None:
            return found
    return Cause(_one_line(first_line(message) or "(no message)"), Source.MESSAGE, None)


def first_line(text: str | None) -> str:
    """The first line of the text that is not blank, stripped; '' for none."""
    # Not splitlines(): messages are long and only their start is wanted. Every line break
    # splitlines() knows is whitespace, so what lstrip() leaves starts a line that is not blank.
    rest = (text or "").lstrip()
    end = LINE_BREAK.search(rest)
    return (rest[: end.start()] if end else rest).rstrip()


def exception_line(text: str) -> str | None:
    """The line that ends the last traceback of the text: the exception and its message."""
    start = text.rfind(TRACEBACK)
    if start < 0:
        return None
    lines = text[start + len(TRACEBACK) :].splitlines()
    return next((line.strip() for line in lines if line.strip() and not line[0].isspace()), None)


def _in_stderr(text: str) -> Cause | None:
    """The cause in a non-empty stderr of a CompletedProcess repr."""
    # The pattern scans at every position; most messages hold no stderr at all.
    if "stderr=" not in text:
        return None
    for found in STDERR_LITERAL.finditer(text):
        stderr = _string(found.group(1))
        if stderr and stderr.strip():
            line = exception_line(stderr) or _last_line(stderr)
            return Cause(_one_line(line), Source.STDERR, stderr)
    return None


def _in_literal(text: str) -> Cause | None:
    """The cause in a string literal of the message that holds a traceback."""
    if TRACEBACK not in text:
        return None
    for found in ANY_LITERAL.finditer(text):
        if TRACEBACK not in found.group(0):
            continue
        output = _string(found.group(0))
        line = exception_line(output) if output else None
        if line:
            return Cause(_one_line(line), Source.OUTPUT, output)
    return None


def _string(literal: str) -> str | None:
    """The value of a Python str or bytes literal; None for anything else."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def _one_line(line: str) -> str:
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 1] + "…"
