"""How much the job summary shows of the failing tests and logs, level by level: render_summary
tries each of LEVELS in turn until the summary fits its size limit."""

from __future__ import annotations

from dataclasses import dataclass

LISTED_COMPACT = 5
"""How many causes of its failing tests a folded section lists (summary_context.FOCUSED_SECTIONS),
at a level that lists any."""


@dataclass(frozen=True)
class Level:
    """How much a summary shows of the failing tests and logs. LEVELS go from most to least."""

    listed_causes: int | None
    """How many causes of each checkpoint's failing tests are listed; None: all of them."""
    test_chars: int
    """The cap on the text shown under one cause (a traceback, a stderr, a message)."""
    tracebacks: bool
    log_lines: int
    log_chars: int
    """The cap on the end of a log shown with a failure kind."""
    left_out: str
    """What this level leaves out, for the note that says the summary was shortened."""
    listed: int
    """How many entries of each list are shown (the changes, the flaky tests, the tests a
    cause hit); each list says how many more it leaves out."""

    @property
    def compact_causes(self) -> int:
        """How many causes a folded section lists at this level."""
        return 0 if self.listed_causes == 0 else LISTED_COMPACT


LEVELS = (
    Level(None, 2000, True, 40, 6000, "", 100),
    Level(
        None,
        500,
        False,
        40,
        6000,
        "tracebacks are left out and messages cut to 500 characters",
        100,
    ),
    Level(
        10,
        500,
        False,
        40,
        6000,
        "only the first 10 causes of the failing tests of each checkpoint are listed, "
        "without tracebacks",
        20,
    ),
    Level(0, 0, False, 10, 1000, "failing tests are not listed and logs are cut to their end", 5),
)


@dataclass(frozen=True)
class Excerpt:
    """The end of a text, in whole lines, as a block of the summary shows it."""

    text: str
    cut_lines: int
    """How many lines before it were left out; 0 for none."""


def end_of(text: str, limit: int) -> Excerpt:
    """The last whole lines of the text within about `limit` characters (the last line cut to
    its end when it alone is longer)."""
    text = text.strip("\n")
    if len(text) <= limit:
        return Excerpt(text, 0)
    end = text[-limit:]
    newline = end.find("\n")
    end = end[newline + 1 :] if newline >= 0 else end
    return Excerpt(end, text[: len(text) - len(end)].count("\n") + (newline < 0))


def tail(log: str, level: Level) -> str:
    """The end of a log at a level: its last lines, within its characters, saying what was
    cut on its first line."""
    text = "\n".join(log.splitlines()[-level.log_lines :])
    if len(text) <= level.log_chars:
        return text
    end = end_of(text, level.log_chars).text
    return f"[{len(text) - len(end)} earlier characters cut] …\n{end}"
