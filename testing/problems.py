"""Small problems written into a folder: config.yaml, tests/conftest.py and test files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

CONFTEST = """
import shlex

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)


@pytest.fixture
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")
"""


class ProblemFolder:
    """Writes a problem folder: config.yaml, tests/conftest.py and test files."""

    def __init__(self, root: Path, config: dict[str, object] | None = None) -> None:
        self.root = root
        self.config: dict[str, object] = config or {
            "name": "demo",
            "entry_file": "main",
            "checkpoints": {"checkpoint_1": {}, "checkpoint_2": {}, "checkpoint_3": {}},
        }
        (root / "tests").mkdir(parents=True)
        self.write("tests/conftest.py", CONFTEST)
        self.save()
        for name in self.config["checkpoints"]:  # type: ignore[attr-defined]
            self.write(f"tests/test_{name}.py", "def test_ok():\n    pass\n")

    def save(self) -> ProblemFolder:
        self.write("config.yaml", yaml.safe_dump(self.config, sort_keys=False))
        return self

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path


WAITS = "import time\n\n\ndef test_waits():\n    time.sleep({seconds})\n"


def waiting_problem(
    root: Path, checkpoints: int, seconds: float
) -> tuple[ProblemFolder, list[str]]:
    """A problem of `checkpoints` checkpoints whose one test each sleeps `seconds`, and their
    names."""
    names = [f"checkpoint_{n}" for n in range(1, checkpoints + 1)]
    problem = ProblemFolder(
        root, {"name": "waits", "entry_file": "main", "checkpoints": {name: {} for name in names}}
    )
    for name in names:
        problem.write(f"tests/test_{name}.py", WAITS.format(seconds=seconds))
    return problem, names
