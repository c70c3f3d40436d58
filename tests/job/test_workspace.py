import os
from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ProblemError, UsageError
from scbench_ci.foundation.scbench_runner import V1_0
from scbench_ci.job.workspace import MAX_DEPTH, render_pytest_ini, stage_workspace
from scbench_ci.problem.load import load_problem
from testing.problems import ProblemFolder


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _snapshot(root: Path) -> dict[str, tuple[int, float]]:
    return {str(p): (p.lstat().st_size, p.lstat().st_mtime) for p in root.rglob("*")}


@pytest.mark.parametrize(
    ("checkpoint", "include_prior", "expected"),
    [
        ("checkpoint_1", True, {"test_checkpoint_1.py"}),
        (
            "checkpoint_3",
            True,
            {"test_checkpoint_1.py", "test_checkpoint_2.py", "test_checkpoint_3.py"},
        ),
        ("checkpoint_3", False, {"test_checkpoint_3.py"}),
        ("checkpoint_2", True, {"test_checkpoint_1.py", "test_checkpoint_2.py"}),
    ],
)
def test_selects_tests_of_the_checkpoint_and_earlier_ones(
    problem_folder: ProblemFolder,
    submission: Path,
    tmp_path: Path,
    checkpoint: str,
    include_prior: bool,
    expected: set[str],
) -> None:
    problem_folder.write("tests/helpers.py", "X = 1\n")
    problem_folder.write("tests/data/case.json", "{}\n")
    problem = load_problem(problem_folder.root)
    workspace = stage_workspace(
        problem,
        problem.checkpoint(checkpoint),
        include_prior_tests=include_prior,
        submission=submission,
        root=tmp_path / "ws",
    )
    tests = {p.name for p in (workspace.root / ".evaluation_tests").glob("test_*.py")}
    assert tests == expected
    assert (workspace.root / ".evaluation_tests/conftest.py").is_file()
    assert (workspace.root / ".evaluation_tests/helpers.py").is_file()
    assert (workspace.root / ".evaluation_tests/data/case.json").is_file()
    assert [c.name for c in workspace.tested_checkpoints][-1] == checkpoint
    assert {f"test_{c.name}.py" for c in workspace.tested_checkpoints} == expected


