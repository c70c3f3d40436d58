"""Stage the folder the tests run in: submission, selected tests, assets, pytest.ini, .scbench/."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.errors import ProblemError, UsageError
from scbench_ci.problem import BUILTIN_MARKERS, TESTS_DIR, Checkpoint, Problem

REPORTS_DIR = ".scbench"
ASSETS_DIR = f"{TESTS_DIR}/assets"
PYTEST_INI = "pytest.ini"
SKIPPED_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".venv", "venv"})
DISCARDED_SUBMISSION_DIRS = (TESTS_DIR, REPORTS_DIR)


@dataclass(frozen=True)
class Workspace:
    root: Path
    tested_checkpoints: tuple[Checkpoint, ...]
    """The checkpoints whose test file was copied, in order (the evaluated one last)."""
    warnings: tuple[str, ...]


def tested_checkpoints(
    problem: Problem, checkpoint: Checkpoint, include_prior_tests: bool
) -> tuple[Checkpoint, ...]:
    prior = problem.prior_checkpoints(checkpoint) if include_prior_tests else ()
    return (*prior, checkpoint)


def stage_workspace(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    include_prior_tests: bool,
    submission: Path,
    root: Path,
    exclude: Path | None = None,
) -> Workspace:
    """Fill the empty folder `root`. Only reads from `submission` and the problem.

    `exclude` is a folder inside the submission that is not part of it (the output folder).
    """
    if not submission.is_dir():
        raise UsageError(f"{submission}: submission folder does not exist")
    checkpoints = tested_checkpoints(problem, checkpoint, include_prior_tests)
    for tested in checkpoints:
        if not (problem.tests_dir / tested.test_file).is_file():
            raise ProblemError(
                problem.tests_dir / tested.test_file,
                None,
                f"missing (the tests of checkpoint {tested.name!r})",
            )

    root.mkdir(parents=True, exist_ok=True)
    warnings = _copy_submission(submission, root, exclude)
    _copy_tests(problem, {c.test_file for c in checkpoints}, root / TESTS_DIR)
    _materialize_assets(problem, root)
    (root / PYTEST_INI).write_text(render_pytest_ini(problem), encoding="utf-8")
    (root / REPORTS_DIR).mkdir()
    return Workspace(root=root, tested_checkpoints=checkpoints, warnings=tuple(warnings))


def render_pytest_ini(problem: Problem) -> str:
    # Only the problem's conftest files count: one in the workspace root would be the
    # submission's, and could rewrite every test's outcome.
    lines = ["[pytest]", f"addopts = --confcutdir={TESTS_DIR}", "markers ="]
    for marker in (*BUILTIN_MARKERS, *problem.markers):
        lines.append(f"    {marker.name}: {marker.description}")
    return "\n".join(lines) + "\n"


def _copy_submission(submission: Path, root: Path, exclude: Path | None) -> list[str]:
    warnings = []
    for name in DISCARDED_SUBMISSION_DIRS:
        if (submission / name).exists() or (submission / name).is_symlink():
            warnings.append(
                f"the submission's {name}/ folder was discarded: the problem's tests and this "
                f"run's reports are used instead"
            )
    for entry in sorted(os.scandir(submission), key=lambda e: e.name):
        if entry.name in DISCARDED_SUBMISSION_DIRS or Path(entry.path) == exclude:
            continue
        _copy_entry(Path(entry.path), root / entry.name)
    return warnings


def _copy_entry(source: Path, target: Path) -> None:
    """Copy without following symlinks, skipping VCS folders, caches, virtualenvs and specials."""
    mode = source.lstat().st_mode
    if source.name in SKIPPED_NAMES:
        return
    if stat.S_ISLNK(mode):
        target.symlink_to(os.readlink(source))
    elif stat.S_ISDIR(mode):
        if (source / "pyvenv.cfg").is_file():
            return
        target.mkdir()
        for entry in os.scandir(source):
            _copy_entry(Path(entry.path), target / entry.name)
    elif stat.S_ISREG(mode):
        shutil.copy2(source, target, follow_symlinks=False)


def _copy_tests(problem: Problem, test_files: set[str], target: Path) -> None:
    target.mkdir()
    for entry in sorted(os.scandir(problem.tests_dir), key=lambda e: e.name):
        is_test_file = entry.name.startswith("test_") and entry.name.endswith(".py")
        if is_test_file and entry.name not in test_files:
            continue
        _copy_entry(Path(entry.path), target / entry.name)


def _materialize_assets(problem: Problem, root: Path) -> None:
    assets_root = root / ASSETS_DIR
    for asset in problem.static_assets:
        target = assets_root / asset.save_path
        if target.exists():
            raise ProblemError(
                problem.root / "config.yaml",
                f"static_assets.{asset.name}",
                f"{ASSETS_DIR}/{asset.save_path} is already taken",
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        if asset.source.is_dir():
            shutil.copytree(
                asset.source, target, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED_NAMES)
            )
        else:
            shutil.copy2(asset.source, target)
