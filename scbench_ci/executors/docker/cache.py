"""Environments the Docker executor builds once and gives to many runs, read-only.

Four kinds, each keyed by everything its content depends on:

- `runner`: the test runner's virtual environment (pytest, its plugins, the problem's test
  dependencies), built by the runner user and compiled to bytecode; keyed by the image's id, the
  exact requirement list and the index variables uv is given.
- `quality`: the code-quality measure's virtual environment (scb-check, pinned), built alike on
  the image's Python 3.12; keyed by the image's id, the requirement and the index variables.
- `dependencies`: what SCBench's default environment's setup (`uv init`, `uv add -r
  requirements.txt`) leaves in the workspace, built by the tests user from a workspace that holds
  nothing but requirements.txt, or nothing at all for a submission without one (so none of the
  submission's code or files is in it while it is built); keyed by the image's id,
  requirements.txt's bytes (or its absence), the setup commands, the index variables and the
  other variables setup sees. Used only where it is provably what the setup would have made:
  see `dependency_source` and `conflicting_names`.
- `stdlib`: the image's own standard library folder (that of the login shell's `python3`), as
  the image has it, with its bytecode; mounted read-only over that folder in runs, so the tests'
  and the submission's processes read the bytecode where each process compiled every module it
  imported (the python images ship no bytecode, and no run can write there). Made by Docker
  copying the folder out of the image into the empty volume, then compiled by the image's
  `python3`; keyed by the image's id and the folder. Nothing is added to the folder but
  `__pycache__` entries, so it has no key file: only a completed build publishes its marker.

Each environment lives in two Docker volumes, so it works wherever the daemon is (no path of this
machine is involved):

- the data volume (a name of its own per build), filled by one throwaway builder container,
  whose last act is to write the key into `env/complete`;
- the marker volume, named by the key and created only once the data volume is complete. Its
  labels name the data volume and the entries the environment brings into the workspace.

A run finds the marker by the key's name and mounts the data volume read-only (and it is the
runner's, mode 0755: the tests user cannot write it either way). Creating a volume whose name
exists returns the existing one, so of two builders that raced (two processes on one daemon)
the first to publish wins and the other drops its copy: nobody ever waits on another's build.
Threads of one process take a lock per key, so they build once. A marker whose labels or data
volume are not what they must be is removed and the environment built again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import docker
import requests
from docker.errors import APIError, DockerException, NotFound

from scbench_ci.executors.docker.labels import CACHE_LABEL
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import REQUIREMENTS

KEY_LABEL = "dev.scbench-ci.cache.key"
DATA_LABEL = "dev.scbench-ci.cache.data"
NAMES_LABEL = "dev.scbench-ci.cache.names"
BYTES_LABEL = "dev.scbench-ci.cache.bytes"
"""On a marker: how much its data volume holds (measured by its builder)."""
FORMAT = "1"
"""Part of every key: change it when what a cache holds, or where, changes."""
RUNNER = "runner"
QUALITY = "quality"
DEPENDENCIES = "dependencies"
STDLIB = "stdlib"
COMPLETE_FILE = "env/complete"
"""Relative to the data volume's root: the key, written once everything else is there."""

DEFAULT_SETUP = ("uv init", f"uv add -r {REQUIREMENTS}")
"""SCBench's default environment's setup for a submission with requirements.txt and no
pyproject.toml (environment.default_environment)."""
SETUP_WITHOUT_REQUIREMENTS = ("uv init", f"uv add -r {REQUIREMENTS} || true")
"""The same for a submission with neither: `uv add` makes the project's `.venv`, then fails."""
UV_NAMES = frozenset(
    {
        "pyproject.toml",
        "uv.lock",
        ".venv",
        ".python-version",
        ".python-versions",
        "uv.toml",
        "setup.py",
        "setup.cfg",
    }
)
"""Names in the workspace that change what `uv init`/`uv add` do, or whether `uv run` later
finds the installed project fresh: with any of them, the real setup runs."""
MAX_REQUIREMENTS_BYTES = 1024 * 1024
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# Every run of white space, and every run the next part cannot start with, is taken whole
# (possessive: `*+`, `++`): with backtracking, the ways to share a line of spaces between two of
# them take quadratic time (a requirements.txt is the submission's, read here on the host).
_EXTRAS = rf"(?:\s*+\[\s*+(?:{_NAME}(?:\s*+,\s*+{_NAME})*+)?\s*+\])?"
_VERSION = r"(?:===|==|!=|<=|>=|~=|<|>)\s*+[A-Za-z0-9.*+!_-]++"
_SPECIFIERS = rf"(?:\s*+\(?\s*+{_VERSION}(?:\s*+,\s*+{_VERSION})*+\s*+\)?)?"
_URL = r"\s*+@\s*+(?:https?|git\+https?)://[^\s;$\\]++"
_MARKER = r"(?:\s*+;[A-Za-z0-9_.'\"<>=!~() \t-]*+)?"
_REQUIREMENT = re.compile(rf"({_NAME}){_EXTRAS}(?:{_URL}|{_SPECIFIERS}){_MARKER}\s*+")
_ARCHIVE = re.compile(r"\.(?:whl|zip|egg|tar|tgz|tbz|txz|tar\.gz|tar\.bz2|tar\.xz)$", re.IGNORECASE)
"""A name that ends like this is taken for a file by installers."""
_COMMENT = re.compile(r"(?:^|\s)#.*$")
SAFE_NAME = re.compile(r"[A-Za-z0-9._-]+")
"""What a name the setup made in the workspace may look like, for the cache to keep it."""


