"""Load and check a problem folder: config.yaml read into the problem model, field by field,
and the folder around it (its tests, its assets)."""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.foundation.layout import TESTS_DIR
from scbench_ci.foundation.paths import real_path
from scbench_ci.problem.fields import FieldReader, shown, shown_field
from scbench_ci.problem.model import (
    BUILTIN_MARKERS,
    CHECKPOINT_NAME_RULE,
    CONFIG_NAME,
    CONFTEST,
    DEFAULT_TEST_TIMEOUT_S,
    TESTS_ASSETS_DIR,
    Checkpoint,
    Group,
    Marker,
    Problem,
    StaticAsset,
    is_checkpoint_name,
)
from scbench_ci.problem.yaml_loader import ConfigError, YamlLines, read_yaml_lines
from scbench_ci.trust.names import MAX_PROBLEM_NAME_CHARS, name_problem
from scbench_ci.trust.terminal import quoted

MAX_NAME_BYTES = 255
"""The longest file name Linux file systems take."""


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


class KeptProblems:
    """Problems loaded once and kept (a session's), each while what `load_problem` reads first
    is unchanged: the folder, config.yaml, tests/ and its conftest.py (their inode, size and
    modification time). Safe to use from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[Path, tuple[tuple[tuple[int, int, int] | None, ...], Problem]] = {}

    def load(self, root: Path) -> Problem:
        """As `load_problem(root)`."""
        stamp = _stamp(root)
        with self._lock:
            kept = self._kept.get(root)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        problem = load_problem(root)
        with self._lock:
            self._kept[root] = (stamp, problem)
        return problem


def _stamp(root: Path) -> tuple[tuple[int, int, int] | None, ...]:
    stamps: list[tuple[int, int, int] | None] = []
    for path in (root, root / CONFIG_NAME, root / TESTS_DIR, root / TESTS_DIR / CONFTEST):
        try:
            found = os.stat(path)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((found.st_ino, found.st_size, found.st_mtime_ns))
    return tuple(stamps)


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
    # The folder's name names the problem in results.json and every output.
    wrong = name_problem(root.name, MAX_PROBLEM_NAME_CHARS)
    if wrong is not None:
        raise ProblemError(
            root.parent, None, f"the problem folder's name {quoted(root.name)} {wrong}"
        )
    config_path = root / CONFIG_NAME
    if not config_path.exists() and not config_path.is_symlink():
        raise ProblemError(config_path, None, "missing (every problem needs a config.yaml)")
    _check_inside(root, config_path)
    raw, lines = read_yaml_lines(config_path)
    if not isinstance(raw, dict):
        raise ConfigError(config_path, None, "must be a YAML mapping of fields", 1)
    reader = FieldReader(config_path, lines, errors)

    name = reader.string(raw, "name", required=True)
    wrong = name_problem(name, MAX_PROBLEM_NAME_CHARS) if name else None
    if wrong is not None:
        reader.reject("name", f"{shown(name)} {wrong}", raw, "name")
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


def _check_inside(root: Path, path: Path) -> None:
    if not real_path(path).is_relative_to(root):
        raise ProblemError(path, None, f"is a symlink that leaves the problem folder {root}")


def _read_markers(reader: FieldReader, raw: dict[str, Any]) -> tuple[Marker, ...]:
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


def _read_assets(reader: FieldReader, raw: dict[str, Any], root: Path) -> tuple[StaticAsset, ...]:
    assets: list[StaticAsset] = []
    env_names: dict[str, str] = {}
    specs = reader.mapping(raw, "static_assets")
    for name, spec in specs.items():
        where = f"static_assets.{name}"
        # The name is the asset's entry in the workspace (`.evaluation_tests/assets/<name>`, as
        # SCBench's runner puts it) and names its variable (`SCBENCH_ASSET_<NAME>`).
        if not _file_name(name) or "=" in name:
            reader.reject(where, "must be named by one file name without =", specs, name)
            continue
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
                f"{shown_field(overlapping.name)}'s {shown(str(overlapping.save_path))}",
                spec,
                "save_path",
            )
        elif asset.env_name in env_names:
            reader.reject(
                where,
                f"its variable {asset.env_name} clashes with "
                f"static_assets.{shown_field(env_names[asset.env_name])}",
                specs,
                name,
            )
        else:
            env_names[asset.env_name] = name
            assets.append(asset)
    return tuple(assets)


def _file_name(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
        and len(name.encode()) <= MAX_NAME_BYTES
    )


def _overlap(asset: StaticAsset, other: StaticAsset) -> bool:
    """Whether one lands inside the other (or on it)."""
    shorter = min(len(asset.save_path.parts), len(other.save_path.parts))
    return asset.save_path.parts[:shorter] == other.save_path.parts[:shorter]


def _read_asset(
    reader: FieldReader, where: str, name: str, spec: dict[str, Any], root: Path
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
    reader: FieldReader,
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
