"""The one way scbench-ci reads a tree it does not trust: a submission, a problem under review, the
evaluator's staged workspace (which holds both), a folder of reports beside a results.json.

Every path is opened one component at a time from the root folder's descriptor with `O_NOFOLLOW`
(`O_DIRECTORY` for folders), so no symlink is ever followed on the way or at the end: links are
reported as links (their target as written), files are read only when `fstat` says they are
regular, and each read is capped. Walks are iterative and stop at a depth and an entry count.
Every refusal is an `UntrustedTreeError` naming the path relative to the root, never an OSError.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from scbench_ci.foundation.errors import ScbenchError
from scbench_ci.foundation.paths import real_path
from scbench_ci.standalone.pytest_runner import write_new

MAX_DEPTH = 100
"""Folders nested deeper are not entered: nothing real is, and every tool that walks a tree by
recursion (tar, rmtree) stays well inside Python's limit."""
MAX_ENTRIES = 100_000
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1024 * 1024


class UntrustedTreeError(ScbenchError):
    """A path of an untrusted tree that cannot be read as asked: `relative` (to the tree's
    root) and why."""

    def __init__(self, relative: PurePosixPath | str, reason: str) -> None:
        super().__init__(f"{relative}: {reason}")
        self.relative = PurePosixPath(relative)
        self.reason = reason


class TreeLimitError(UntrustedTreeError):
    """A tree with more entries or bytes than a walk or a copy takes."""


class Kind(Enum):
    FILE = "file"
    FOLDER = "folder"
    LINK = "symlink"
    OTHER = "special file"
    """A fifo, socket or device: never read."""


@dataclass(frozen=True)
class Limits:
    depth: int = MAX_DEPTH
    """Of folders below the walked one (its entries are at depth 1)."""
    entries: int = MAX_ENTRIES
    file_bytes: int = MAX_FILE_BYTES
    total_bytes: int = MAX_TOTAL_BYTES


@dataclass(frozen=True)
class Entry:
    """One entry of a walk. `content` reads it only while the walk is at it."""

    path: PurePosixPath
    """Relative to the tree's root."""
    kind: Kind
    mode: int
    """Permission bits."""
    mtime: int
    depth: int
    link: str | None = None
    """A symlink's target, as written."""
    too_deep: bool = False
    """A folder past the depth limit: reported, not entered."""
    _dir_fd: int = field(default=-1, repr=False, compare=False)

    @contextlib.contextmanager
    def content(self, max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[BinaryIO, int]]:
        """The file's content and size (at most `max_bytes`), from the folder the walk is in."""
        with _open_regular(self._dir_fd, self.path.name, self.path, max_bytes) as opened:
            yield opened


