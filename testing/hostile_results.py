"""results.json documents in which every string field holds a hostile payload: the fields found by
walking the shipped schema (results.schema.json) over a real document, not listed by hand.

Names (problems, checkpoints, tests, and the history's keys made of them) are replaced
consistently wherever they occur, by the most hostile names the name rule (trust/names.py)
accepts; every other string by PAYLOAD. A field whose payload the strict reader refuses (a
date, a status it checks) keeps its value and is reported, with the refusal. The same walk
with BENIGN text gives the document to compare the rendering with: whatever a payload made live
shows up as an element the benign document does not have.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema

from scbench_ci.foundation.errors import UsageError
from scbench_ci.results.file import load_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.schema import SCHEMA_VERSION, schema
from scbench_ci.trust.names import NAME_PATTERN

MARK = "pwn"
"""In every payload's link, image, heading, tag and mention: what the checks look for."""
PAYLOAD = (
    "PWN-TEXT\n\n# PWN heading\n```\n# PWN after a fence\n~~~\n"
    "<details open><summary>PWN</summary>\n</code></summary></details></td></table>\n"
    "<img src=https://pwn.example/i.png> <a href=https://pwn.example>PWN</a> <pwn>\n"
    "[PWN](https://pwn.example) ![PWN](https://pwn.example/i.png) https://pwn.example/x "
    "www.pwn.example pwn@pwn.example @pwnuser @pwnorg/pwnteam\n"
    "| PWN-CELL |\n- PWN-LIST\n1. PWN-LIST\n> PWN quote\nPWN\n===\n"
    "**PWN** _PWN_ ~~PWN~~ `PWN` <!-- scbench-ci:0123456789abcdef -->\n"
    "::error title=PWN::PWN\n::set-output name=passed::true\n%0A::warning::PWN\n##[error]PWN\n"
    "\x1b]52;c;cHduZWQ=\x07\x1b]0;PWN\x07\x1b[2J\x1b[H\x1b[32mVerdict: PASSED\x1b[0m\r"
    "\x9b1m\u202ePWN\u2066\x08\x85\u2028end"
)
"""One string against GitHub's markdown, a terminal and the runner's workflow commands."""
HOSTILE_NAME = "`#<!--[PWN](pwn)![PWN](pwn.png)@pwnuser <b>PWN</b>|PWN-CELL|**PWN**~~_ "
"""The most hostile name the name rule accepts: printable, short, and every markdown special;
names share it as a prefix, as the matrix's legend shows (the `checkpoint_` of today)."""
REFUSED_NAMES = {
    "a line break": "name\n# PWN",
    "an escape sequence": "name\x1b]0;PWN\x07",
    "a bidi override": "name\u202ePWN",
    "a zero-width space": "na\u200bme",
    "nothing": "",
    "too many characters": "n" * 3000,
}
"""Names the rule refuses, each for one reason."""
BENIGN = "benign text"
BENIGN_NAME = "benign "
KEY = object()
"""In a Place's path: the place is the key of the mapping at the path before it."""

_SCHEMA = schema(SCHEMA_VERSION)
_NAME_REFS = {
    "#/$defs/problem_name": "problem",
    "#/$defs/checkpoint_name": "checkpoint",
    "#/$defs/test_id": "test",
}


@dataclass(frozen=True)
class Place:
    path: tuple[object, ...]
    field: str
    """The schema's path to it, without list indices: `problems[].checkpoints[].name`."""
    kind: str
    """problem, checkpoint, test, key (the history's names), text, or fixed (a pattern)."""


@dataclass
class Hostile:
    document: dict[str, Any]
    benign: dict[str, Any]
    text_fields: list[str]
    """The free text fields that hold PAYLOAD."""
    refused: dict[str, str] = field(default_factory=dict)
    """The fields the reader refuses PAYLOAD in (left as they were), with its refusal."""


def places(document: Any) -> Iterator[Place]:
    """Every string of the document that the schema lets be any string, with what it is."""
    yield from _walk(_SCHEMA, document, (), "")


