"""Typed access to config.yaml's fields, every error naming the file, the field and its line;
and how values are shown in those errors."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.problem.yaml_loader import ConfigError, YamlLines

MAX_SHOWN_CHARS = 200


class FieldReader:
    """Typed access to config.yaml's fields that names the file, the field and its line in
    every error.

    Without `errors` a bad field raises. With it, the error is kept there and reading goes on:
    each method returns its default, and a bad entry of a mapping or a list is left out.
    """

    def __init__(self, path: Path, lines: YamlLines, errors: list[ProblemError] | None) -> None:
        self.path = path
        self.lines = lines
        self.errors = errors
        self.rejected = 0
        """How many errors so far: a reader that goes on compares it to skip the errors that
        would only follow from an earlier one."""

    def reject(self, field_name: str, message: str, data: object, key: object) -> None:
        """Report field `field_name`, the value of `key` in `data` (a mapping or a list)."""
        # Field names hold the file's own keys: keep them on one line and short.
        error = ConfigError(self.path, shown_field(field_name), message, self.lines.of(data, key))
        self.rejected += 1
        if self.errors is None:
            raise error
        self.errors.append(error)

    def plain(self, field_name: str, value: str, data: object, key: object) -> bool:
        """Whether `value` is free of NUL characters (rejected otherwise)."""
        if "\0" in value:
            self.reject(field_name, f"must not hold a NUL character, got {shown(value)}", data, key)
            return False
        return True

    def string(
        self,
        data: dict[str, Any],
        key: str,
        *,
        prefix: str = "",
        required: bool = False,
        default: str = "",
    ) -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.reject(prefix + key, "is required", data, key)
            return default
        if not isinstance(value, str | int | float) or isinstance(value, bool) or value == "":
            self.reject(prefix + key, f"must be a non-empty string, got {shown(value)}", data, key)
            return default
        return str(value) if self.plain(prefix + key, str(value), data, key) else default

    def integer(self, data: dict[str, Any], key: str, *, prefix: str = "", default: int) -> int:
        value = data.get(key)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            self.reject(prefix + key, f"must be an integer, got {shown(value)}", data, key)
            return default
        return int(value)

    def positive_number(self, data: dict[str, Any], key: str, *, prefix: str = "") -> float | None:
        value = data.get(key)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            self.reject(
                prefix + key,
                f"must be a positive number of seconds, got {shown(value)}",
                data,
                key,
            )
            return None
        return float(value)

    def boolean(self, data: dict[str, Any], key: str, *, prefix: str = "", default: bool) -> bool:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.reject(prefix + key, f"must be true or false, got {shown(value)}", data, key)
            return default
        return value

    def mapping(self, data: dict[str, Any], key: str, *, prefix: str = "") -> dict[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.reject(prefix + key, f"must be a mapping, got {type(value).__name__}", data, key)
            return {}
        kept = {}
        for inner, item in value.items():
            if not isinstance(inner, str) or not inner:
                self.reject(
                    prefix + key,
                    f"keys must be non-empty strings, got {shown(inner)}",
                    value,
                    inner,
                )
            elif self.plain(f"{prefix}{key}.{inner}", inner, value, inner):
                kept[inner] = item
        if len(kept) == len(value):
            return value
        self.lines.share(kept, value)
        return kept

    def entry(self, data: dict[str, Any], key: str) -> Any:
        """The value of `key`, an empty mapping for none (placed where the key is)."""
        value = data[key]
        if value is not None:
            return value
        empty: dict[str, Any] = {}
        self.lines.record(empty, self.lines.of(data, key), {})
        return empty

    def string_map(self, data: dict[str, Any], key: str, *, prefix: str = "") -> dict[str, str]:
        result = {}
        values = self.mapping(data, key, prefix=prefix)
        for name, value in values.items():
            where = f"{prefix}{key}.{name}"
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.reject(where, f"must be a string, got {shown(value)}", values, name)
            elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                self.reject(where, "is not a valid environment variable name", values, name)
            elif self.plain(where, str(value), values, name):
                result[name] = str(value)
        return result

    def string_list(self, data: dict[str, Any], key: str) -> list[str]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.reject(key, f"must be a list of strings, got {type(value).__name__}", data, key)
            return []
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                self.reject(
                    f"{key}[{index}]",
                    f"must be a non-empty string, got {shown(item)}",
                    value,
                    index,
                )
            elif self.plain(f"{key}[{index}]", item, value, index):
                result.append(item.strip())
        return result


def shown(value: object) -> str:
    """A value as an error message shows it: its repr, cut short."""
    return _cut(repr(value))


def shown_field(name: str) -> str:
    """A field name as an error message shows it: one line (non-printables escaped), cut short."""
    return _cut(repr(name)[1:-1])


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 3] + "..."
