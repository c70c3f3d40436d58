"""The one guarded reader of untrusted trees: links never followed, regular files only, caps."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from scbench_ci.trust.files import remove_tree
from scbench_ci.trust.untrusted_tree import (
    Kind,
    Limits,
    TreeLimitError,
    UntrustedTree,
    UntrustedTreeError,
    copy_tree,
)
from testing.trees import nest


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "folder").mkdir(parents=True)
    (root / "folder/file.txt").write_text("inside")
    (tmp_path / "secret").write_text("GITHUB_TOKEN=ghs_x")
    (root / "out").symlink_to(tmp_path / "secret")
    (root / "folder/up").symlink_to("../folder/file.txt")
    (root / "linked_folder").symlink_to(root / "folder")
    os.mkfifo(root / "fifo")
    return root


def test_files_are_read_only_when_regular_and_never_through_a_link(tree: Path) -> None:
    with UntrustedTree.opened(tree) as opened:
        assert opened.read_file("folder/file.txt") == b"inside"
        for relative, reason, named in (
            ("out", "symlink", "out"),
            ("linked_folder/file.txt", "symlink", "linked_folder"),  # a link on the way
            ("fifo", "not a regular file", "fifo"),  # at once, never waiting for a writer
            ("folder", "folder", "folder"),
            ("missing", "does not exist", "missing"),
        ):
            with pytest.raises(UntrustedTreeError, match=reason) as raised:
                opened.read_file(relative)
            assert raised.value.relative == PurePosixPath(named)
        assert opened.kind("out") is Kind.LINK
        assert opened.kind("fifo") is Kind.OTHER


def test_a_file_past_its_cap_is_refused(tree: Path) -> None:
    with (
        UntrustedTree.opened(tree) as opened,
        pytest.raises(UntrustedTreeError, match="larger than 3 bytes"),
    ):
        opened.read_file("folder/file.txt", max_bytes=3)


@pytest.mark.slow
def test_a_walk_has_no_recursion_and_stops_at_its_caps(tmp_path: Path) -> None:
    nest(tmp_path, 5000)
    try:
        with UntrustedTree.opened(tmp_path) as opened:
            entries = list(opened.walk(limits=Limits(depth=100)))
    finally:
        remove_tree(tmp_path / "d")  # past what pytest's own clean-up can remove
    # 100 folders entered, the 101st named as too deep and not entered.
    assert len(entries) == 101
    assert entries[-1].too_deep and entries[-1].depth == 101
    many = tmp_path / "many"
    many.mkdir()
    for index in range(20):
        (many / str(index)).touch()
    with UntrustedTree.opened(many) as opened, pytest.raises(TreeLimitError):
        list(opened.walk(limits=Limits(entries=10)))


def test_a_copy_keeps_links_that_stay_inside_and_names_what_it_left_out(
    tree: Path, tmp_path: Path
) -> None:
    target = tmp_path / "copy"
    with UntrustedTree.opened(tree) as opened:
        report = copy_tree(opened, "", target)
    assert (target / "folder/file.txt").read_text() == "inside"
    assert os.readlink(target / "folder/up") == "../folder/file.txt"
    assert not (target / "out").exists() and not (target / "out").is_symlink()
    assert PurePosixPath("out") in report.escaping
    assert not (target / "fifo").exists()
    assert "secret" not in "".join(str(problem) for problem in report.problems())
