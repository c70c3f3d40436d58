"""A hardened YAML loader for the small files a problem brings (config.yaml, an environment's
file): safe tags only, capped in bytes, in depth and in size once aliases are expanded, with the
line of every key and item it loaded."""

from __future__ import annotations

import stat
from collections.abc import Generator
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from scbench_ci.foundation.errors import ProblemError

MAX_CONFIG_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 32
MAX_YAML_VALUES = 10_000
"""Counted with aliases expanded: what any walk over the loaded data would visit."""


class ConfigError(ProblemError):
    """A bad config.yaml (or another YAML file read here), with the line (from 1) of the
    offending key where there is one."""

    def __init__(self, path: Path, field: str | None, message: str, line: int | None) -> None:
        super().__init__(path, field, message)
        self.line = line


class YamlLines:
    """The line (from 1) of each key of a loaded YAML document's mappings and of each item of
    its lists, looked up by the loaded container and the key or index."""

    def __init__(self) -> None:
        # id() -> (the container, kept so that its id is not reused; its start; its keys' lines)
        self._lines: dict[int, tuple[object, int | None, dict[Any, int]]] = {}

    def record(self, container: object, start: int | None, lines: dict[Any, int]) -> None:
        self._lines[id(container)] = (container, start, lines)

    def share(self, part: object, container: object) -> None:
        """Place `part`, a copy of some of a loaded `container`, where `container` is."""
        entry = self._lines.get(id(container))
        if entry is not None:
            _, start, lines = entry
            self._lines[id(part)] = (part, start, lines)

    def of(self, container: object, key: object) -> int | None:
        """The line of `key` in `container`; for a key it does not hold, the container's own."""
        entry = self._lines.get(id(container))
        if entry is None:
            return None
        _, start, lines = entry
        return lines.get(key, start)


def read_yaml(path: Path) -> Any:
    """Safely load a small YAML file: at most MAX_CONFIG_BYTES, UTF-8, no Python tags, and
    bounded in depth and in size once its aliases are expanded (no "billion laughs")."""
    return read_yaml_lines(path)[0]


def read_yaml_lines(path: Path) -> tuple[Any, YamlLines]:
    """`read_yaml`, and the line of each key and item it loaded."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ProblemError(path, None, f"cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ProblemError(path, None, "is not a regular file")
    with path.open("rb") as stream:
        data = stream.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ProblemError(path, None, f"larger than {MAX_CONFIG_BYTES} bytes; refusing to parse")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProblemError(path, None, f"not UTF-8 text (byte {error.start})") from None
    try:
        loader = _GuardedLoader(text)
        try:
            return loader.get_single_data(), loader.lines
        finally:
            loader.dispose()
    except ReaderError as error:
        # Raised on the whole text before parsing: it knows only the character's index.
        line = text.count("\n", 0, error.position) + 1
        column = error.position - text.rfind("\n", 0, error.position)
        raise ConfigError(
            path,
            None,
            f"invalid YAML at line {line}, column {column}: "
            f"character U+{error.character:04X} is not allowed",
            line,
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        verdict = "refused" if isinstance(error, _RefusedYaml) else "invalid"
        raise ConfigError(
            path, None, f"{verdict} YAML{where}: {problem}", mark.line + 1 if mark else None
        ) from None


class _RefusedYaml(ComposerError):
    """Well-formed YAML that is too deep or too large to be a config file."""


class _GuardedLoader(yaml.SafeLoader):
    """SafeLoader with limits checked while composing, before any Python object is built.

    Aliases make a small document stand for a huge one: each node's size and depth are counted
    as if its aliases were copies, which is what a walk over the loaded data (a repr in an error
    message, a validation) would see.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._composed = 0
        self._extent: dict[int, tuple[int, int]] = {}
        """id(node) -> (values, levels) of a fully composed node, aliases expanded."""
        self.lines = YamlLines()

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        is_alias = self.check_event(yaml.AliasEvent)
        mark = self.current_event.start_mark
        # A cheap lower bound of the expanded size, checked as it grows: a long flat list
        # would otherwise be composed in full before its size is known.
        self._composed += 1
        if self._composed > MAX_YAML_VALUES:
            raise _RefusedYaml(problem=f"more than {MAX_YAML_VALUES} values", problem_mark=mark)
        if is_alias:
            alias = super().compose_node(parent, index)
            if id(alias) not in self._extent:
                raise _RefusedYaml(
                    problem="an alias refers to a node it is part of", problem_mark=mark
                )
            return alias
        # Composing recurses once per level: stop before Python's recursion limit does.
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _RefusedYaml(
                problem=f"nested deeper than {MAX_YAML_DEPTH} levels", problem_mark=mark
            )
        node = super().compose_node(parent, index)
        self._depth -= 1
        if node is None:
            return None
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        extents = [self._extent[id(child)] for child in children]
        values = 1 + sum(count for count, _ in extents)
        levels = 1 + max((depth for _, depth in extents), default=0)
        if values > MAX_YAML_VALUES:
            raise _RefusedYaml(
                problem=f"more than {MAX_YAML_VALUES} values once its aliases are expanded",
                problem_mark=mark,
            )
        if levels > MAX_YAML_DEPTH:
            raise _RefusedYaml(
                problem=f"nested deeper than {MAX_YAML_DEPTH} levels once its aliases are expanded",
                problem_mark=mark,
            )
        self._extent[id(node)] = (values, levels)
        return node

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except ValueError as error:
            # Scalars Python refuses: an integer past its digit limit, a date like 2024-13-01.
            raise ConstructorError(problem=str(error), problem_mark=node.start_mark) from None

    # SafeLoader's own map and list constructors, recording where each key and item is.
    def construct_yaml_map(self, node: yaml.MappingNode) -> Generator[dict[Any, Any], None, None]:
        data: dict[Any, Any] = {}
        yield data
        data.update(self.construct_mapping(node))
        # construct_mapping has merged any `<<` keys into node.value, and built every key.
        lines = {self.construct_object(key): key.start_mark.line + 1 for key, _ in node.value}
        self.lines.record(data, node.start_mark.line + 1, lines)

    def construct_yaml_seq(self, node: yaml.SequenceNode) -> Generator[list[Any], None, None]:
        data: list[Any] = []
        yield data
        data.extend(self.construct_sequence(node))
        lines = {index: item.start_mark.line + 1 for index, item in enumerate(node.value)}
        self.lines.record(data, node.start_mark.line + 1, lines)


_GuardedLoader.add_constructor("tag:yaml.org,2002:map", _GuardedLoader.construct_yaml_map)
_GuardedLoader.add_constructor("tag:yaml.org,2002:seq", _GuardedLoader.construct_yaml_seq)
