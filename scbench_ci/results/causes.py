"""Why a failing test failed, in one line: the exception behind it, found where pytest's message
hides it. A test that runs the submission and asserts on its exit status fails with
`assert 1 == 0`, and the submission's own error (`ModuleNotFoundError: ...`) is only inside the
`CompletedProcess(...)` repr of the message, in its `stderr='...'`; a test that compares the
submission's stderr shows it as a string literal. The cause is then the exception that ends
that traceback (or the stderr's last line), else the message's first line.

Messages are untrusted text: literals are read with `trust.literals` (strings only, never
code), and the caller escapes whatever it shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from scbench_ci.job.reports import CUT_NOTE_CHARS, MAX_TRACEBACK_CHARS
from scbench_ci.results.model import TestResult
from scbench_ci.trust.literals import literal_value

TRACEBACK = "Traceback (most recent call last):"
_OPENINGS = {quote: re.compile(f"b?{quote}") for quote in ("'", '"')}
_REST_OF_LITERAL = {quote: re.compile(rf"(?:[^{quote}\\\n]|\\.)*{quote}") for quote in ("'", '"')}
"""A literal's text after its opening quote, to its closing one (on the same line)."""
_STDERR_FIELD = re.compile(r"""\bstderr=(?=b?['"])""")
"""A CompletedProcess repr's stderr field, where its literal starts."""
LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What str.splitlines() splits at."""
MAX_SCANNED_CHARS = MAX_TRACEBACK_CHARS + CUT_NOTE_CHARS
"""Of a message or its details, at most this much is searched for literals: as much as either
holds (reports.py cuts them when they are written, and again when they are read)."""
MAX_CAUSE_CHARS = 300
FIRST_LINE_SCAN_CHARS = 16 * 1024
"""How far into a text its first line is looked for: its callers show a few hundred characters of
it, and a message of blank lines or one long line costs no more than an ordinary one."""


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
    """The first line of the text that is not blank, stripped, as far as it is within the
    text's first FIRST_LINE_SCAN_CHARS characters; '' for none."""
    # Not splitlines(): messages are long and only their start is wanted. Every line break
    # splitlines() knows is whitespace, so what lstrip() leaves starts a line that is not blank.
    rest = (text or "")[:FIRST_LINE_SCAN_CHARS].lstrip()
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
    # Most messages hold no stderr at all.
    if "stderr=" not in text:
        return None
    literals, after = _Literals(text), 0
    for field in _STDERR_FIELD.finditer(text):
        literal = literals.at(field.end()) if field.start() >= after else None
        if literal is None:
            continue
        after = field.end() + len(literal)
        stderr = _string(literal)
        if stderr and stderr.strip():
            line = exception_line(stderr) or _last_line(stderr)
            return Cause(_one_line(line), Source.STDERR, stderr)
    return None


def _in_literal(text: str) -> Cause | None:
    """The cause in a string literal of the message that holds a traceback."""
    if TRACEBACK not in text:
        return None
    for literal in _Literals(text):
        if TRACEBACK not in literal:
            continue
        output = _string(literal)
        line = exception_line(output) if output else None
        if line:
            return Cause(_one_line(line), Source.OUTPUT, output)
    return None


class _Literals:
    """The Python string literals in a text, as a regular expression that matches one (an
    optional `b`, a quote, anything but that quote, a backslash or a line break, or a backslash
    and any character but a line break, then the quote) finds them from left to right, in time
    linear in the text.

    The expression alone takes quadratic time: at each quote that no quote closes on its line
    it reads to the line's end, and a line of `'\\'\\'\\...` has a quote every other character.
    But once a quote of one kind is not closed, no later quote of that kind on that line is:
    each of them is escaped in the failed reading (else it would have closed it), so a reading
    from it continues in step with that one, to the same end. So each kind fails at most once
    a line, and the text between a literal's quotes is read once."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._unclosed_until = {"'": -1, '"': -1}
        """Where the line ends on which a literal of that quote was found unclosed."""

    def __iter__(self) -> Iterator[str]:
        position = 0
        upcoming: dict[str, int | None] = {"'": -1, '"': -1}
        """Where the next literal of each quote may start (-1: not looked for yet; None: none
        is left), looked for past where that quote is known unclosed."""
        while True:
            for quote, found in upcoming.items():
                since = max(position, self._unclosed_until[quote])
                if found is not None and found < since:
                    opening = _OPENINGS[quote].search(self._text, since)
                    upcoming[quote] = opening.start() if opening else None
            starts = [found for found in upcoming.values() if found is not None]
            if not starts:
                return
            start = min(starts)
            literal = self.at(start)
            position = start + len(literal) if literal else start + 1
            if literal:
                yield literal

    def at(self, start: int) -> str | None:
        """The literal that starts at `start` (at its `b` or its quote), if one does."""
        quote_at = start + 1 if self._text.startswith("b", start) else start
        quote = self._text[quote_at : quote_at + 1]
        if quote not in self._unclosed_until or quote_at < self._unclosed_until[quote]:
            return None
        rest = _REST_OF_LITERAL[quote].match(self._text, quote_at + 1)
        if rest is None:
            line_end = self._text.find("\n", quote_at)
            self._unclosed_until[quote] = len(self._text) if line_end < 0 else line_end
            return None
        return self._text[start : rest.end()]


def _string(literal: str) -> str | None:
    """The value of a Python str or bytes literal; None for anything else."""
    value = literal_value(literal)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def _one_line(line: str) -> str:
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 1] + "…"
