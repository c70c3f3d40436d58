"""Tar archives in (packing a workspace) and out (extracting a run's hostile `.scbench/`)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from scbench_ci.executors.archive import (
    ENTRY_BYTES,
    PAGE_BYTES,
    add_directory,
    add_tree,
    entries_of,
    in_memory_bytes,
    open_writer,
    read_member,
)


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


def test_read_member_takes_the_one_regular_file() -> None:
    archive = HostileTar().file("pytest-report.json", b'{"tests": []}')
    assert read_member(archive.chunks(), "pytest-report.json", 100) == b'{"tests": []}'


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (HostileTar(), "the archive is empty"),
        (HostileTar().folder("pytest-report.json"), "pytest-report.json is not a regular file"),
        (
            HostileTar().special("pytest-report.json", tarfile.SYMTYPE, "/etc/passwd"),
            "pytest-report.json is not a regular file",
        ),
        (
            HostileTar().special("pytest-report.json", tarfile.FIFOTYPE),
            "pytest-report.json is not a regular file",
        ),
        (
            HostileTar().file("../pytest-report.json", b"{}"),
            "pytest-report.json is not a regular file",
        ),
        (
            HostileTar().file("pytest-report.json", b"x" * 101),
            "pytest-report.json is larger than 100 bytes",
        ),
    ],
)
def test_read_member_refuses_anything_else(archive: HostileTar, reason: str) -> None:
    assert read_member(archive.chunks(), "pytest-report.json", 100) == reason


def test_read_member_stops_at_the_first_entry() -> None:
    """A folder of a million entries under the report's name is not read to its end."""

    def endless() -> Iterator[bytes]:
        yield from HostileTar().folder("pytest-report.json").chunks()
        raise AssertionError("read past the first entry")

    assert read_member(endless(), "pytest-report.json", 100) == (
        "pytest-report.json is not a regular file"
    )


def test_read_member_of_a_broken_archive_says_so() -> None:
    reason = read_member(iter([b"not a tar archive" * 40]), "pytest-report.json", 100)
    assert isinstance(reason, str) and reason.startswith("pytest-report.json could not be read")


def test_what_an_archive_takes_in_memory_once_unpacked(tmp_path: Path) -> None:
    """Each file's pages (a byte takes one, 4,097 two), a long link's page, and each entry's
    inode and name: what the container's in-memory folders hold, off its memory limit."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "empty").write_bytes(b"")
    (source / "one").write_bytes(b"x")
    (source / "two").write_bytes(b"x" * (PAGE_BYTES + 1))
    (source / "short").symlink_to("one")
    (source / "long").symlink_to("l" * 200)
    members = pack(source)  # also the folder itself and tmp/home
    assert len(members) == 7
    assert in_memory_bytes(members) == 7 * ENTRY_BYTES + 4 * PAGE_BYTES


def _as_docker_gives(*members: tuple[str, bytes | str | None, int]) -> list[bytes]:
    """An archive of a folder, in chunks: (name, content (str: a link's target, None: a
    folder), mode)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, content, mode in members:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime, info.uid, info.gid = mode, 1_700_000_000, 1000, 1000
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(content, str):
                info.type, info.linkname = tarfile.SYMTYPE, content
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    data = buffer.getvalue()
    return [data[i : i + 700] for i in range(0, len(data), 700)]


CACHED = _as_docker_gives(
    ("workspace", None, 0o755),
    ("workspace/.venv", None, 0o755),
    ("workspace/.venv/bin", None, 0o755),
    ("workspace/.venv/bin/python", "/usr/local/bin/python3", 0o777),
    ("workspace/README.md", b"", 0o644),
    ("workspace/pyproject.toml", b"[project]\n", 0o600),
    ("workspace/not-asked", b"x", 0o644),
)


def test_a_folders_entries_are_taken_as_named_with_their_modes_and_links() -> None:
    archive = entries_of(CACHED, "workspace", ("pyproject.toml", ".venv"), 2000, 3000, 1024)
    assert isinstance(archive, bytes)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = tar.getmembers()
        kept = [(m.name, m.type, oct(m.mode), m.linkname, m.uid, m.gid) for m in members]
        assert tar.extractfile("pyproject.toml").read() == b"[project]\n"  # type: ignore[union-attr]
    # The names' order, each one's entries as the archive had them; the owner given.
    assert kept == [
        ("pyproject.toml", tarfile.REGTYPE, "0o600", "", 2000, 3000),
        (".venv", tarfile.DIRTYPE, "0o755", "", 2000, 3000),
        (".venv/bin", tarfile.DIRTYPE, "0o755", "", 2000, 3000),
        (".venv/bin/python", tarfile.SYMTYPE, "0o777", "/usr/local/bin/python3", 2000, 3000),
    ]
    assert all(m.mtime == 1_700_000_000 for m in members)


def test_what_is_not_a_plain_entry_or_too_large_or_missing_is_not_taken() -> None:
    assert entries_of(CACHED, "workspace", ("README.md", "gone"), 1, 1, 1024) == (
        "workspace has no gone"
    )
    assert entries_of(CACHED, "workspace", ("pyproject.toml",), 1, 1, 4) == (
        "what is in workspace is larger than 4 bytes"
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind in (("workspace", tarfile.DIRTYPE), ("workspace/dev", tarfile.CHRTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            tar.addfile(info)
    refused = entries_of([buffer.getvalue()], "workspace", ("dev",), 1, 1, 1024)
    assert refused == "workspace/dev is not a folder, a regular file or a symlink"
    assert entries_of([b"not a tar"], "workspace", ("a",), 1, 1, 1024).startswith(
        "workspace could not be read"
    )
