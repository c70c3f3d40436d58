"""Stage the folder the tests run in: submission, selected tests, assets, pytest.ini, .scbench/."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from scbench_ci.errors import ProblemError, UsageError
from scbench_ci.problem import BUILTIN_MARKERS, TESTS_DIR, Checkpoint, Problem
from scbench_ci.pytest_runner import write_new

REPORTS_DIR = ".scbench"
ASSETS_DIR = f"{TESTS_DIR}/assets"
PYTEST_INI = "pytest.ini"
SKIPPED_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".venv", "venv"})
MAX_DEPTH = 100
"""Folders of the submission nested deeper are left out: nothing real is, and every tool that
walks a tree by recursion (tar, rmtree) stays well inside Python's limit."""
EVALUATOR_NAMES = (TESTS_DIR, REPORTS_DIR, PYTEST_INI)
"""The workspace's entries that only the evaluator makes: the submission's are discarded."""
_LISTED = 5


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
    write_new(root / PYTEST_INI, render_pytest_ini(problem).encode())
    (root / REPORTS_DIR).mkdir()
    return Workspace(root=root, tested_checkpoints=checkpoints, warnings=tuple(warnings))


def render_pytest_ini(problem: Problem) -> str:
    # Only the problem's conftest files count: one in the workspace root would be the
    # submission's, and could rewrite every test's outcome.
    lines = ["[pytest]", f"addopts = --confcutdir={TESTS_DIR}", "markers ="]
    for marker in (*BUILTIN_MARKERS, *problem.markers):
        lines.append(f"    {marker.name}: {marker.description}")
    return "\n".join(lines) + "\n"


@dataclass
class _LeftOut:
    """What of the submission (at `root`) was not copied, and why."""

    root: Path
    escaping: list[str] = field(default_factory=list)
    too_deep: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        said = (
            (self.escaping, "symlink(s) of the submission point outside it and were left out"),
            (
                self.too_deep,
                f"folder(s) of the submission lie deeper than {MAX_DEPTH} levels and were left out",
            ),
            (self.unreadable, "entries of the submission could not be copied and were left out"),
        )
        return [f"{len(names)} {what}: {_listed(names)}" for names, what in said if names]


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return ", ".join(names[:_LISTED]) + more


def _copy_submission(submission: Path, root: Path, exclude: Path | None) -> list[str]:
    submission = Path(os.path.realpath(submission))
    warnings = []
    for name in EVALUATOR_NAMES:
        if os.path.lexists(submission / name):
            warnings.append(
                f"the submission's {name} was discarded: the evaluator makes its own (the "
                "problem's tests, the run's settings and reports)"
            )
    left_out = _LeftOut(submission)
    for entry in sorted(os.scandir(submission), key=lambda e: e.name):
        if entry.name in EVALUATOR_NAMES or Path(entry.path) == exclude:
            continue
        _copy_entry(Path(entry.path), root / entry.name, left_out)
    return warnings + left_out.warnings()


def _copy_entry(source: Path, target: Path, left_out: _LeftOut | None = None) -> None:
    """Copy without following symlinks, skipping VCS folders, caches, virtualenvs and specials,
    at any depth.

    With `left_out` (copying the submission), a symlink that leads out of it, a folder nested too
    deep and an entry that cannot be copied are left out and named there; without, an entry that
    cannot be copied raises."""
    pending = [(source, target, 1)]
    while pending:
        source, target, depth = pending.pop()
        if source.name in SKIPPED_NAMES:
            continue
        try:
            mode = source.lstat().st_mode
            if stat.S_ISLNK(mode):
                if left_out is not None and not _stays_inside(source, left_out.root):
                    left_out.escaping.append(str(source.relative_to(left_out.root)))
                    continue
                target.symlink_to(os.readlink(source))
            elif stat.S_ISDIR(mode):
                if (source / "pyvenv.cfg").is_file():
                    continue
                if left_out is not None and depth > MAX_DEPTH:
                    left_out.too_deep.append(str(source.relative_to(left_out.root)))
                    continue
                target.mkdir()
                entries = sorted(os.scandir(source), key=lambda e: e.name, reverse=True)
                pending.extend((Path(e.path), target / e.name, depth + 1) for e in entries)
            elif stat.S_ISREG(mode):
                shutil.copy2(source, target, follow_symlinks=False)
        except OSError as error:
            if left_out is None:
                raise
            reason = error.strerror or type(error).__name__
            left_out.unreadable.append(f"{source.relative_to(left_out.root)} ({reason})")


def _stays_inside(link: Path, root: Path) -> bool:
    """Whether the symlink leads to a place inside `root`, both as written (the container
    refuses an archive whose link climbs out of its folder) and as resolved on this machine."""
    destination = os.readlink(link)
    if os.path.isabs(destination):
        return False
    written = os.path.normpath(os.path.join(os.path.relpath(link.parent, root), destination))
    if written == os.pardir or written.startswith(os.pardir + os.sep):
        return False
    resolved = Path(os.path.realpath(link))
    return resolved == root or resolved.is_relative_to(root)


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
