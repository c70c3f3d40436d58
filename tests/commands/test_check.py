"""The `check` core: what it refuses before it runs anything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scbench_ci.cli.main import main
from testing.paths import CHECK_REPO_PROBLEMS


def test_a_folder_that_is_not_there_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(tmp_path / "nothing"), "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"scbench-ci: error: {tmp_path / 'nothing'}: no such folder\n"


def test_two_problems_of_one_name_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for parent in ("a", "b"):
        shutil.copytree(CHECK_REPO_PROBLEMS / "clean", tmp_path / parent / "clean")
    code = main(["check", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(tmp_path)])
    assert code == 2
    assert "have the same folder name" in capsys.readouterr().err
