"""A copy of the repository as a workflow's checkout has it, and the release's wheel and sdist,
built by release.yml's own build step."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.local_steps import run_step
from testing.paths import REPO_ROOT
from testing.workflow_files import load_workflow

RELEASE = load_workflow("release.yml")
PYTHON_FIRST = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
"""A step's `python` is this one, as setup-python puts its own first on PATH."""


def copy_repository(target: Path) -> Path:
    """The repository's files (those git tracks or would track), without its build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, os.fsdecode(listed).split("\0")):
        source, copy = REPO_ROOT / name, target / name
        if not source.is_symlink() and not source.exists():
            continue  # deleted in the work tree, not yet in git
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copy, follow_symlinks=False)
    return target


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return copy_repository(tmp_path / "checkout")


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`dist/` after the package job's build step (`python -m build`)."""
    checkout = copy_repository(tmp_path_factory.mktemp("package") / "checkout")
    run = run_step(RELEASE, "package", "build", cwd=checkout, context={}, env=PYTHON_FIRST)
    assert run.exit_code == 0, run.output
    return checkout / "dist"
