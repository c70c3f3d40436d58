"""Tar archives for containers: a folder goes in as one, each report comes back out as one.

Going in, only folders, regular files and symlinks (stored as links, never followed) are packed,
owned by the given ids. Coming out, the archive is the run's: only one regular file is taken from
it, into memory, up to a size.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

_COPY_CHUNK = 1024 * 1024


def open_writer(target: BinaryIO) -> tarfile.TarFile:
    """A tar writer in the format Docker reads (PAX: long names, any encoding)."""
    return tarfile.open(fileobj=target, mode="w", format=tarfile.PAX_FORMAT)


def add_tree(
    tar: tarfile.TarFile, source: Path, name: str, uid: int, gid: int, mode_mask: int = 0o777
) -> None:
    """Add `source` as `name`, and everything under it; sockets, fifos and devices are left out.

    `mode_mask` takes permission bits away (0o755: nobody but the owner may write)."""
    info = _member(source, name, uid, gid)
    if info is None:
        return
    info.mode &= mode_mask
    if info.isreg():
        with source.open("rb") as content:
            tar.addfile(info, content)
        return
    tar.addfile(info)
    if info.isdir():
        for child in sorted(os.scandir(source), key=lambda entry: entry.name):
            add_tree(tar, Path(child.path), f"{name}/{child.name}", uid, gid, mode_mask)


def add_directory(tar: tarfile.TarFile, name: str, uid: int, gid: int, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.uid, info.gid, info.mode = uid, gid, mode
    tar.addfile(info)


def add_file(tar: tarfile.TarFile, name: str, data: bytes, uid: int, gid: int, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.uid, info.gid, info.mode, info.size = uid, gid, mode, len(data)
    tar.addfile(info, io.BytesIO(data))


def _member(path: Path, name: str, uid: int, gid: int) -> tarfile.TarInfo | None:
    # Built by hand rather than with gettarinfo: that one turns a second link to a file into a
    # hard-link entry and records the local owner.
    status = path.lstat()
    info = tarfile.TarInfo(name)
    info.uid, info.gid = uid, gid
    info.mode = stat.S_IMODE(status.st_mode) & 0o777
    info.mtime = int(status.st_mtime)
    if stat.S_ISLNK(status.st_mode):
        info.type = tarfile.SYMTYPE
        info.linkname = os.readlink(path)
    elif stat.S_ISDIR(status.st_mode):
        info.type = tarfile.DIRTYPE
    elif stat.S_ISREG(status.st_mode):
        info.size = status.st_size
    else:
        return None
    return info


def read_member(chunks: Iterable[bytes], name: str, max_bytes: int) -> bytes | str:
    """The content of the archive's first entry when it is a regular file called `name` of at
    most `max_bytes`; else why not. Nothing is written, and reading stops at that entry."""
    stream = io.BufferedReader(_ChunkReader(chunks), _COPY_CHUNK)
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            member = tar.next()
            if member is None:
                return "the archive is empty"
            if member.name != name or not member.isreg():
                return f"{name} is not a regular file"
            if member.size > max_bytes:
                return f"{name} is larger than {max_bytes} bytes"
            content = tar.extractfile(member)
            return content.read() if content is not None else f"{name} could not be read"
    except tarfile.TarError as error:
        return f"{name} could not be read ({error})"


class _ChunkReader(io.RawIOBase):
    """A file-like view of an iterable of byte strings (a streamed HTTP body)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size