def _walk(
    node: Mapping[str, Any], value: Any, path: tuple[object, ...], name: str
) -> Iterator[Place]:
    ref = node.get("$ref")
    if ref in _NAME_REFS and isinstance(value, str):
        yield Place(path, name, _NAME_REFS[ref])
        return
    node = _resolved(node)
    for combined in ("oneOf", "anyOf"):
        if combined in node:
            node = next(branch for branch in node[combined] if _valid(branch, value))
            node = _resolved(node)
    if "enum" in node or "const" in node:
        return
    if isinstance(value, str):
        yield Place(path, name, _string_kind(node))
    elif isinstance(value, dict):
        properties = node.get("properties", {})
        extra = node.get("additionalProperties")
        names = node.get("propertyNames")
        for key, item in value.items():
            if names is not None and "enum" not in _resolved(names):
                yield Place((*path, key, KEY), f"{name}.<key>", _string_kind(_resolved(names)))
            sub = properties.get(key, extra if isinstance(extra, dict) else {})
            yield from _walk(sub, item, (*path, key), f"{name}.{key if key in properties else '*'}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(node.get("items", {}), item, (*path, index), f"{name}[]")


def _string_kind(node: Mapping[str, Any]) -> str:
    pattern = node.get("pattern")
    if pattern == NAME_PATTERN:
        return "key"
    return "fixed" if pattern is not None or "format" in node else "text"


def _resolved(node: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in node:
        node = _SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _valid(node: Mapping[str, Any], value: Any) -> bool:
    return jsonschema.Draft202012Validator({"$defs": _SCHEMA["$defs"], **node}).is_valid(value)


def hostile(base: dict[str, Any], scratch: Path) -> Hostile:
    """PAYLOAD in every string field of `base` the strict reader takes it in, its names made
    hostile; and the same document made benign."""
    found = list(places(base))
    texts = sorted({place.field for place in found if place.kind == "text"})
    hostile_names = _prefixed(base, found, HOSTILE_NAME)
    problem = refusal(_replaced(base, found, hostile_names, PAYLOAD, set()), scratch)
    assert problem is None, f"the hostile names are refused: {problem}"
    refused = {}
    for text in texts:
        problem = refusal(_replaced(base, found, {}, PAYLOAD, {text}), scratch)
        if problem is not None:
            refused[text] = problem
    accepted = {text for text in texts if text not in refused}
    return Hostile(
        _replaced(base, found, hostile_names, PAYLOAD, accepted),
        _replaced(base, found, _prefixed(base, found, BENIGN_NAME), BENIGN, accepted),
        sorted(accepted),
        refused,
    )


def with_name(base: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    """`base` with every name of `kind` (problem, checkpoint, test) replaced by `name`, the
    second and later ones with a number after it (so that each stays unique)."""
    found = list(places(base))
    originals = dict.fromkeys(place_value(base, p) for p in found if p.kind == kind)
    mapping = {original: f"{name}{number or ''}" for number, original in enumerate(originals)}
    return _replaced(base, found, _composed(found, base, mapping), PAYLOAD, set())


def refusal(document: dict[str, Any], scratch: Path) -> str | None:
    """The strict reader's refusal of the document, or None when it reads it."""
    path = scratch / "results.json"
    path.write_text(json.dumps(document))
    try:
        load_results(path)
    except UsageError as error:
        return str(error)
    return None


def read(document: dict[str, Any], path: Path) -> RunResult:
    path.write_text(json.dumps(document))
    return load_results(path)


def place_value(document: Any, place: Place) -> str:
    if place.path and place.path[-1] is KEY:
        return str(place.path[-2])
    value = document
    for step in place.path:
        value = value[step]
    return str(value)


def _composed(found: list[Place], base: Any, mapping: dict[str, str]) -> dict[str, str]:
    """`mapping`, with the history's `problem/checkpoint` keys made of its names."""
    composed = dict(mapping)
    for place in found:
        if place.kind != "key":
            continue
        original = place_value(base, place)
        problem, _, checkpoint = original.rpartition("/")
        if problem in mapping or checkpoint in mapping:
            composed[original] = (
                f"{mapping.get(problem, problem)}/{mapping.get(checkpoint, checkpoint)}"
            )
    return composed


def _replaced(
    base: dict[str, Any], found: list[Place], mapping: dict[str, str], text: str, fields: set[str]
) -> dict[str, Any]:
    """`base` with each name in `mapping` replaced, and `text` in `fields`, numbered at the end
    of its first line: no two fields start alike, hostile or benign, so that the summary groups
    the failures of both the same way (by their first lines)."""
    document = copy.deepcopy(base)
    keys = []
    for number, place in enumerate(found):
        if place.path and place.path[-1] is KEY:
            keys.append(place)
            continue
        if place.kind in ("problem", "checkpoint", "test", "key"):
            replacement = mapping.get(place_value(base, place))
        elif place.kind == "text" and place.field in fields:
            first, newline, rest = text.partition("\n")
            replacement = f"{first} #{number}{newline}{rest}"
        else:
            replacement = None
        if replacement is not None:
            _set(document, place.path, replacement)
    for place in sorted(keys, key=lambda p: -len(p.path)):
        original = str(place.path[-2])
        if original in mapping:
            _rename(document, place.path[:-2], original, mapping[original])
    return document


def _prefixed(base: Any, found: list[Place], prefix: str) -> dict[str, str]:
    """Each problem, checkpoint and test name -> `prefix` before a problem's or checkpoint's
    name (so that they all share it), in brackets after a test's (`id[prefix]`)."""
    mapping: dict[str, str] = {}
    for place in found:
        original = place_value(base, place)
        if place.kind in ("problem", "checkpoint"):
            mapping[original] = f"{prefix}{original}"
        elif place.kind == "test":
            mapping[original] = f"{original}[{prefix}]"
    return _composed(found, base, mapping)


def _set(document: Any, path: tuple[object, ...], value: str) -> None:
    for step in path[:-1]:
        document = document[step]
    document[path[-1]] = value


def _rename(document: Any, path: tuple[object, ...], old: str, new: str) -> None:
    for step in path:
        document = document[step]
    items = list(document.items())
    document.clear()
    document.update((new if key == old else key, value) for key, value in items)


# What a rendering may not hold.


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.comments: list[str] = []
        self.cells: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [f"{tag}.{name}={value}" for name, value in attrs]
        if tag in ("td", "th"):
            self._cell = []
        if tag in ("code", "pre"):
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell).strip())
            self._cell = None
        if tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if not self._code:
            self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def elements(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser


_MENTION = re.compile(r"(?<![\w`])@pwn", re.IGNORECASE)


def live_in_html(html: str, benign_html: str) -> list[str]:
    """What the hostile rendering has live that the benign one does not: extra elements (links,
    images, headings, tags, code spans, cells), attributes naming MARK, a cell a payload made,
    a mention outside code, an HTML comment."""
    found, benign = elements(html), elements(benign_html)
    live = []
    if found.tags != benign.tags:
        extra = [tag for tag in found.tags if found.tags.count(tag) > benign.tags.count(tag)]
        live.append(f"elements differ from the benign rendering: {sorted(set(extra))}")
    live += [a for a in found.attributes if MARK in a.lower()]
    live += [f"a cell of its own: {cell!r}" for cell in found.cells if cell == "PWN-CELL"]
    live += [f"a mention: {text!r}" for text in found.text if _MENTION.search(text)]
    if len(found.comments) != len(benign.comments):
        live.append(f"HTML comments: {found.comments}")
    return live


def not_inert_on_a_terminal(text: str) -> list[str]:
    """The characters a terminal would act on: controls (but newline and tab), C1, bidi and other
    format characters, line separators."""
    return sorted(
        {
            ascii(c)
            for c in text
            if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")
        }
    )