class UntrustedTree:
    """A folder opened once; everything below it reached from its descriptor."""

    def __init__(self, root: Path, descriptor: int) -> None:
        self.root = root
        self._fd = descriptor

    @classmethod
    @contextlib.contextmanager
    def opened(cls, root: Path, *, within: Path | None = None) -> Iterator[UntrustedTree]:
        """`root`, a path the user gave (followed as given), or, `within` a folder the user gave,
        the part of it below `within` walked without following any link."""
        base, below = real_path(root), PurePosixPath()
        if within is not None:
            within = real_path(within)
            if root.is_relative_to(within):
                base, below = within, PurePosixPath(root.relative_to(within))
        try:
            descriptor = os.open(base, _FOLDER)
        except OSError as error:
            raise UntrustedTreeError(str(base), _reason(error, Kind.FOLDER)) from None
        try:
            if below.parts:
                inner = _open_folder(descriptor, below)
                os.close(descriptor)
                descriptor = inner
            yield cls(root, descriptor)
        finally:
            os.close(descriptor)

    def entry(self, relative: str) -> Entry | None:
        """What `relative` is (a link as a link), None when it is not there."""
        path = PurePosixPath(relative)
        try:
            folder = _open_folder(self._fd, path.parent)
        except UntrustedTreeError:
            return None
        try:
            return _entry(folder, path, len(path.parts), Limits(), keep_fd=False)
        except UntrustedTreeError:
            return None
        finally:
            os.close(folder)

    def kind(self, relative: str) -> Kind | None:
        entry = self.entry(relative)
        return entry.kind if entry is not None else None

    @contextlib.contextmanager
    def file_content(
        self, relative: str, max_bytes: int = MAX_FILE_BYTES
    ) -> Iterator[tuple[BinaryIO, int]]:
        """The regular file `relative` (at most `max_bytes`), and its size."""
        path = PurePosixPath(relative)
        folder = _open_folder(self._fd, path.parent)
        try:
            with _open_regular(folder, path.name, path, max_bytes) as opened:
                yield opened
        finally:
            os.close(folder)

    def read_file(self, relative: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        with self.file_content(relative, max_bytes) as (stream, _):
            data = stream.read(max_bytes + 1)  # a file that grew since it was opened
        if len(data) > max_bytes:
            raise UntrustedTreeError(relative, f"is larger than {max_bytes} bytes")
        return data

    def walk(
        self,
        relative: str = "",
        limits: Limits = Limits(),
        skip: Callable[[Entry], bool] = lambda entry: False,
    ) -> Iterator[Entry]:
        """Every entry below the folder `relative`, each folder just before what it holds, in name
        order. Links are not followed; a folder past `limits.depth` is yielded `too_deep` and not
        entered; what `skip` names is neither yielded nor entered. More than `limits.entries`
        entries raise TreeLimitError."""
        start = PurePosixPath(relative)
        frames: list[tuple[int, PurePosixPath, int, Iterator[str]]] = []
        try:
            seen = _enter(frames, _open_folder(self._fd, start), start, 0)
            while frames:
                folder, path, depth, pending = frames[-1]
                name = next(pending, None)
                if name is None:
                    frames.pop()
                    os.close(folder)
                    continue
                entry = _entry(folder, path / name, depth + 1, limits)
                if skip(entry):
                    continue
                yield entry
                if entry.kind is Kind.FOLDER and not entry.too_deep:
                    inner = _open_folder(folder, PurePosixPath(name), entry.path)
                    seen += _enter(frames, inner, entry.path, depth + 1)
                if seen > limits.entries:
                    raise TreeLimitError(start, f"holds more than {limits.entries} entries")
        finally:
            for folder, _, _, _ in frames:
                os.close(folder)


def _enter(
    frames: list[tuple[int, PurePosixPath, int, Iterator[str]]],
    folder: int,
    path: PurePosixPath,
    depth: int,
) -> int:
    """Push the opened `folder` (closed with the walk whatever happens) with its names sorted;
    how many there are."""
    frames.append((folder, path, depth, iter(())))
    try:
        names = sorted(os.listdir(folder))
    except OSError as error:
        raise UntrustedTreeError(path, _reason(error, Kind.FOLDER)) from None
    frames[-1] = (folder, path, depth, iter(names))
    return len(names)


def copy_tree(
    tree: UntrustedTree,
    relative: str,
    target: Path,
    *,
    skip: Callable[[Entry], bool] = lambda entry: False,
    limits: Limits = Limits(),
    files_only: bool = False,
) -> CopyReport:
    """Copy the folder `relative` into the folder `target` (made if missing, else empty):
    folders, regular files, and links that stay inside the tree's root (as links). What is not
    copied is in the report; what `skip` names is left out silently (a folder it names is not
    entered).

    `files_only`, as SCBench's snapshot copies a submission (an archive of its files, each
    written anew): only regular files, each with mode 0o644 and written now, in folders of mode
    0o755 made for them (a folder without files is not made); every link is left out, and listed
    in the report."""
    report = CopyReport()
    target.mkdir(exist_ok=True)
    start = PurePosixPath(relative)
    total = 0
    failed: list[PurePosixPath] = []
    try:
        for entry in tree.walk(relative, limits, skip):
            if failed and entry.path.is_relative_to(failed[-1]):
                continue
            destination = target / entry.path.relative_to(start)
            try:
                if entry.too_deep:
                    report.too_deep.append(entry.path)
                elif entry.kind is Kind.FOLDER:
                    if not files_only:
                        destination.mkdir(mode=entry.mode | 0o700)
                elif entry.kind is Kind.LINK:
                    assert entry.link is not None
                    if files_only:
                        report.links.append(entry.path)
                    elif stays_inside(tree, entry.path, entry.link):
                        destination.symlink_to(entry.link)
                    else:
                        report.escaping.append(entry.path)
                elif entry.kind is Kind.FILE and files_only:
                    _make_folders(target, destination.parent)
                    total += _copy_file(entry, destination, limits, total, report, _FILE_MODE)
                elif entry.kind is Kind.FILE:
                    total += _copy_file(entry, destination, limits, total, report)
            except OSError as error:  # the copy's side: a path too long for the target
                reason = error.strerror or type(error).__name__
                report.unreadable.append(UntrustedTreeError(entry.path, reason))
                failed.append(entry.path)
    except TreeLimitError as error:
        report.cut = error
    return report


@dataclass
class CopyReport:
    """What `copy_tree` left out, relative to the tree's root."""

    escaping: list[PurePosixPath] = field(default_factory=list)
    """Symlinks that lead out of the tree's root."""
    links: list[PurePosixPath] = field(default_factory=list)
    """Symlinks left out because only files were copied (`files_only`)."""
    too_deep: list[PurePosixPath] = field(default_factory=list)
    unreadable: list[UntrustedTreeError] = field(default_factory=list)
    cut: TreeLimitError | None = None
    """Why the copy stopped before the end (too many entries or bytes), if it did."""

    def problems(self) -> list[UntrustedTreeError]:
        """Each thing left out, as an error naming it."""
        return [
            *(UntrustedTreeError(path, LEADS_OUT) for path in self.escaping),
            *(UntrustedTreeError(path, TOO_DEEP) for path in self.too_deep),
            *self.unreadable,
            *([self.cut] if self.cut else []),
        ]


LEADS_OUT = "is a symlink that leads out of its folder: it is neither read nor copied"
TOO_DEEP = f"lies deeper than {MAX_DEPTH} folders: it is not read"


_FILE_MODE = 0o644
_FOLDER_MODE = 0o755
"""A file's and a folder's mode as a process with the usual umask (022) makes them."""


def _make_folders(target: Path, folder: Path) -> None:
    """`folder` and those between it and `target`, each of mode 0o755, where missing."""
    missing = []
    while folder != target and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        os.chmod(path, _FOLDER_MODE)


def _copy_file(
    entry: Entry,
    destination: Path,
    limits: Limits,
    total: int,
    report: CopyReport,
    mode: int | None = None,
) -> int:
    """Copy one file, with its mode and time, or with `mode` and written now; its size, 0 when
    it was left out."""
    try:
        with entry.content(limits.file_bytes) as (stream, size):
            if total + size > limits.total_bytes:
                raise TreeLimitError(entry.path, f"more than {limits.total_bytes} bytes in all")
            write_new(destination, iter(lambda: stream.read(_CHUNK), b""))
    except TreeLimitError:
        raise
    except UntrustedTreeError as error:
        report.unreadable.append(error)
        return 0
    if mode is not None:
        os.chmod(destination, mode)
        return size
    os.chmod(destination, entry.mode)
    os.utime(destination, (entry.mtime, entry.mtime))
    return size


def stays_inside(tree: UntrustedTree, link: PurePosixPath, target: str) -> bool:
    """Whether a symlink at `link` (relative to the tree's root) leads to a place inside the
    root, both as written (the container refuses an archive whose link climbs out of its folder)
    and as resolved on this machine. Only resolved, never opened."""
    if os.path.isabs(target):
        return False
    written = os.path.normpath(os.path.join(link.parent, target))
    if written == os.pardir or written.startswith(os.pardir + os.sep):
        return False
    root = real_path(tree.root)
    resolved = real_path(root / link)
    return resolved == root or resolved.is_relative_to(root)


def _entry(
    folder: int, path: PurePosixPath, depth: int, limits: Limits, keep_fd: bool = True
) -> Entry:
    try:
        status = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
    except OSError as error:
        raise UntrustedTreeError(path, _reason(error, Kind.FILE)) from None
    kind = _kind(status.st_mode)
    link = None
    if kind is Kind.LINK:
        try:
            link = os.readlink(path.name, dir_fd=folder)
        except OSError as error:
            raise UntrustedTreeError(path, _reason(error, Kind.LINK)) from None
    return Entry(
        path=path,
        kind=kind,
        mode=stat.S_IMODE(status.st_mode) & 0o777,
        mtime=int(status.st_mtime),
        depth=depth,
        link=link,
        too_deep=kind is Kind.FOLDER and depth > limits.depth,
        _dir_fd=folder if keep_fd else -1,
    )


def _kind(mode: int) -> Kind:
    if stat.S_ISLNK(mode):
        return Kind.LINK
    if stat.S_ISDIR(mode):
        return Kind.FOLDER
    if stat.S_ISREG(mode):
        return Kind.FILE
    return Kind.OTHER


def _open_folder(root: int, relative: PurePosixPath, shown: PurePosixPath | None = None) -> int:
    """A new descriptor of the folder `relative` below `root`, never through a link."""
    descriptor = os.dup(root)
    walked = PurePosixPath(shown.parent if shown is not None else "")
    for part in relative.parts:
        walked = walked / part
        try:
            if part in ("..", "/"):
                raise UntrustedTreeError(walked, "leaves the folder")
            inner = os.open(part, _FOLDER, dir_fd=descriptor)
        except OSError as error:
            if error.errno == errno.ENOTDIR and _is_link(descriptor, part):
                error.errno = errno.ELOOP
            raise UntrustedTreeError(walked, _reason(error, Kind.FOLDER)) from None
        finally:
            os.close(descriptor)
        descriptor = inner
    return descriptor


@contextlib.contextmanager
def _open_regular(
    folder: int, name: str, shown: PurePosixPath, max_bytes: int
) -> Iterator[tuple[BinaryIO, int]]:
    try:
        # O_NONBLOCK: a fifo opens at once (and is refused below) rather than waiting for a writer.
        descriptor = os.open(name, _FILE, dir_fd=folder)
    except OSError as error:
        raise UntrustedTreeError(shown, _reason(error, Kind.FILE)) from None
    if stat.S_ISDIR(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise UntrustedTreeError(shown, "is a folder, not a regular file")
    with os.fdopen(descriptor, "rb") as stream:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise UntrustedTreeError(shown, "is not a regular file")
        if status.st_size > max_bytes:
            raise UntrustedTreeError(shown, f"is larger than {max_bytes} bytes")
        yield stream, status.st_size


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _reason(error: OSError, wanted: Kind) -> str:
    if error.errno == errno.ELOOP:
        return "is a symlink (links are never followed)"
    if error.errno == errno.ENOENT:
        return "does not exist"
    if error.errno == errno.ENOTDIR:
        return "is not a folder" if wanted is Kind.FOLDER else "lies below something not a folder"
    if error.errno in (errno.ENXIO, errno.ENODEV):
        return "is not a regular file"
    return error.strerror or type(error).__name__
