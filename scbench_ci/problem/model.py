"""Load and validate a problem folder: config.yaml, checkpoints, markers, assets, tests."""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Generator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from scbench_ci.errors import ProblemError

CONFIG_NAME = "config.yaml"
TESTS_DIR = "tests"
CONFTEST = "conftest.py"
TESTS_ASSETS_DIR = f"{TESTS_DIR}/assets"
"""Where static assets land, in the workspace's copy of the problem's tests/ folder."""
DEFAULT_TEST_TIMEOUT_S = 30.0
MAX_CONFIG_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 32
MAX_YAML_VALUES = 10_000
"""Counted with aliases expanded: what any walk over the loaded data would visit."""
MAX_SHOWN_CHARS = 200
MAX_NAME_BYTES = 255
"""The longest file name Linux file systems take."""
MAX_CHECKPOINT_NAME_CHARS = 100
_CHECKPOINT_NAME = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.-]{{0,{MAX_CHECKPOINT_NAME_CHARS - 1}}}")
CHECKPOINT_NAME_RULE = (
    f"checkpoint names are 1 to {MAX_CHECKPOINT_NAME_CHARS} letters, digits, '_', '-' and '.', "
    "not starting with '-' or '.'"
)


def real_path(path: Path) -> Path:
    """`path.resolve()` without its RuntimeError on a symlink loop (before Python 3.13): the
    loop is left for the next look at the file to report."""
    return Path(os.path.realpath(path))


def is_checkpoint_name(text: str) -> bool:
    """Whether `text` can name a checkpoint: it becomes a file name and an output sub-folder."""
    return _CHECKPOINT_NAME.fullmatch(text) is not None


class Group(StrEnum):
    CORE = "Core"
    FUNCTIONALITY = "Functionality"
    ERROR = "Error"
    REGRESSION = "Regression"


@dataclass(frozen=True)
class Marker:
    name: str
    description: str
    group: Group


BUILTIN_MARKERS: tuple[Marker, ...] = (
    Marker("error", "error-handling / edge-case tests", Group.ERROR),
    Marker("functionality", "non-core / nice-to-have tests", Group.FUNCTIONALITY),
    Marker("regression", "regression tests from prior checkpoints", Group.REGRESSION),
)


@dataclass(frozen=True)
class StaticAsset:
    name: str
    source: Path
    save_path: PurePosixPath
    """Where the asset lands, relative to the workspace's tests/assets folder."""

    @property
    def env_name(self) -> str:
        return "SCBENCH_ASSET_" + re.sub(r"[^A-Za-z0-9]", "_", self.name).upper()


@dataclass(frozen=True)
class Checkpoint:
    name: str
    version: int
    order: int
    state: str | None
    include_prior_tests: bool
    timeout_s: float
    env: dict[str, str]

    @property
    def test_file(self) -> str:
        return f"test_{self.name}.py"


@dataclass(frozen=True)
class Problem:
    root: Path
    name: str
    version: int
    entry_file: str
    timeout_s: float | None
    test_dependencies: tuple[str, ...]
    env: dict[str, str]
    markers: tuple[Marker, ...]
    static_assets: tuple[StaticAsset, ...]
    checkpoints: tuple[Checkpoint, ...] = field(repr=False)
    """Sorted by their evaluation order."""

    @property
    def tests_dir(self) -> Path:
        return self.root / TESTS_DIR

    def checkpoint(self, name: str) -> Checkpoint:
        for checkpoint in self.checkpoints:
            if checkpoint.name == name:
                return checkpoint
        known = ", ".join(c.name for c in self.checkpoints)
        raise ProblemError(
            self.root / CONFIG_NAME, "checkpoints", f"no checkpoint {shown(name)} (known: {known})"
        )

    def prior_checkpoints(self, checkpoint: Checkpoint) -> tuple[Checkpoint, ...]:
        index = self.checkpoints.index(checkpoint)
        return self.checkpoints[:index]

    def select(self, name: str) -> tuple[Checkpoint, ...]:
        """The checkpoints a `--checkpoint` value names: one, or all of them in order."""
        if name == "all":
            return self.checkpoints
        return (self.checkpoint(name),)


class ConfigError(ProblemError):
    """A bad config.yaml, with the line (from 1) of the offending key where there is one."""

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


@dataclass(frozen=True)
class ProblemCheck:
    """What `check_problem` found: the problem, or every error that keeps it from loading."""

    problem: Problem | None
    """None when there is any error."""
    errors: tuple[ProblemError, ...]
    config: Any
    """config.yaml as loaded, None when it could not be."""
    lines: YamlLines

    def line(self, *keys: str) -> int | None:
        """The line in config.yaml of the key that `keys` leads to, mapping by mapping."""
        container = self.config
        for key in keys[:-1]:
            container = container.get(key) if isinstance(container, dict) else None
        return self.lines.of(container, keys[-1])


def load_problem(root: Path) -> Problem:
    """Read `root/config.yaml` and check the folder around it; raise ProblemError on the first
    bad input (`check_problem` finds them all)."""
    return _read_problem(real_path(root), None)[0]


