"""The problem model: a problem folder's layout, its checkpoints, markers and static assets
(load.py reads one from its config.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.foundation.layout import TESTS_DIR
from scbench_ci.problem.fields import shown

CONFIG_NAME = "config.yaml"
CONFTEST = "conftest.py"
TESTS_ASSETS_DIR = f"{TESTS_DIR}/assets"
"""Where static assets land, in the workspace's copy of the problem's tests/ folder."""
DEFAULT_TEST_TIMEOUT_S = 30.0
MAX_CHECKPOINT_NAME_CHARS = 100
_CHECKPOINT_NAME = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.-]{{0,{MAX_CHECKPOINT_NAME_CHARS - 1}}}")
CHECKPOINT_NAME_RULE = (
    f"checkpoint names are 1 to {MAX_CHECKPOINT_NAME_CHARS} letters, digits, '_', '-' and '.', "
    "not starting with '-' or '.'"
)


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
    """Where SCBench's agent runs find the asset in their workspace; the tests find it at
    `.evaluation_tests/assets/<name>`, as SCBench's runner puts it."""

    @property
    def env_name(self) -> str:
        """As SCBench's runner names it (`SCBENCH_ASSET_{name.upper()}`)."""
        return f"SCBENCH_ASSET_{self.name.upper()}"


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
