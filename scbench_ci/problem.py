"""Load and validate a problem folder: config.yaml, checkpoints, markers, assets, tests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from scbench_ci.errors import ProblemError

CONFIG_NAME = "config.yaml"
TESTS_DIR = "tests"
CONFTEST = "conftest.py"
DEFAULT_TEST_TIMEOUT_S = 30.0
MAX_CONFIG_BYTES = 1024 * 1024


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
            self.root / CONFIG_NAME, "checkpoints", f"no checkpoint {name!r} (known: {known})"
        )

    def prior_checkpoints(self, checkpoint: Checkpoint) -> tuple[Checkpoint, ...]:
        index = self.checkpoints.index(checkpoint)
        return self.checkpoints[:index]

    def select(self, name: str) -> tuple[Checkpoint, ...]:
        """The checkpoints a `--checkpoint` value names: one, or all of them in order."""
        if name == "all":
            return self.checkpoints
        return (self.checkpoint(name),)


def load_problem(root: Path) -> Problem:
    """Read `root/config.yaml` and check the folder around it; raise ProblemError on bad input."""
    root = root.resolve()
    if not root.is_dir():
        raise ProblemError(root, None, "problem folder does not exist")
    config_path = root / CONFIG_NAME
    raw = _read_yaml(config_path)
    reader = _FieldReader(config_path)

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
    _check_tests_folder(problem)
    return problem


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ProblemError(path, None, "missing (every problem needs a config.yaml)")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ProblemError(path, None, f"larger than {MAX_CONFIG_BYTES} bytes; refusing to parse")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ProblemError(path, None, "not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProblemError(path, None, f"invalid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise ProblemError(path, None, "must be a YAML mapping of fields")
    return data


class _FieldReader:
    """Typed access to YAML fields that names the file and field in every error."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field_name: str, message: str) -> ProblemError:
        return ProblemError(self.path, field_name, message)

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
                raise self.fail(prefix + key, "is required")
            return default
        if not isinstance(value, str | int | float) or isinstance(value, bool) or value == "":
            raise self.fail(prefix + key, f"must be a non-empty string, got {value!r}")
        return str(value)

    def integer(self, data: dict[str, Any], key: str, *, prefix: str = "", default: int) -> int:
        value = data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise self.fail(prefix + key, f"must be an integer, got {value!r}")
        return int(value)

    def positive_number(self, data: dict[str, Any], key: str, *, prefix: str = "") -> float | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(prefix + key, f"must be a positive number of seconds, got {value!r}")
        return float(value)

    def boolean(self, data: dict[str, Any], key: str, *, prefix: str = "", default: bool) -> bool:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(prefix + key, f"must be true or false, got {value!r}")
        return value

    def mapping(self, data: dict[str, Any], key: str, *, prefix: str = "") -> dict[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(prefix + key, f"must be a mapping, got {type(value).__name__}")
        for inner in value:
            if not isinstance(inner, str) or not inner:
                raise self.fail(prefix + key, f"keys must be non-empty strings, got {inner!r}")
        return value

    def string_map(self, data: dict[str, Any], key: str, *, prefix: str = "") -> dict[str, str]:
        result = {}
        for name, value in self.mapping(data, key, prefix=prefix).items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.fail(f"{prefix}{key}.{name}", f"must be a string, got {value!r}")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise self.fail(f"{prefix}{key}.{name}", "is not a valid environment variable name")
            result[name] = str(value)
        return result

    def string_list(self, data: dict[str, Any], key: str) -> list[str]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list of strings, got {type(value).__name__}")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise self.fail(f"{key}[{index}]", f"must be a non-empty string, got {item!r}")
        return [item.strip() for item in value]


def _read_markers(reader: _FieldReader, raw: dict[str, Any]) -> tuple[Marker, ...]:
    groups = {group.value.lower(): group for group in Group}
    builtin_names = {marker.name for marker in BUILTIN_MARKERS}
    markers = []
    for name, spec in reader.mapping(raw, "markers").items():
        where = f"markers.{name}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise reader.fail(where, "is not a valid pytest marker name")
        if name in builtin_names:
            raise reader.fail(where, "is a built-in marker and cannot be redefined")
        spec = spec if spec is not None else {}
        if not isinstance(spec, dict):
            raise reader.fail(where, "must be a mapping with description and group")
        group_text = reader.string(spec, "group", prefix=where + ".", required=True)
        group = groups.get(group_text.lower())
        if group is None:
            allowed = ", ".join(g.value for g in Group)
            raise reader.fail(where + ".group", f"unknown group {group_text!r} (one of {allowed})")
        description = reader.string(spec, "description", prefix=where + ".", default=name)
        markers.append(Marker(name, " ".join(description.split()), group))
    return tuple(markers)


def _read_assets(reader: _FieldReader, raw: dict[str, Any], root: Path) -> tuple[StaticAsset, ...]:
    assets = []
    env_names: dict[str, str] = {}
    for name, spec in reader.mapping(raw, "static_assets").items():
        where = f"static_assets.{name}"
        if not isinstance(spec, dict):
            raise reader.fail(where, "must be a mapping with path (and optional save_path)")
        relative = reader.string(spec, "path", prefix=where + ".", required=True)
        source = (root / relative).resolve()
        if not source.is_relative_to(root):
            raise reader.fail(where + ".path", f"{relative!r} leaves the problem folder")
        if not source.exists():
            raise reader.fail(where + ".path", f"{relative!r} does not exist")
        save_text = reader.string(spec, "save_path", prefix=where + ".", default=name)
        save_path = PurePosixPath(save_text)
        if save_path.is_absolute() or ".." in save_path.parts or save_path == PurePosixPath("."):
            raise reader.fail(where + ".save_path", f"{save_text!r} must stay inside tests/assets")
        asset = StaticAsset(name=name, source=source, save_path=save_path)
        if asset.env_name in env_names:
            raise reader.fail(
                where,
                f"its variable {asset.env_name} clashes with "
                f"static_assets.{env_names[asset.env_name]}",
            )
        env_names[asset.env_name] = name
        assets.append(asset)
    return tuple(assets)


def _read_checkpoints(
    reader: _FieldReader,
    raw: dict[str, Any],
    problem_timeout: float | None,
    problem_env: dict[str, str],
) -> tuple[Checkpoint, ...]:
    specs = reader.mapping(raw, "checkpoints")
    if not specs:
        raise reader.fail("checkpoints", "must name at least one checkpoint")
    checkpoints = []
    for position, (name, spec) in enumerate(specs.items(), start=1):
        where = f"checkpoints.{name}."
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
            raise reader.fail(
                f"checkpoints.{name}",
                "checkpoint names may hold only letters, digits, '_', '-' and '.'",
            )
        spec = spec if spec is not None else {}
        if not isinstance(spec, dict):
            raise reader.fail(f"checkpoints.{name}", "must be a mapping")
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
    if not tests.is_dir():
        raise ProblemError(tests, None, "missing (a problem keeps its pytest files in tests/)")
    if not (tests / CONFTEST).is_file():
        raise ProblemError(
            tests / CONFTEST,
            None,
            "missing (it registers --entrypoint and --checkpoint for the tests)",
        )