def check_problem(root: Path) -> ProblemCheck:
    """Every error `load_problem` would raise, at once: the problem folder's and config.yaml's
    (a field's with the line it is on). Only a folder or a config.yaml that cannot be read at
    all stops the check at its first error."""
    errors: list[ProblemError] = []
    try:
        problem, config, lines = _read_problem(real_path(root), errors)
    except ProblemError as error:
        return ProblemCheck(problem=None, errors=(error,), config=None, lines=YamlLines())
    return ProblemCheck(
        problem=None if errors else problem, errors=tuple(errors), config=config, lines=lines
    )


def _read_problem(
    root: Path, errors: list[ProblemError] | None
) -> tuple[Problem, dict[str, Any], YamlLines]:
    """Without `errors` the first bad input raises; with it, bad fields are kept there and the
    Problem returned is built from defaults where they were."""
    if not root.is_dir():
        raise ProblemError(root, None, "problem folder does not exist or is not a folder")
    config_path = root / CONFIG_NAME
    if not config_path.exists() and not config_path.is_symlink():
        raise ProblemError(config_path, None, "missing (every problem needs a config.yaml)")
    _check_inside(root, config_path)
    raw, lines = read_yaml_lines(config_path)
    if not isinstance(raw, dict):
        raise ConfigError(config_path, None, "must be a YAML mapping of fields", 1)
    reader = _FieldReader(config_path, lines, errors)

    name = reader.string(raw, "name", required=True)
    problem_timeout = reader.positive_number(raw, "timeout")
    problem_env = reader.string_map(raw, "env")
    markers = _read_markers(reader, raw)
    checkpoints = _read_checkpoints(reader, raw, problem_timeout, problem_env)
    problem = Problem(
        root=root,
        name=name,
        version=reader.integer(raw, "version", default=1),
        entry_file=reader.string(raw, "entry_file", required=True),
        timeout_s=problem_timeout,
        test_dependencies=tuple(reader.string_list(raw, "test_dependencies")),
        env=problem_env,
        markers=markers,
        static_assets=_read_assets(reader, raw, root),
        checkpoints=checkpoints,
    )
    try:
        _check_tests_folder(problem)
    except ProblemError as error:
        if errors is None:
            raise
        errors.append(error)
    return problem, raw, lines


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


def _check_inside(root: Path, path: Path) -> None:
    if not real_path(path).is_relative_to(root):
        raise ProblemError(path, None, f"is a symlink that leaves the problem folder {root}")


class _FieldReader:
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
        error = ConfigError(self.path, _field(field_name), message, self.lines.of(data, key))
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


def _field(name: str) -> str:
    """A field name as an error message shows it: one line (non-printables escaped), cut short."""
    return _cut(repr(name)[1:-1])


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 3] + "..."


def _read_markers(reader: _FieldReader, raw: dict[str, Any]) -> tuple[Marker, ...]:
    groups = {group.value.lower(): group for group in Group}
    builtin_names = {marker.name for marker in BUILTIN_MARKERS}
    markers = []
    specs = reader.mapping(raw, "markers")
    for name in specs:
        where = f"markers.{name}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            reader.reject(where, "is not a valid pytest marker name", specs, name)
            continue
        if name in builtin_names:
            reader.reject(where, "is a built-in marker and cannot be redefined", specs, name)
            continue
        spec = reader.entry(specs, name)
        if not isinstance(spec, dict):
            reader.reject(where, "must be a mapping with description and group", specs, name)
            continue
        group_text = reader.string(spec, "group", prefix=where + ".", required=True)
        if not group_text:
            continue
        group = groups.get(group_text.lower())
        if group is None:
            allowed = ", ".join(g.value for g in Group)
            reader.reject(
                where + ".group",
                f"unknown group {shown(group_text)} (one of {allowed})",
                spec,
                "group",
            )
            continue
        description = reader.string(spec, "description", prefix=where + ".", default=name)
        markers.append(Marker(name, " ".join(description.split()), group))
    return tuple(markers)


def _read_assets(reader: _FieldReader, raw: dict[str, Any], root: Path) -> tuple[StaticAsset, ...]:
    assets: list[StaticAsset] = []
    env_names: dict[str, str] = {}
    specs = reader.mapping(raw, "static_assets")
    for name, spec in specs.items():
        where = f"static_assets.{name}"
        if not isinstance(spec, dict):
            reader.reject(
                where, "must be a mapping with path (and optional save_path)", specs, name
            )
            continue
        asset = _read_asset(reader, where, name, spec, root)
        if asset is None:
            continue
        overlapping = next((other for other in assets if _overlap(asset, other)), None)
        if overlapping is not None:
            reader.reject(
                where + ".save_path",
                f"{shown(str(asset.save_path))} overlaps static_assets."
                f"{_field(overlapping.name)}'s {shown(str(overlapping.save_path))}",
                spec,
                "save_path",
            )
        elif asset.env_name in env_names:
            reader.reject(
                where,
                f"its variable {asset.env_name} clashes with "
                f"static_assets.{_field(env_names[asset.env_name])}",
                specs,
                name,
            )
        else:
            env_names[asset.env_name] = name
            assets.append(asset)
    return tuple(assets)


