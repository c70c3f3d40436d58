"""JSON that nobody vouches for: read and parsed within caps, or one `JsonError` saying where.

The caps are checked before the bytes are parsed where they can be (the size, a bound on how many
objects and lists the text can make), and on the parsed value otherwise (depth, lengths, numbers),
so no input makes the parser run out of memory or stack, and no value reaches its reader that a
later `float()`, `timedelta()` or `.encode()` would raise on.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JsonLimits:
    max_bytes: int = 128 * 1024**2
    max_containers: int = 2_000_000
    """Objects and lists: each costs far more memory than the bytes that write it."""
    max_depth: int = 32
    max_string_chars: int = 1024**2
    max_items: int = 200_000
    """Of one list, or keys of one object."""
    max_integer: int = 2**53
    max_float: float = 1e15


DEFAULT_LIMITS = JsonLimits()


class JsonError(Exception):
    """The bytes are not JSON within the limits; `where` is the JSON path of the bad value."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.where = where
        self.what = what


def parse(data: bytes, limits: JsonLimits = DEFAULT_LIMITS) -> Any:
    """The JSON value the bytes hold; a JsonError for anything past `limits`."""
    if len(data) > limits.max_bytes:
        raise JsonError("", f"larger than the {limits.max_bytes} bytes allowed")
    if data.count(b"[") + data.count(b"{") > limits.max_containers:
        raise JsonError("", f"more than {limits.max_containers} objects and lists")
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=_without_duplicates)
    except UnicodeDecodeError:
        raise JsonError("", "not UTF-8 text") from None
    except RecursionError:
        raise JsonError("", "not JSON: nested too deeply") from None
    except ValueError as error:  # also integers of more than 4,300 digits
        raise JsonError("", f"not JSON: {_first_line(str(error))}") from None
    check_limits(value, limits)
    return value


def _without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise ValueError(f"the key {_shown(key)} is given twice in one object")
        value[key] = item
    return value


def check_limits(value: Any, limits: JsonLimits = DEFAULT_LIMITS) -> None:
    """Without recursion: the first value past a limit, by its path."""
    for item, place, depth in _walk(value):
        if depth > limits.max_depth:
            raise JsonError(_where(place), f"nested more than {limits.max_depth} deep")
        if isinstance(item, dict | list) and len(item) > limits.max_items:
            raise JsonError(
                _where(place), f"{len(item)} items, more than the {limits.max_items} allowed"
            )
        if isinstance(item, dict):
            for key in item:
                _check_string(key, place, limits)
        elif isinstance(item, str):
            _check_string(item, place, limits)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and abs(item) > limits.max_integer:
            raise JsonError(_where(place), f"the integer is larger than {limits.max_integer}")
        elif isinstance(item, float) and not (
            math.isfinite(item) and abs(item) <= limits.max_float
        ):
            raise JsonError(
                _where(place), f"{item} is not a finite number up to {limits.max_float:g}"
            )


_Place = tuple[Any, str | int] | None
"""Where a value is: None for the whole document, else (where its container is, its key or
index). Its path is written only for an error: written for every value, it made each value cost
as much as the length of its path (32 levels of escaped keys)."""


def _walk(value: Any) -> Iterator[tuple[Any, _Place, int]]:
    stack: list[tuple[Any, _Place, int]] = [(value, None, 0)]
    while stack:
        item, place, depth = stack.pop()
        yield item, place, depth
        if isinstance(item, dict):
            stack.extend((child, (place, key), depth + 1) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (place, index), depth + 1) for index, child in enumerate(item))


def _where(place: _Place) -> str:
    parts: list[str | int] = []
    while place is not None:
        place, part = place
        parts.append(part)
    return path_of(reversed(parts))


def _check_string(text: str, place: _Place, limits: JsonLimits) -> None:
    if len(text) > limits.max_string_chars:
        raise JsonError(
            _where(place),
            f"a string of {len(text)} characters, more than {limits.max_string_chars}",
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise JsonError(
                _where(place), "a string with a lone surrogate (not Unicode text)"
            ) from None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def path_of(parts: Iterable[str | int]) -> str:
    """The JSON path of a value from its keys and indices: `problems[0].name`, keys escaped."""
    where = ""
    for part in parts:
        where = f"{where}[{part}]" if isinstance(part, int) else join(where, part)
    return where


def join(where: str, key: str) -> str:
    """`where.key`, or `where["key"]` (escaped and capped) for a key that is no plain name."""
    if _NAME.fullmatch(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{_shown(key)}]"


def _shown(text: str) -> str:
    return json.dumps(text if len(text) <= 40 else text[:40] + "…")


def _first_line(text: str) -> str:
    line = text.splitlines()[0] if text else "unreadable"
    return line if len(line) <= 200 else line[:199] + "…"
