"""A small problem whose tests run the submission, and the real CLI around it, for the threat
matrix of what sits in an output folder, reused results and what tests print."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.problems import ProblemFolder

TESTS = """
import subprocess

import pytest


def run(argv):
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    print(out)
    return out


def test_says_ok(entrypoint_argv):
    assert run(entrypoint_argv) == "ok\\n"


def test_says_ok_twice(entrypoint_argv):
    assert run(entrypoint_argv) == "ok\\n"


@pytest.mark.extra
def test_says_ok_again(entrypoint_argv):
    assert run(entrypoint_argv) == "ok\\n"
"""


@dataclass(frozen=True)
class Threat:
    root: Path
    problem: ProblemFolder
    submission: Path
    output: Path
    outside: Path
    """A folder beside the others that nothing may change."""
    cache: Path
    """XDG_CACHE_HOME: where the key that signs results is kept."""
    image: str

    def submission_prints(self, text: str) -> None:
        (self.submission / "main.py").write_text(f"print({text!r})\n")

    def evaluate(
        self, *more: str | Path, output: Path | None = None
    ) -> subprocess.CompletedProcess:
        return self.cli(
            "evaluate",
            *("--problem", self.problem.root, "--checkpoint", "checkpoint_1"),
            *("--submission", self.submission, "--output", output or self.output),
            *("--executor", "docker", "--image", self.image, "--jobs", "1"),
            *more,
        )

    def cli(
        self, *args: str | Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """`env`: variables besides this process's."""
        return run_cli(*args, env={**os.environ, "XDG_CACHE_HOME": str(self.cache), **(env or {})})

    def outside_listing(self) -> dict[str, bytes]:
        return {
            str(path.relative_to(self.outside)): path.read_bytes() if path.is_file() else b""
            for path in sorted(self.outside.rglob("*"))
        }


@pytest.fixture
def threat(tmp_path: Path, test_image: str) -> Threat:
    problem = ProblemFolder(
        tmp_path / "demo",
        {
            "name": "demo",
            "entry_file": "main",
            "markers": {"extra": {"description": "more of the same", "group": "Core"}},
            "checkpoints": {"checkpoint_1": {}},
        },
    )
    problem.write("tests/test_checkpoint_1.py", TESTS)
    submission = tmp_path / "submission"
    submission.mkdir()
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.txt").write_text("not yours\n")
    threat = Threat(
        tmp_path, problem, submission, tmp_path / "out", outside, tmp_path / "cache", test_image
    )
    threat.submission_prints("bad")
    return threat


def no_traceback(run: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert "internal error" not in run.stderr, run.stderr