def _overlap(asset: StaticAsset, other: StaticAsset) -> bool:
    """Whether one lands inside the other (or on it)."""
    shorter = min(len(asset.save_path.parts), len(other.save_path.parts))
    return asset.save_path.parts[:shorter] == other.save_path.parts[:shorter]


def _read_asset(
    reader: _FieldReader, where: str, name: str, spec: dict[str, Any], root: Path
) -> StaticAsset | None:
    """One asset on its own (None when it is bad): its source and where it lands."""
    relative = reader.string(spec, "path", prefix=where + ".", required=True)
    if not relative:
        return None
    source = real_path(root / relative)
    if not source.is_relative_to(root):
        reader.reject(where + ".path", f"{shown(relative)} leaves the problem folder", spec, "path")
        return None
    try:
        source.stat()
    except FileNotFoundError:
        reader.reject(where + ".path", f"{shown(relative)} does not exist", spec, "path")
        return None
    except OSError as error:
        reader.reject(where + ".path", f"{shown(relative)}: {error.strerror}", spec, "path")
        return None
    rejected = reader.rejected
    save_text = reader.string(spec, "save_path", prefix=where + ".", default=name)
    if reader.rejected > rejected:
        return None
    save_path = PurePosixPath(save_text)
    field_name = where + ".save_path"
    if save_path.is_absolute() or ".." in save_path.parts or save_path == PurePosixPath("."):
        reader.reject(
            field_name,
            f"{shown(save_text)} must stay inside {TESTS_ASSETS_DIR}",
            spec,
            "save_path",
        )
        return None
    if any(len(part.encode()) > MAX_NAME_BYTES for part in save_path.parts):
        reader.reject(
            field_name,
            f"{shown(save_text)} holds a name longer than {MAX_NAME_BYTES} bytes",
            spec,
            "save_path",
        )
        return None
    problem = _asset_target_problem(root, save_path)
    if problem is not None:
        reader.reject(field_name, problem, spec, "save_path")
        return None
    return StaticAsset(name=name, source=source, save_path=save_path)


def _asset_target_problem(root: Path, save_path: PurePosixPath) -> str | None:
    """The asset lands in a copy of the problem's tests/ folder: a symlink there on its way
    would have it written outside the workspace."""
    tests_dir = root / TESTS_DIR
    target = root / TESTS_ASSETS_DIR / save_path
    for path in (target, *target.parents):
        if path == tests_dir:
            return None
        shown = path.relative_to(root)
        if path.is_symlink():
            return f"{shown} is a symlink in the problem folder"
        if path == target and path.exists():
            return f"{shown} already exists in the problem folder"
        if path.exists() and not path.is_dir():
            return f"{shown} is a file in the problem folder"
    return None


def _read_checkpoints(
    reader: _FieldReader,
    raw: dict[str, Any],
    problem_timeout: float | None,
    problem_env: dict[str, str],
) -> tuple[Checkpoint, ...]:
    rejected = reader.rejected
    specs = reader.mapping(raw, "checkpoints")
    if not specs and reader.rejected == rejected:
        reader.reject("checkpoints", "must name at least one checkpoint", raw, "checkpoints")
    checkpoints = []
    for position, name in enumerate(specs, start=1):
        where = f"checkpoints.{name}."
        if not is_checkpoint_name(name):
            reader.reject(f"checkpoints.{name}", CHECKPOINT_NAME_RULE, specs, name)
            continue
        spec = reader.entry(specs, name)
        if not isinstance(spec, dict):
            reader.reject(f"checkpoints.{name}", "must be a mapping", specs, name)
            continue
        timeout = reader.positive_number(spec, "timeout", prefix=where)
        checkpoints.append(
            Checkpoint(
                name=name,
                version=reader.integer(spec, "version", prefix=where, default=1),
                order=reader.integer(spec, "order", prefix=where, default=position),
                state=reader.string(spec, "state", prefix=where) or None,
                include_prior_tests=reader.boolean(
                    spec, "include_prior_tests", prefix=where, default=True
                ),
                timeout_s=timeout or problem_timeout or DEFAULT_TEST_TIMEOUT_S,
                env={**problem_env, **reader.string_map(spec, "env", prefix=where)},
            )
        )
    # A stable sort keeps config.yaml's position as the tie-breaker between equal orders.
    return tuple(sorted(checkpoints, key=lambda c: c.order))


def _check_tests_folder(problem: Problem) -> None:
    tests = problem.tests_dir
    for path in (tests, tests / CONFTEST):
        _check_inside(problem.root, path)
    if not tests.is_dir():
        raise ProblemError(tests, None, "missing (a problem keeps its pytest files in tests/)")
    if not (tests / CONFTEST).is_file():
        raise ProblemError(
            tests / CONFTEST,
            None,
            "missing (it registers --entrypoint and --checkpoint for the tests)",
        )
