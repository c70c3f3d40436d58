from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scbench_ci.check.changed import changed_problems
from scbench_ci.foundation.errors import UsageError
from testing.paths import CHECK_REPO_PROBLEMS

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=os.environ | GIT_ENV
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A problem repository: main has problems a, b and c; HEAD is a branch `pr` off it."""
    root = tmp_path / "repo"
    for name in ("a", "b", "c"):
        shutil.copytree(CHECK_REPO_PROBLEMS / "clean", root / "problems" / name)
    (root / "README.md").write_text("problems\n")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "problems")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def problems(repo: Path) -> list[Path]:
    return [repo / "problems" / name for name in ("a", "b", "c")]


def test_only_the_problem_the_branch_changes(repo: Path) -> None:
    (repo / "problems/b/tests/test_checkpoint_1.py").write_text("def test_x():\n    pass\n")
    (repo / "README.md").write_text("changed outside any problem\n")
    git(repo, "commit", "-q", "-am", "change b")
    assert changed_problems(problems(repo), "main") == [repo / "problems/b"]


def test_changes_on_the_base_since_the_branch_left_it_do_not_count(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    (repo / "problems/a/checkpoint_1.md").write_text("changed on main\n")
    git(repo, "commit", "-q", "-am", "change a on main")
    git(repo, "checkout", "-q", "pr")
    (repo / "problems/c/checkpoint_1.md").write_text("changed on the branch\n")
    git(repo, "commit", "-q", "-am", "change c")
    assert changed_problems(problems(repo), "main") == [repo / "problems/c"]


def test_uncommitted_untracked_and_deleted_files_count(repo: Path) -> None:
    assert changed_problems(problems(repo), "main") == []
    (repo / "problems/a/checkpoint_2.md").unlink()
    (repo / "problems/c/tests/new_helper.py").write_text("X = 1\n")
    (repo / "problems/b/run.log").write_text("ignored by .gitignore\n")
    assert changed_problems(problems(repo), "main") == [repo / "problems/a", repo / "problems/c"]
    git(repo, "add", "-A")
    assert changed_problems(problems(repo), "main") == [repo / "problems/a", repo / "problems/c"]


def test_a_file_moved_out_of_a_problem_counts_for_it(repo: Path) -> None:
    git(repo, "mv", "problems/a/checkpoint_2.md", "problems/b/notes.md")
    git(repo, "commit", "-q", "-m", "move")
    assert changed_problems(problems(repo), "main") == [repo / "problems/a", repo / "problems/b"]


def test_problems_are_given_back_as_given(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "problems/a/checkpoint_1.md").write_text("changed\n")
    monkeypatch.chdir(repo)
    assert changed_problems([Path("problems/b"), Path("problems/a")], "HEAD") == [
        Path("problems/a")
    ]


def test_a_problem_that_is_the_repository_itself(repo: Path) -> None:
    problem = repo / "problems/a"
    git(problem, "init", "-q", "-b", "main")
    git(problem, "add", "-A")
    git(problem, "commit", "-q", "-m", "one")
    assert changed_problems([problem], "HEAD") == []
    (problem / "checkpoint_1.md").write_text("changed\n")
    assert changed_problems([problem], "HEAD") == [problem]


@pytest.mark.parametrize("ref", ["no-such-branch", "HEAD~5", "", "--output=/tmp/x"])
def test_a_ref_that_is_no_commit(repo: Path, ref: str) -> None:
    with pytest.raises(UsageError, match=r"^--changed-since: .* (is no commit|is not a git ref)"):
        changed_problems(problems(repo), ref)


def test_a_folder_outside_any_repository(tmp_path: Path) -> None:
    folder = tmp_path / "alone"
    folder.mkdir()
    with pytest.raises(UsageError, match=r"^--changed-since: no git repository for .*alone: fatal"):
        changed_problems([folder], "main")


def test_a_ref_without_common_history(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "unrelated")
    git(repo, "commit", "-q", "-m", "no common history with main")
    with pytest.raises(UsageError, match=r"^--changed-since: .*no merge base.*fetch-depth: 0"):
        changed_problems(problems(repo), "main")
