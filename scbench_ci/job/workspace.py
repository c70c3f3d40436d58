"""Stage the folder the tests run in: submission, selected tests, assets, pytest.ini, .scbench/."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

from scbench_ci.foundation.errors import ProblemError, UsageError
from scbench_ci.foundation.layout import (
    EVALUATOR_NAMES,
    PYTEST_INI,
    REPORTS_DIR,
    TESTS_DIR,
    WORKSPACE_TESTS_DIR,
)
from scbench_ci.foundation.paths import real_path
from scbench_ci.problem.model import BUILTIN_MARKERS, Checkpoint, Problem
from scbench_ci.standalone.pytest_runner import write_new
from scbench_ci.trust.terminal import shown_name
from scbench_ci.trust.untrusted_tree import (
    MAX_DEPTH,
    CopyReport,
    Entry,
    Kind,
    UntrustedTree,
    UntrustedTreeError,
    copy_tree,
)

ASSETS_DIR = f"{WORKSPACE_TESTS_DIR}/assets"
"""Where static assets land, each under its name, as SCBench's runner materializes them for the
tests (`Workspace.materialize_static_assets_for_tests`)."""
VCS_NAMES = frozenset({".git", ".hg", ".svn"})
"""Version control folders, left out however the submission is copied: a checkout's `.git`
holds the workflow's token (`actions/checkout`), which the submission's code could read."""
SKIPPED_NAMES = frozenset({*VCS_NAMES, "__pycache__", ".pytest_cache", ".venv", "venv"})
_LISTED = 5


@dataclass(frozen=True)
class Workspace:
    root: Path
    tested_checkpoints: tuple[Checkpoint, ...]
    """The checkpoints whose test file was copied, in order (the evaluated one last)."""
    warnings: tuple[str, ...]
    """What was left out of the submission, which may explain an outcome."""
    notices: tuple[str, ...]
    """What the evaluator did as it always does (the submission's own pytest.ini discarded)."""


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
    ignores: tuple[str, ...] = (),
) -> Workspace:
    """Fill the empty folder `root`. Only reads from `submission` and the problem.

    `exclude` is a folder inside the submission that is not part of it (the output folder).
    `ignores`: the submission is copied as SCBench's snapshot copies it
    (`ScbenchRunner.snapshot_ignores`); empty: as scbench-ci copied it before SCBench 1.0.
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

    root.parent.mkdir(parents=True, exist_ok=True)
    if ignores:
        ignores = (*ignores, *_asset_ignores(problem))
    notices, warnings = _copy_submission(submission, root, exclude, problem.root, ignores)
    _copy_tests(problem, {c.test_file for c in checkpoints}, root / WORKSPACE_TESTS_DIR)
    _materialize_assets(problem, root)
    write_new(root / PYTEST_INI, render_pytest_ini(problem).encode())
    (root / REPORTS_DIR).mkdir()
    return Workspace(
        root=root, tested_checkpoints=checkpoints, warnings=tuple(warnings), notices=notices
    )


def render_pytest_ini(problem: Problem) -> str:
    # Only the problem's conftest files count: one in the workspace root would be the
    # submission's, and could rewrite every test's outcome.
    lines = ["[pytest]", f"addopts = --confcutdir={WORKSPACE_TESTS_DIR}"]
    lines.append("markers =")
    for marker in (*BUILTIN_MARKERS, *problem.markers):
        lines.append(f"    {marker.name}: {marker.description}")
    return "\n".join(lines) + "\n"


def _copy_submission(
    submission: Path, root: Path, exclude: Path | None, problem_root: Path, ignores: tuple[str, ...]
) -> tuple[tuple[str, ...], list[str]]:
    """The notices and the warnings of copying the submission into `root`: with `ignores`, as
    SCBench's snapshot copies it (its files only, what the patterns match left out, and its
    version control folders, VCS_NAMES, which SCBench copies), else as scbench-ci copied it
    before SCBench 1.0 (SKIPPED_NAMES, virtual environments left out)."""
    excluded = _below(exclude, submission) if exclude is not None else None
    with UntrustedTree.opened(submission, within=problem_root) as tree:
        notices = tuple(
            f"the submission's {name} was discarded: the evaluator makes its own (the "
            "problem's tests, the run's settings and reports)"
            for name in EVALUATOR_NAMES
            if tree.kind(name) is not None
        )

        def skip(entry: Entry) -> bool:
            if entry.depth == 1 and entry.path.name in EVALUATOR_NAMES:
                return True
            if entry.path == excluded or entry.kind is Kind.OTHER or entry.path.name in VCS_NAMES:
                return True
            return _ignored(entry, ignores) if ignores else _skipped(tree, entry)

        report = copy_tree(tree, "", root, skip=skip, files_only=bool(ignores))
    return notices, _left_out_warnings(report)


def _ignored(entry: Entry, patterns: tuple[str, ...]) -> bool:
    """SCBench's snapshot's `_matches_any`: fnmatch (whose `*` also matches `/`) of the path
    relative to the submission, as it is and with `./` before it; a folder's with `/` after it,
    and a folder matched is not entered."""
    path = entry.path.as_posix() + ("/" if entry.kind is Kind.FOLDER else "")
    return any(
        fnmatch.fnmatchcase(candidate, pattern)
        for pattern in patterns
        for candidate in (path, f"./{path}")
    )


def _asset_ignores(problem: Problem) -> tuple[str, ...]:
    """What SCBench's `get_ignore_globs` adds for the problem's static assets: each one's place
    in an agent's workspace (and what is below it, for a folder)."""
    patterns: list[str] = []
    for asset in problem.static_assets:
        place = asset.save_path.as_posix().rstrip("/")
        patterns += [place, f"{place}/*"] if asset.source.is_dir() else [place]
    return tuple(patterns)