def test_copies_submission_without_caches_and_never_writes_to_it(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    submission = tmp_path / "sub"
    for relative in (
        "main.py",
        "pkg/util.py",
        ".git/HEAD",
        "__pycache__/m.pyc",
        ".pytest_cache/v",
        ".venv/bin/python",
        "env/pyvenv.cfg",
        "pkg/__pycache__/x",
        "tests/test_fake.py",
        ".evaluation_tests/test_fake.py",
        ".scbench/results.json",
        "pytest.ini",
    ):
        (submission / relative).parent.mkdir(parents=True, exist_ok=True)
        (submission / relative).write_text("x")
    os.symlink("pkg/util.py", submission / "link")
    os.symlink("../pkg", submission / "pkg" / "up")
    os.symlink("/etc/hostname", submission / "absolute")
    os.symlink("../outside", submission / "climbs")
    before = _snapshot(submission)

    problem = load_problem(problem_folder.root)
    workspace = stage_workspace(
        problem,
        problem.checkpoint("checkpoint_1"),
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / "ws",
    )

    copied = _files(workspace.root)
    assert {"main.py", "pkg/util.py", "link"} <= copied
    assert not any(
        part in {".git", "__pycache__", ".pytest_cache", ".venv", "env"}
        for name in copied
        for part in Path(name).parts
    )
    # As in SCBench, the submission's own tests/ stays; the problem's tests are staged apart.
    assert "tests/test_fake.py" in copied
    assert ".evaluation_tests/test_fake.py" not in copied
    assert "results.json" not in {Path(p).name for p in copied}
    assert os.readlink(workspace.root / "link") == "pkg/util.py"  # kept as a link, not followed
    assert os.readlink(workspace.root / "pkg" / "up") == "../pkg"
    assert workspace.notices == (
        "the submission's .evaluation_tests was discarded: the evaluator makes its own (the "
        "problem's tests, the run's settings and reports)",
        "the submission's .scbench was discarded: the evaluator makes its own (the problem's "
        "tests, the run's settings and reports)",
        "the submission's pytest.ini was discarded: the evaluator makes its own (the problem's "
        "tests, the run's settings and reports)",
    )
    assert workspace.warnings == (
        "2 symlink(s) of the submission point outside it and were left out: absolute, climbs",
    )
    assert (workspace.root / "pytest.ini").read_text().startswith("[pytest]")
    assert _snapshot(submission) == before


def test_assets_and_pytest_ini(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    problem_folder.write("assets/corpus/a.txt", "alpha\n")
    problem_folder.write("schema.json", "{}\n")
    problem_folder.config["static_assets"] = {
        "corpus": {"path": "assets/corpus"},
        "schema": {"path": "schema.json", "save_path": "meta/schema.json"},
    }
    problem_folder.config["markers"] = {"slow": {"description": "slow\n  tests", "group": "Core"}}
    problem_folder.save()
    problem = load_problem(problem_folder.root)
    workspace = stage_workspace(
        problem,
        problem.checkpoint("checkpoint_1"),
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / "ws",
    )
    # As SCBench's runner puts them: under .evaluation_tests/assets, each by its name.
    assert (workspace.root / ".evaluation_tests/assets/corpus/a.txt").read_text() == "alpha\n"
    assert (workspace.root / ".evaluation_tests/assets/schema").is_file()
    assert (workspace.root / ".scbench").is_dir()
    assert not any((workspace.root / ".scbench").iterdir())
    assert (workspace.root / "pytest.ini").read_text() == render_pytest_ini(problem)
    assert render_pytest_ini(problem) == (
        "[pytest]\n"
        "addopts = --confcutdir=.evaluation_tests\n"
        "markers =\n"
        "    error: error-handling / edge-case tests\n"
        "    functionality: non-core / nice-to-have tests\n"
        "    regression: regression tests from prior checkpoints\n"
        "    slow: slow tests\n"
    )


def test_missing_test_file_of_a_selected_checkpoint(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    (problem_folder.root / "tests/test_checkpoint_1.py").unlink()
    problem = load_problem(problem_folder.root)
    with pytest.raises(ProblemError, match=r"tests/test_checkpoint_1.py: missing"):
        stage_workspace(
            problem,
            problem.checkpoint("checkpoint_2"),
            include_prior_tests=True,
            submission=submission,
            root=tmp_path / "ws",
        )
    # Without prior tests, checkpoint_2 does not need checkpoint_1's file.
    stage_workspace(
        problem,
        problem.checkpoint("checkpoint_2"),
        include_prior_tests=False,
        submission=submission,
        root=tmp_path / "ws2",
    )


def test_missing_submission(problem_folder: ProblemFolder, tmp_path: Path) -> None:
    problem = load_problem(problem_folder.root)
    with pytest.raises(UsageError, match="submission folder does not exist"):
        stage_workspace(
            problem,
            problem.checkpoint("checkpoint_1"),
            include_prior_tests=True,
            submission=tmp_path / "nope",
            root=tmp_path / "ws",
        )


def test_what_is_too_deep_or_cannot_be_copied_is_left_out_with_a_warning(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    submission = tmp_path / "s"
    submission.mkdir()
    (submission / "main.py").write_text("print('hi')\n")
    folder = os.open(submission, os.O_RDONLY)
    for _ in range(MAX_DEPTH + 50):  # deeper than the recursion limit allows for pathlib
        os.mkdir("d", dir_fd=folder)
        folder = os.open("d", os.O_RDONLY, dir_fd=folder)
    os.mkdir("leaf", dir_fd=folder)
    kept = submission.joinpath(*["d"] * MAX_DEPTH)
    # A path that fits under the submission's folder, but not under the (longer) workspace's.
    folder = os.open(submission, os.O_RDONLY)
    length = len(str(submission))
    while length < 3820:
        os.mkdir("x" * 199, dir_fd=folder)
        folder = os.open("x" * 199, os.O_RDONLY, dir_fd=folder)
        length += 200
    os.mkdir("y" * (4060 - length), dir_fd=folder)
    problem = load_problem(problem_folder.root)

    workspace = stage_workspace(
        problem,
        problem.checkpoint("checkpoint_1"),
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / ("w" * 80) / "workspace",
    )

    assert (workspace.root / kept.relative_to(submission)).is_dir()
    assert not (workspace.root / kept.relative_to(submission) / "d").exists()
    too_deep, unreadable = workspace.warnings
    assert too_deep == (
        f"1 folder(s) of the submission lie deeper than {MAX_DEPTH} levels and were left out: "
        f"{kept.relative_to(submission)}/d"
    )
    assert unreadable.startswith(
        "1 entries of the submission could not be copied and were left out: xxx"
    )
    assert unreadable.endswith("(File name too long)")


def test_as_scbench_s_snapshot_copies_it_files_only_without_what_its_globs_match(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    """`--scbench 1.0`: SCBench 1.0's snapshot (`SnapshotConfig.ignore_globs`, fnmatch on the
    relative path, whose `*` matches `/` too) of the submission's regular files, each written anew
    with mode 0644; no link and no empty folder; nothing else left out (a `.git`, a nested
    `.venv`, a nested `node_modules` are copied as SCBench copies them), but the version control
    folders (a checkout's `.git` holds the workflow's token)."""
    submission = tmp_path / "sub"
    kept = (
        "main.py",
        "run.sh",
        "pkg/util.py",
        "pkg/.venv/lib/x.py",
        "pkg/node_modules/m.js",
        "pkg/__pycache__/notes.txt",
        "pkg/.claude/settings.json",
        "tests/test_fake.py",
        "tests/assetsy.txt",
    )
    left_out = (
        "__pycache__/m.txt",
        "pkg/__pycache__/x.cpython-312.pyc",
        "m.pyc",
        ".venv/bin/python",
        "venv/lib/y.py",
        ".ruff_cache/x",
        ".pytest_cache/v",
        ".mypy_cache/x",
        ".opencode/x",
        ".claude/x",
        "node_modules/a/b.js",
        "tests/assets/big.bin",
        ".evaluation_tests/test_fake.py",
        ".git/config",
        "pkg/.git/config",
    )
    for relative in (*kept, *left_out):
        (submission / relative).parent.mkdir(parents=True, exist_ok=True)
        (submission / relative).write_text("x")
    (submission / "run.sh").chmod(0o755)
    (submission / "empty").mkdir()
    os.symlink("pkg/util.py", submission / "link")
    before = _snapshot(submission)

    problem = load_problem(problem_folder.root)
    workspace = stage_workspace(
        problem,
        problem.checkpoint("checkpoint_1"),
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / "ws",
        ignores=V1_0.snapshot_ignores,
    )

    copied = _files(workspace.root) - {"pytest.ini"}
    assert {name for name in copied if not name.startswith(".evaluation_tests/")} == set(kept)
    assert not (workspace.root / "empty").exists() and not (workspace.root / "link").exists()
    for name in kept:
        assert (workspace.root / name).stat().st_mode & 0o777 == 0o644, name
    assert (workspace.root / "pkg").stat().st_mode & 0o777 == 0o755
    assert workspace.warnings == (
        "1 symlink(s) of the submission were left out, as SCBench's snapshot leaves out every "
        "link: link",
    )
    assert _snapshot(submission) == before


def test_as_scbench_s_snapshot_a_static_asset_s_place_is_left_out(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    """SCBench's `get_ignore_globs` adds each static asset's `save_path`."""
    problem_folder.write("data/words.txt", "x")
    problem_folder.write("data/corpus/a.txt", "x")
    problem_folder.config["static_assets"] = {
        "words": {"path": "data/words.txt", "save_path": "words.txt"},
        "corpus": {"path": "data/corpus", "save_path": "input/corpus"},
    }
    problem_folder.save()
    submission = tmp_path / "sub"
    for relative in ("words.txt", "input/corpus/a.txt", "input/other.txt", "main.py"):
        (submission / relative).parent.mkdir(parents=True, exist_ok=True)
        (submission / relative).write_text("x")
    problem = load_problem(problem_folder.root)
    workspace = stage_workspace(
        problem,
        problem.checkpoint("checkpoint_1"),
        include_prior_tests=True,
        submission=submission,
        root=tmp_path / "ws",
        ignores=V1_0.snapshot_ignores,
    )
    copied = {n for n in _files(workspace.root) if not n.startswith(".evaluation_tests/")}
    assert copied == {"main.py", "input/other.txt", "pytest.ini"}
