"""Tar archives in (packing a workspace) and out (extracting a run's hostile `.scbench/`)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from scbench_ci.archive import add_directory, add_tree, extract_tree, open_writer
from scbench_ci.errors import InfrastructureError


def pack(source: Path) -> list[tarfile.TarInfo]:
    buffer = io.BytesIO()
    with open_writer(buffer) as tar:
        add_tree(tar, source, "workspace", 1000, 1000)
        add_directory(tar, "tmp/home", 1000, 1000, 0o700)
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar:
        return tar.getmembers()


def test_pack_keeps_files_folders_and_symlinks_as_links(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "main.py").write_text("print('hi')\n")
    (source / "run.sh").write_text("#!/bin/sh\n")
    (source / "run.sh").chmod(0o755)
    (source / "link").symlink_to("/etc/passwd")
    (source / "pkg_link").symlink_to("pkg")
    os.mkfifo(source / "fifo")
    os.link(source / "run.sh", source / "hardlink.sh")

    members = {member.name: member for member in pack(source)}

    assert sorted(members) == [
        "tmp/home",
        "workspace",
        "workspace/hardlink.sh",
        "workspace/link",
        "workspace/pkg",
        "workspace/pkg/main.py",
        "workspace/pkg_link",
        "workspace/run.sh",
    ]
    assert all((m.uid, m.gid, m.uname, m.gname) == (1000, 1000, "", "") for m in members.values())
    assert members["workspace/link"].issym()
    assert members["workspace/link"].linkname == "/etc/passwd"
    assert members["workspace/pkg_link"].issym()
    assert members["workspace/hardlink.sh"].isreg()
    assert members["workspace/run.sh"].mode == 0o755
    assert members["workspace/pkg/main.py"].size == len("print('hi')\n")
    assert members["tmp/home"].isdir()
    assert members["tmp/home"].mode == 0o700


def test_pack_drops_setuid_bits(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "tool").write_text("")
    (source / "tool").chmod(0o4755)

    members = {member.name: member for member in pack(source)}

    assert members["workspace/tool"].mode == 0o755


class HostileTar:
    """Builds an archive entry by entry, whatever the entries say."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.tar = open_writer(self.buffer)

    def file(self, name: str, data: bytes = b"data") -> HostileTar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        self.tar.addfile(info, io.BytesIO(data))
        return self

    def folder(self, name: str) -> HostileTar:
        info = tarfile.TarInfo(name)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        self.tar.addfile(info)
        return self

    def special(self, name: str, kind: bytes, linkname: str = "") -> HostileTar:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = linkname
        self.tar.addfile(info)
        return self

    def chunks(self, size: int = 7) -> Iterator[bytes]:
        """The archive in small pieces, as a streamed HTTP body arrives."""
        self.tar.close()
        data = self.buffer.getvalue()
        for start in range(0, len(data), size):
            yield data[start : start + size]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    folder = tmp_path / "out" / ".scbench"
    folder.mkdir(parents=True)
    return folder


def files_under(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): "dir" if path.is_dir() else path.read_text()
        for path in sorted(folder.rglob("*"))
    }


def test_extract_writes_files_and_folders_under_the_root(target: Path) -> None:
    archive = (
        HostileTar()
        .folder(".scbench")
        .file(".scbench/pytest-report.json", b"{}")
        .folder(".scbench/sub")
        .file(".scbench/sub/deep/file.txt", b"deep")
    )

    skipped = extract_tree(archive.chunks(), ".scbench", target)

    assert skipped == []
    assert files_under(target) == {
        "pytest-report.json": "{}",
        "sub": "dir",
        "sub/deep": "dir",
        "sub/deep/file.txt": "deep",
    }


def test_extract_skips_links_devices_and_fifos(target: Path) -> None:
    archive = (
        HostileTar()
        .folder(".scbench")
        .special(".scbench/escape", tarfile.SYMTYPE, "/etc")
        .file(".scbench/escape/passwd", b"owned")
        .special(".scbench/hard", tarfile.LNKTYPE, "/etc/passwd")
        .special(".scbench/dev", tarfile.CHRTYPE)
        .special(".scbench/blk", tarfile.BLKTYPE)
        .special(".scbench/pipe", tarfile.FIFOTYPE)
        .file(".scbench/kept.json", b"ok")
    )

    skipped = extract_tree(archive.chunks(), ".scbench", target)

    assert skipped == [
        ".scbench/escape",
        ".scbench/hard",
        ".scbench/dev",
        ".scbench/blk",
        ".scbench/pipe",
    ]
    # The file under the skipped symlink's name lands as a plain file in a plain folder.
    assert files_under(target) == {"escape": "dir", "escape/passwd": "owned", "kept.json": "ok"}
    assert not any(path.is_symlink() for path in target.rglob("*"))


@pytest.mark.parametrize(
    "name",
    [
        "/etc/evil",
        "/.scbench/evil",
        ".scbench/../evil",
        ".scbench/sub/../../evil",
        "../evil",
        "other/evil",
        "evil",
    ],
)
def test_extract_skips_names_outside_the_root(target: Path, name: str) -> None:
    skipped = extract_tree(HostileTar().file(name).chunks(), ".scbench", target)

    assert skipped == [name]
    assert list(target.parent.rglob("*")) == [target]


def test_extract_never_writes_through_a_symlink_already_there(target: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (target / "link").symlink_to(outside)
    (target / "file_link").symlink_to(outside / "file")
    archive = HostileTar().file(".scbench/link/x").file(".scbench/file_link")

    skipped = extract_tree(archive.chunks(), ".scbench", target)

    assert skipped == [".scbench/link/x", ".scbench/file_link"]
    assert list(outside.iterdir()) == []


def test_extract_keeps_the_first_of_duplicate_or_clashing_entries(target: Path) -> None:
    archive = (
        HostileTar()
        .file(".scbench/a", b"first")
        .file(".scbench/a", b"second")
        .folder(".scbench/a")
        .file(".scbench/a/b")
    )

    skipped = extract_tree(archive.chunks(), ".scbench", target)

    assert skipped == [".scbench/a", ".scbench/a", ".scbench/a/b"]
    assert files_under(target) == {"a": "first"}


def test_extract_stops_past_the_byte_cap(target: Path) -> None:
    archive = HostileTar().file(".scbench/a", b"x" * 600).file(".scbench/b", b"x" * 600)

    with pytest.raises(InfrastructureError, match=r"more than .* 1000 bytes in \.scbench/"):
        extract_tree(archive.chunks(), ".scbench", target, max_bytes=1000)


def test_extract_stops_past_the_entry_cap(target: Path) -> None:
    archive = HostileTar()
    for number in range(5):
        archive.special(f".scbench/pipe{number}", tarfile.FIFOTYPE)

    with pytest.raises(InfrastructureError, match=r"more than 4 entries"):
        extract_tree(archive.chunks(), ".scbench", target, max_entries=4)


def test_extract_of_an_empty_archive_writes_nothing(target: Path) -> None:
    assert extract_tree(HostileTar().chunks(), ".scbench", target) == []
    assert list(target.iterdir()) == []