def _below(path: Path, folder: Path) -> PurePosixPath | None:
    """`path` relative to `folder` when it is inside it (both resolved)."""
    path, folder = real_path(path), real_path(folder)
    return PurePosixPath(path.relative_to(folder)) if path.is_relative_to(folder) else None


def _skipped(tree: UntrustedTree, entry: Entry) -> bool:
    """VCS folders, caches, virtualenvs and special files, at any depth."""
    if entry.path.name in SKIPPED_NAMES or entry.kind is Kind.OTHER:
        return True
    return entry.kind is Kind.FOLDER and tree.kind(f"{entry.path}/pyvenv.cfg") is Kind.FILE


def _left_out_warnings(report: CopyReport) -> list[str]:
    said = (
        (report.escaping, "symlink(s) of the submission point outside it and were left out"),
        (
            report.links,
            "symlink(s) of the submission were left out, as SCBench's snapshot leaves out every "
            "link",
        ),
        (
            report.too_deep,
            f"folder(s) of the submission lie deeper than {MAX_DEPTH} levels and were left out",
        ),
        (
            [f"{shown_name(str(error.relative))} ({error.reason})" for error in report.unreadable],
            "entries of the submission could not be copied and were left out",
        ),
    )
    warnings = [f"{len(names)} {what}: {_listed(names)}" for names, what in said if names]
    if report.cut is not None:
        warnings.append(f"the submission was copied only in part: {report.cut.reason}")
    return warnings


def _listed(names: Sequence[object]) -> str:
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return ", ".join(shown_name(str(name)) for name in names[:_LISTED]) + more


def _copy_tests(problem: Problem, test_files: set[str], target: Path) -> None:
    def skip(entry: Entry) -> bool:
        name = entry.path.name
        is_test_file = entry.depth == 1 and name.startswith("test_") and name.endswith(".py")
        return (is_test_file and name not in test_files) or _skipped(tree, entry)

    with UntrustedTree.opened(problem.root) as tree:
        _complete(problem, copy_tree(tree, TESTS_DIR, target, skip=skip))


def _materialize_assets(problem: Problem, root: Path) -> None:
    assets_root = root / ASSETS_DIR
    with UntrustedTree.opened(problem.root) as tree:
        for asset in problem.static_assets:
            target = assets_root / asset.name
            if target.exists():
                raise ProblemError(
                    problem.root / "config.yaml",
                    f"static_assets.{asset.name}",
                    f"{ASSETS_DIR}/{asset.name} is already taken",
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            source = asset.source.relative_to(problem.root).as_posix()
            if tree.kind(source) is Kind.FOLDER:
                _complete(problem, copy_tree(tree, source, target, skip=partial(_skipped, tree)))
            else:
                try:
                    write_new(target, tree.read_file(source))
                except UntrustedTreeError as error:
                    raise ProblemError(problem.root / error.relative, None, error.reason) from None


def _complete(problem: Problem, report: CopyReport) -> None:
    """A problem's files are copied whole, or not at all: the first thing left out raises."""
    for error in report.problems():
        raise ProblemError(problem.root / error.relative, None, error.reason)
