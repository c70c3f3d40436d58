"""Tar archives for containers: a folder goes in as one, `.scbench/` comes back out as one.

Going in, only folders, regular files and symlinks (stored as links, never followed) are packed,
owned by the given ids. Coming out, the archive is the run's: only regular files and folders are
written, never outside the target, and never more than a fixed number of bytes and entries.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from scbench_ci.errors import InfrastructureError

MAX_EXTRACT_BYTES = 512 * 1024 * 1024
MAX_EXTRACT_ENTRIES = 10_000
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


def extract_tree(
    chunks: Iterable[bytes],
    root: str,
    target: Path,
    *,
    max_bytes: int = MAX_EXTRACT_BYTES,
    max_entries: int = MAX_EXTRACT_ENTRIES,
) -> list[str]:
    """Write the folders and regular files under `root` in the archive into the existing folder
    `target`; return the names of the entries left out (links, devices, unsafe names...)."""
    skipped = []
    size = 0
    stream = io.BufferedReader(_ChunkReader(chunks), _COPY_CHUNK)
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for count, member in enumerate(tar, start=1):
            size += member.size if member.isreg() else 0
            if count > max_entries or size > max_bytes:
                raise InfrastructureError(
                    f"the run left more than {max_entries} entries or {max_bytes} bytes "
                    f"in {root}/: not copied back"
                )
            if not _extract_member(tar, member, root, target):
                skipped.append(member.name)
    return skipped


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, root: str, target: Path) -> bool:
    destination = _destination(member.name, root, target)
    if destination is None:
        return False
    if member.isdir():
        return _make_directory(destination, target)
    if member.isreg():
        return _make_directory(destination.parent, target) and _write_file(tar, member, destination)
    return False


def _destination(name: str, root: str, target: Path) -> Path | None:
    """Where the entry goes under `target`; None when it is outside `root` or its name is unsafe."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] != root:
        return None
    return target.joinpath(*path.parts[1:])


def _make_directory(path: Path, target: Path) -> bool:
    """Create `path` and its parents up from `target`; False if a non-folder is in the way."""
    current = target
    for part in path.relative_to(target).parts:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            return False
        current.mkdir(mode=0o755, exist_ok=True)
    return True


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, destination: Path) -> bool:
    content = tar.extractfile(member)
    if content is None:
        return False
    try:
        # Exclusive creation: never through a symlink, never over an earlier entry.
        output = destination.open("xb")
    except FileExistsError:
        return False
    with content, output:
        while chunk := content.read(_COPY_CHUNK):
            output.write(chunk)
    return True


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