@dataclass(frozen=True)
class Cached:
    kind: str
    key: str
    marker: str
    data_volume: str
    names: tuple[str, ...]
    """The workspace entries the environment brings (dependencies only)."""
    finish: bool = True
    """Whether restoring it ends with the tests' first `uv run` (dependencies only): after `uv
    add -r requirements.txt` the project is installed and a `uv run` prints nothing; without a
    requirements.txt it is not, and the tests' first `uv run` builds it, as under SCBench."""
    built: bool = False
    """Built by this process now (then the caches are held to their bounds, cache_bounds.py)."""


@dataclass(frozen=True)
class Built:
    """What a builder made: the workspace entries the environment brings (dependencies only),
    and the bytes its data volume holds."""

    names: tuple[str, ...]
    bytes: int


@dataclass(frozen=True)
class DependencySource:
    """What the dependency cache is made from: requirements.txt's bytes, or None for a
    submission without one."""

    requirements: bytes | None

    @property
    def setup(self) -> tuple[str, ...]:
        """The setup it stands in for."""
        return SETUP_WITHOUT_REQUIREMENTS if self.requirements is None else DEFAULT_SETUP


def cache_key(kind: str, **parts: object) -> str:
    text = json.dumps([FORMAT, kind, parts], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def marker_name(kind: str, key: str) -> str:
    return f"scbench-ci-cache-{kind}-{key[:40]}"


def setup_variables(variables: Mapping[str, str]) -> dict[str, str]:
    """The command's variables that can reach uv during setup: all but SCBench's own
    (`SCBENCH_CHECKPOINT`, the assets' paths), which differ between checkpoints and which uv
    does not read. The builder gets exactly these, so the key covers all it sees."""
    return {name: value for name, value in variables.items() if not name.startswith("SCBENCH_")}


def dependency_source(
    workspace: Path, setup_commands: tuple[str, ...], default_environment: bool
) -> DependencySource | str | None:
    """What the dependency cache is made from when it may stand in for the setup; else why not
    (a sentence), or None when there is nothing to say (not the default environment, or no
    setup)."""
    if not default_environment or not setup_commands:
        return None
    present = sorted(name for name in UV_NAMES if os.path.lexists(workspace / name))
    if present:
        return f"the submission has its own {', '.join(present)}"
    if not os.path.lexists(workspace / REQUIREMENTS):
        # Then nothing of the submission's reaches the setup: what it makes is the image's.
        if setup_commands != SETUP_WITHOUT_REQUIREMENTS:
            return f"the setup is not {_shown(SETUP_WITHOUT_REQUIREMENTS)}"
        return DependencySource(None)
    if setup_commands != DEFAULT_SETUP:
        return f"the setup is not {_shown(DEFAULT_SETUP)}"
    path = workspace / REQUIREMENTS
    try:
        status = path.lstat()
    except OSError:
        return f"no {REQUIREMENTS}"
    if not stat.S_ISREG(status.st_mode):
        return f"{REQUIREMENTS} is not a regular file"
    if status.st_size > MAX_REQUIREMENTS_BYTES:
        return f"{REQUIREMENTS} is larger than {MAX_REQUIREMENTS_BYTES} bytes"
    data = path.read_bytes()
    names = requirement_names(data)
    if isinstance(names, str):
        return names
    # A name that is also an entry of the workspace could be taken for it (the builder's
    # workspace has none).
    shadowed = sorted(name for name in names if os.path.lexists(workspace / name))
    if shadowed:
        return f"{REQUIREMENTS} names {', '.join(shadowed)}, also in the workspace"
    return DependencySource(data)


def _shown(setup: tuple[str, ...]) -> str:
    return " then ".join(f"`{command}`" for command in setup)


def requirements_reason(data: bytes) -> str | None:
    """Why these requirements could install something other than what their text names (a
    local path, an editable, a file: URL, an option line, a variable), or None when every line
    is a plain requirement: a name with extras, versions and markers, or a name @ a remote URL.
    """
    names = requirement_names(data)
    return names if isinstance(names, str) else None


def requirement_names(data: bytes) -> list[str] | str:
    """The names of the requirements when every line is a plain requirement; else why not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{REQUIREMENTS} is not UTF-8"
    names = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        plain = _REQUIREMENT.fullmatch(line)
        if "$" in line or line.endswith("\\") or not plain or _ARCHIVE.search(plain[1]):
            shown = line if len(line) <= 60 else f"{line[:57]}..."
            return (
                f"{REQUIREMENTS} line {number} is not a plain requirement (a name, or a name @ "
                f"a remote URL): {shown!r}"
            )
        names.append(plain[1])
    return names


def conflicting_names(workspace: Path, cached: Cached) -> list[str]:
    """The entries of the cached environment the workspace already has: the setup would have
    left those as they are (and built with them), so the cache cannot stand in for it."""
    return sorted(name for name in cached.names if os.path.lexists(workspace / name))


Build = Callable[[str], "Built | str"]
"""Fill the named data volume; what it made, or why it failed."""


def obtain(
    client: docker.DockerClient, kind: str, key: str, build: Build, note: Callable[[str], None]
) -> Cached | str:
    """The complete environment for the key, built now when there is none; or why there is none
    (the caller then does without). Never raises for a Docker error."""
    try:
        with _lock(key):
            found = lookup(client, kind, key, note)
            if found is not None:
                return found
            return _build(client, kind, key, build)
    except (DockerException, requests.RequestException, InfrastructureError) as error:
        return f"Docker failed: {_first_line(error)}"


def lookup(
    client: docker.DockerClient, kind: str, key: str, note: Callable[[str], None]
) -> Cached | None:
    """The published environment for the key, if there is one that is whole; a marker that is
    not is removed (and said)."""
    name = marker_name(kind, key)
    try:
        marker = client.volumes.get(name)
    except NotFound:
        return None
    labels = marker.attrs.get("Labels") or {}
    data_name = labels.get(DATA_LABEL, "")
    names = tuple(name for name in labels.get(NAMES_LABEL, "").split("/") if name)
    problem = None
    if labels.get(CACHE_LABEL) != kind or labels.get(KEY_LABEL) != key or not data_name:
        problem = "its labels are not the ones scbench-ci gives"
    elif not all(SAFE_NAME.fullmatch(entry) for entry in names):
        problem = "it names unexpected workspace entries"
    else:
        try:
            data = client.volumes.get(data_name)
        except NotFound:
            problem = f"its data volume {data_name} is gone"
        else:
            data_labels = data.attrs.get("Labels") or {}
            if data_labels.get(CACHE_LABEL) != kind or data_labels.get(KEY_LABEL) != key:
                problem = f"its data volume {data_name} is not the one built for it"
    if problem is None:
        return Cached(kind, key, name, data_name, names)
    note(f"cache volume {name} was not used and is removed: {problem}")
    forget(client, name)
    return None


def forget(client: docker.DockerClient, marker: str, data_volume: str | None = None) -> None:
    """Remove a marker (so the next run builds again) and, when given and no container uses it,
    its data volume."""
    for name in (marker, data_volume):
        if name is not None:
            with contextlib.suppress(NotFound, APIError, requests.RequestException):
                client.api.remove_volume(name, force=True)


def _build(client: docker.DockerClient, kind: str, key: str, build: Build) -> Cached | str:
    data_name = f"scbench-ci-cache-{kind}-{key[:12]}-{uuid.uuid4().hex[:12]}"
    client.volumes.create(data_name, driver="local", labels={CACHE_LABEL: kind, KEY_LABEL: key})
    published = False
    try:
        built = build(data_name)
        if isinstance(built, str):
            return built
        # Idempotent: when another process published first, this returns its marker.
        marker = client.volumes.create(
            marker_name(kind, key),
            driver="local",
            labels={
                CACHE_LABEL: kind,
                KEY_LABEL: key,
                DATA_LABEL: data_name,
                NAMES_LABEL: "/".join(built.names),
                BYTES_LABEL: str(built.bytes),
            },
        )
        labels = marker.attrs.get("Labels") or {}
        published = labels.get(DATA_LABEL) == data_name
        winner = labels.get(DATA_LABEL, "")
        won_names = tuple(n for n in labels.get(NAMES_LABEL, "").split("/") if n)
        if labels.get(KEY_LABEL) != key or not winner:
            return "another cache volume of the same name is in the way"
        return Cached(kind, key, marker_name(kind, key), winner, won_names, built=published)
    finally:
        if not published:
            forget(client, data_name)


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def _lock(key: str) -> Iterator[None]:
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        yield


def _first_line(error: Exception) -> str:
    text = str(getattr(error, "explanation", None) or error).strip()
    return text.splitlines()[0] if text else type(error).__name__
