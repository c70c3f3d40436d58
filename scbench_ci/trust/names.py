"""What may name a problem, a checkpoint or a test, checked wherever scbench-ci reads one (a
problem's config.yaml, pytest's reports, a results.json, a shard, a baseline, an artifact).

A name is printable and bounded: at least one character, at most the bound of its kind, and no
character that is not printable (C0 and C1 controls, DEL, bidirectional and other Unicode format
characters, line and paragraph separators, unassigned code points): what `str.isprintable` says,
which the shipped schema's NAME_PATTERN says for JSON Schema. Such a name cannot move a
terminal's cursor, reorder a line, or break one; every output still escapes it as text.
"""

from __future__ import annotations

import hashlib

MAX_PROBLEM_NAME_CHARS = 255
"""A problem's name is its folder's: the longest file name Linux file systems take."""
MAX_CHECKPOINT_NAME_CHARS = 100
MAX_TEST_ID_CHARS = 2000
"""A pytest node id: its file, class, function and parameters."""
NAME_PATTERN = (
    "^[^\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e"
    "\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb]+$"
)
"""results.schema.json's pattern of a name (JSON Schema's regular expressions have no Unicode
categories): the controls, the bidirectional and zero-width format characters, the line and
paragraph separators. The reader checks the rest with `name_problem`."""


def name_problem(name: str, max_chars: int) -> str | None:
    """Why `name` cannot be a name of at most `max_chars` characters, or None when it can."""
    if not name:
        return "is empty"
    if len(name) > max_chars:
        return f"is {len(name):,} characters long, more than the {max_chars:,} a name may have"
    if not name.isprintable():
        bad = next(character for character in name if not character.isprintable())
        return (
            f"holds {ascii(bad)[1:-1]}, a character that is not printable (a control, "
            "bidirectional or format character, or a line separator)"
        )
    return None


def shown_test_id(node_id: str) -> str:
    """A pytest node id as scbench-ci keeps it: itself when it is a valid name; else with each
    character that is not printable as its Python escape and, past MAX_TEST_ID_CHARS, cut, with
    a digest of the whole id so that two cut ids stay apart."""
    if name_problem(node_id, MAX_TEST_ID_CHARS) is None:
        return node_id
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in node_id) or "(empty)"
    if len(shown) <= MAX_TEST_ID_CHARS:
        return shown
    digest = hashlib.sha256(node_id.encode(errors="surrogatepass")).hexdigest()[:16]
    return f"{shown[: MAX_TEST_ID_CHARS - len(digest) - 2]}…~{digest}"
