"""Which problems a change touches, by git: `check --changed-since REF`.

A PR check wants what the PR changes: the files that differ between HEAD and its merge base with
REF (`git diff REF...HEAD`, the diff GitHub shows for a PR), not what REF has gained since the
branch left it. Changes not committed yet (staged, unstaged, and untracked files git does not
ignore) count too: a local run before a commit checks what is about to be committed, and in CI
the checkout is clean, so they are none. A file deleted or renamed away counts for the problem it
was in.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.paths import real_path

SHALLOW_HINT = (
    "in a shallow clone, fetch the history it needs (actions/checkout with fetch-depth: 0)"
)


def changed_problems(problem_roots: Sequence[Path], since: str) -> list[Path]:
    """The problem folders, as given and in their order, holding a file changed since `since`
    (a branch, tag or commit). UsageError when a folder is not in a git repository or `since`
    is not a commit of it."""
    if not since or since.startswith("-"):
        raise UsageError(f"--changed-since: {since!r} is not a git ref")
    changed: dict[Path, list[PurePosixPath]] = {}
    selected = []
    for root in problem_roots:
        folder = real_path(root)
        top = _repository_root(folder)
        if top not in changed:
            changed[top] = _changed_files(top, since)
        inside = PurePosixPath(folder.relative_to(top).as_posix())
        if any(path == inside or inside in path.parents for path in changed[top]):
            selected.append(root)
    return selected


def _repository_root(folder: Path) -> Path:
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except UsageError as error:
        raise UsageError(f"--changed-since: no git repository for {folder}: {error}") from None
    return real_path(Path(top.strip()))


def _changed_files(top: Path, since: str) -> list[PurePosixPath]:
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{since}^{{commit}}")
    except UsageError:
        raise UsageError(
            f"--changed-since: {since!r} is no commit of the git repository {top} ({SHALLOW_HINT})"
        ) from None
    try:
        committed = _git(top, "diff", "--name-only", "--no-renames", "-z", f"{since}...HEAD")
    except UsageError as error:
        raise UsageError(f"--changed-since: {error} ({SHALLOW_HINT})") from None
    uncommitted = _git(top, "diff", "--name-only", "--no-renames", "-z", "HEAD")
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z")
    names = "\0".join((committed, uncommitted, untracked)).split("\0")
    return [PurePosixPath(name) for name in dict.fromkeys(names) if name]


def _git(folder: Path, *args: str) -> str:
    """git's output (paths as the file system has them); UsageError with its message when it
    fails."""
    try:
        run = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("--changed-since needs git, and git is not installed") from None
    if run.returncode != 0:
        lines = [line.strip() for line in os.fsdecode(run.stderr).splitlines() if line.strip()]
        raise UsageError(" ".join(lines) or f"git {args[0]} failed")
    return os.fsdecode(run.stdout)
