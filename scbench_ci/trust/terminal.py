"""Text from tests, made inert on a terminal: the one helper for what scbench-ci shows there.

Whatever a test or the submission prints (the streamed output, failure messages, log tails,
file names in warnings) could otherwise clear the screen, move the cursor, rewind a line with a
carriage return, change the terminal's state with OSC, or reorder text with Unicode bidi
controls, and draw a fake verdict over the real one. Every character that is not printable
(C0 and C1 controls with ESC, CSI, OSC and BEL among them, DEL, Unicode format characters such
as bidi overrides, line and paragraph separators) is shown as its Python escape, `\\x1b`; a
newline, a tab, and a carriage return that ends a line (`\\r\\n`) are kept. Log files keep the
raw bytes: only what goes to a terminal is escaped. `inert` also keeps GitHub's runner from
reading a workflow command in the text.

This is the one escaper of what scbench-ci writes to a terminal (the CLI's reports, its errors
and warnings, `scbench-ci summary`'s markdown, the streamed output of the tests): what it returns
is `TerminalText`. Escaping its own output again leaves it as it is, so every write to a
terminal can go through it, whatever made the text.
"""

from __future__ import annotations

import re

_KEPT = "\n\t"


class TerminalText(str):
    """Text made inert for a terminal by this module; any other str is escaped."""

    __slots__ = ()


_COMMAND_AT_LINE_START = re.compile(r"^( *)::", re.MULTILINE)


def terminal_text(text: str, kept: str = _KEPT) -> TerminalText:
    """`text` with every character that is not printable, except those in `kept`, escaped."""
    text = text.replace("\r\n", "\n")
    if _printable(text, kept):
        return TerminalText(text)
    # Each distinct character is looked at once: a text of one escaped character repeated costs
    # no more than one with a few.
    shown = {c: c if c.isprintable() or c in kept else ascii(c)[1:-1] for c in set(text)}
    return TerminalText("".join(map(shown.__getitem__, text)))


def inert(text: str, *, one_line: bool = False) -> TerminalText:
    """Text that GitHub's runner reads as text and a terminal shows as it is, for what is printed
    outside `workflow.commands_stopped` (or by the CLI in a workflow step).

    The runner ends a line at a carriage return too, reads `::name::` after any white space at
    the start of a line and the older `##[name]` anywhere in one. So every character that is not
    printable but a newline (carriage returns, tabs, terminal escape sequences, Unicode spaces
    and line separators) becomes its Python escape, and a backslash goes before such a `::` and
    into every `##[`. `one_line`: the newlines too, for a message (an error, a warning, a
    refusal) that may quote a name or an input: it is one line, whatever it quotes.
    """
    shown = terminal_text(text, kept="" if one_line else "\n")
    return TerminalText(_COMMAND_AT_LINE_START.sub(r"\1\\::", shown.replace("##[", "##\\[")))


def quoted(text: str) -> str:
    """A name or a path put into a message: in quotes, each character that is not printable
    (a line break among them) as its Python escape."""
    return f"'{terminal_text(text, kept='')}'"


def shown_name(text: str) -> str:
    """A file's name in a message: as it is when it is printable, else `quoted`."""
    return text if text.isprintable() else quoted(text)


def _printable(text: str, kept: str) -> bool:
    for character in kept:
        text = text.replace(character, "")
    return text.isprintable()
