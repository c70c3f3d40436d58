"""Tar archives of staged folders: a folder goes into a container, or to a Ray node, as one;
each report comes back out of a container as one.

Going in, only folders, regular files and symlinks (stored as links, never followed) are packed,
owned by the given ids. Coming out, the archive is the run's: only one regular file is taken from
it, into memory, up to a size.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from scbench_ci.trust.untrusted_tree import (
    MAX_DEPTH,
    Entry,
    Kind,
    UntrustedTree,
    UntrustedTreeError,
)

_COPY_CHUNK = 1024 * 1024
PAGE_BYTES = 4096
ENTRY_BYTES = 1024
"""What the kernel keeps for each file, folder or link of an in-memory folder besides its pages
(its inode and its name): an estimate above what it takes (about 0.9 KiB on Linux 6)."""
INLINE_LINK_CHARS = 128
"""A link's target up to this long is kept in its inode; a longer one takes a page."""


def in_memory_bytes(members: Iterable[tarfile.TarInfo]) -> int:
    """What the archive's entries take once unpacked into an in-memory folder (tmpfs): each
    file's pages, each long link's page, and ENTRY_BYTES for every entry."""
    total = 0
    for member in members:
        total += ENTRY_BYTES
        if member.isreg():
            total += -(-member.size // PAGE_BYTES) * PAGE_BYTES
        elif member.issym() and len(member.linkname.encode()) >= INLINE_LINK_CHARS:
            total += PAGE_BYTES
    return total


def open_writer(target: BinaryIO) -> tarfile.TarFile:
    """A tar writer in the format Docker reads (PAX: long names, any encoding)."""
    return tarfile.open(fileobj=target, mode="w", format=tarfile.PAX_FORMAT)


def add_tree(
    tar: tarfile.TarFile,
    source: Path,
    name: str,
    uid: int,
    gid: int,
    mode_mask: int = 0o777,
    *,
    readable: bool = False,
) -> None:
    """Add `source` as `name`, and everything under it, read through the guarded tree reader;
    sockets, fifos and devices are left out.

    `mode_mask` takes permission bits away (0o755: nobody but the owner may write); `readable`
    makes every file readable and every folder listable by all."""
    with UntrustedTree.opened(source.parent) as parent:
        top = parent.entry(source.name)
        if top is None:
            return
        if top.kind is Kind.FILE:
            with parent.file_content(source.name) as (content, size):
                _add_entry(tar, top, name, uid, gid, mode_mask, readable, content, size)
            return
        _add_entry(tar, top, name, uid, gid, mode_mask, readable)
        if top.kind is not Kind.FOLDER:
            return
        for entry in parent.walk(source.name):
            if entry.too_deep:
                raise UntrustedTreeError(entry.path, f"lies deeper than {MAX_DEPTH} folders")
            member = f"{name}/{entry.path.relative_to(source.name)}"
            if entry.kind is Kind.FILE:
                with entry.content() as (content, size):
                    _add_entry(tar, entry, member, uid, gid, mode_mask, readable, content, size)
            else:
                _add_entry(tar, entry, member, uid, gid, mode_mask, readable)


def _add_entry(
    tar: tarfile.TarFile,
    entry: Entry,
    name: str,
    uid: int,
    gid: int,
    mode_mask: int,
    readable: bool,
    content: BinaryIO | None = None,
    size: int = 0,
) -> None:
    # Built by hand rather than with gettarinfo: that one turns a second link to a file into a
    # hard-link entry and records the local owner.
    if entry.kind is Kind.OTHER:
        return
    info = tarfile.TarInfo(name)
    info.uid, info.gid = uid, gid
    info.mode = entry.mode & mode_mask
    if readable and entry.kind is Kind.FOLDER:
        info.mode |= 0o555
    elif readable:
        info.mode |= 0o444
    info.mtime = entry.mtime
    if entry.kind is Kind.LINK:
        info.type = tarfile.SYMTYPE
        info.linkname = entry.link or ""
    elif entry.kind is Kind.FOLDER:
        info.type = tarfile.DIRTYPE
    else:
        info.size = size
    tar.addfile(info, content)


def add_directory(tar: tarfile.TarFile, name: str, uid: int, gid: int, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.uid, info.gid, info.mode = uid, gid, mode
    tar.addfile(info)


def add_file(tar: tarfile.TarFile, name: str, data: bytes, uid: int, gid: int, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.uid, info.gid, info.mode, info.size = uid, gid, mode, len(data)
    tar.addfile(info, io.BytesIO(data))


def entries_of(
    chunks: Iterable[bytes], folder: str, names: tuple[str, ...], uid: int, gid: int, limit: int
) -> bytes | str:
    """From an archive of `folder` (as Docker gives one: the folder, then what is under it),
    the entries `names` and what is under them, as an archive of their own: one name after the
    other, each as the archive has it; owned by `uid`:`gid`, their modes, times and links kept.
    Only folders, regular files and symlinks; at most `limit` bytes of content; else why not."""
    found: dict[str, list[tuple[tarfile.TarInfo, bytes | None]]] = {name: [] for name in names}
    total = 0
    stream = io.BufferedReader(_ChunkReader(chunks), _COPY_CHUNK)
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                top, _, rest = member.name.partition("/")
                name = rest.split("/", 1)[0]
                if top != folder or name not in found:
                    continue
                if not (member.isreg() or member.isdir() or member.issym()):
                    return f"{member.name} is not a folder, a regular file or a symlink"
                total += member.size
                if total > limit:
                    return f"what is in {folder} is larger than {limit} bytes"
                content = tar.extractfile(member) if member.isreg() else None
                kept = tarfile.TarInfo(rest)
                kept.type, kept.mode, kept.mtime = member.type, member.mode, member.mtime
                kept.linkname, kept.size = member.linkname, member.size
                kept.uid, kept.gid = uid, gid
                found[name].append((kept, content.read() if content is not None else None))
    except tarfile.TarError as error:
        return f"{folder} could not be read ({error})"
    if missing := [name for name, members in found.items() if not members]:
        return f"{folder} has no {', '.join(missing)}"
    buffer = io.BytesIO()
    with open_writer(buffer) as tar:
        for members in found.values():
            for info, data in members:
                tar.addfile(info, None if data is None else io.BytesIO(data))
    return buffer.getvalue()


def add_archive(tar: tarfile.TarFile, archive: bytes) -> None:
    """Every entry of `archive` (one `entries_of` made) into `tar`, in its order."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as source:
        for member in source.getmembers():
            content = source.extractfile(member) if member.isreg() else None
            tar.addfile(member, content)


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
