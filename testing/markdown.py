"""Markdown as GitHub reads it, for the docs' tests: headings and their anchors, links, sections,
and the entries of a reference page's lists."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from testing.paths import REPO_ROOT

DOCS = (REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")))
"""The README and the docs/ pages (docs/examples/ holds code, not pages)."""

_FENCE = re.compile(r"^( *)(```|~~~).*?^\1\2 *$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6}) +(.+?) *#* *$", re.MULTILINE)
# [text](target): text may hold one level of brackets and span lines; the target has no spaces.
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)\)")
_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# GitHub keeps letters, marks, numbers, connector punctuation, spaces and hyphens.
_NOT_IN_SLUG = re.compile(r"[^\w\- ]")
_ENTRY_HEAD = re.compile(r"^- ((?:`[^`]+`(?:,? | / ))*`[^`]+`)")


@dataclass(frozen=True)
class Link:
    source: Path
    line: int
    target: str


def prose(text: str) -> str:
    """The text without fenced blocks and code spans (their newlines kept, so lines still count):
    what is in code is neither a heading nor a link."""

    def blank(found: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", found.group(0))

    return _CODE_SPAN.sub(blank, _FENCE.sub(blank, text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text (before numbering duplicates): its rendered text
    (link targets, code ticks and emphasis marks dropped), lower-cased, every character but
    letters, digits, `_`, `-` and spaces dropped, spaces made hyphens."""
    text = _INLINE_LINK.sub(r"\1", heading).replace("`", "").replace("*", "")
    return _NOT_IN_SLUG.sub("", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor, a repeated one numbered `-1`, `-2`, ... as GitHub numbers them."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in _HEADING.finditer(_FENCE.sub("", text)):
        base = slug(heading.group(2))
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return found


def links(path: Path) -> list[Link]:
    text = prose(path.read_text())
    return [
        Link(path, text.count("\n", 0, found.start()) + 1, found.group(2))
        for found in _LINK.finditer(text)
    ]


def section(text: str, heading: str) -> str:
    """The text under `heading` (a whole heading line, `## Inputs`), up to the next heading of the
    same or a higher level."""
    level = heading.split(" ", 1)[0]
    found = re.search(rf"^{re.escape(heading)}\n", text, re.MULTILINE)
    if found is None:
        raise ValueError(f"no heading {heading!r}")
    start = found.end()
    end = re.search(rf"^#{{1,{len(level)}}} ", text[start:], re.MULTILINE)
    return text[start : start + end.start()] if end else text[start:]


def entries(text: str) -> list[str]:
    """The top-level list items of `text`, each with its continuation lines joined by spaces."""
    items: list[str] = []
    continued = False
    for line in text.splitlines():
        if line.startswith("- "):
            items.append(line)
            continued = True
        elif continued and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
        else:
            continued = False
    return items


def entry_names(item: str) -> list[str]:
    """The names an entry documents: the code spans it opens with (`- `-j`, `--jobs N|auto`
    (...): ...` documents `-j` and `--jobs`), each up to its first space."""
    head = _ENTRY_HEAD.match(item)
    if head is None:
        return []
    return [span.split(" ", 1)[0] for span in re.findall(r"`([^`]+)`", head.group(1))]
