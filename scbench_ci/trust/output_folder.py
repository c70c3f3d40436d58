"""The one way to write an output folder, for every command and both front ends.

Nothing that already sits in an output folder is trusted: an earlier run's files, a checked-out
submission's own `.scbench/`, links, fifos or folders someone planted. Every path below the
folder's root is walked one name at a time from the root's descriptor, never through a link
(`O_NOFOLLOW`); a name on the way that is not a folder is replaced by one, and a name the
evaluator writes is replaced whatever it is (a file, a folder, a link, a fifo, a read-only file),
never written through or opened for reading.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path, PurePath

from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.paths import real_path
from scbench_ci.trust.files import remove_tree

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_REMOVED_PREFIX = ".scbench-removed-"
MISSING = "it is not there"


def prepare_output(path: Path, untrusted: Mapping[Path, str] | None = None) -> Path:
    """Make the output folder `path` (a folder the user names; its parents are theirs to
    choose, links included) and give its real path. Refused: a link or a non-folder at `path`,
    and an output folder inside a tree that is not ours (`untrusted`: each tree's real path and
    what it is, e.g. "the submission"), whose files we would write among and later read."""
    if path.is_symlink():
        raise UsageError(f"--output: {path} is a symlink; give a plain folder")
    real = real_path(path)
    for tree, what in (untrusted or {}).items():
        if real == tree or real.is_relative_to(tree):
            raise UsageError(
                f"--output: {path} is inside {what} {tree}, whose files are not trusted; "
                "give an output folder outside it"
            )
    try:
        real.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--output: {path} is not a folder") from None
    except OSError as error:
        raise UsageError(f"--output: {path}: {error.strerror}") from None
    return real


def write_file(root: Path, relative: str | PurePath, data: bytes | Iterable[bytes]) -> Path:
    """Write `root/relative` as a new file with `data` (whole or in chunks), replacing whatever
    is there; the folders on the way are made, or replaced when they are not folders."""
    *folders, name = _parts(relative)
    with _opened(root, folders) as folder:
        _remove(folder, name, root.joinpath(*folders))
        try:
            descriptor = os.open(name, _NEW_FILE, 0o644, dir_fd=folder)
        except OSError as error:
            raise _unwritable(root / relative, error) from None
        with os.fdopen(descriptor, "wb") as output:
            for chunk in (data,) if isinstance(data, bytes) else data:
                output.write(chunk)
    return root / relative


def make_folder(root: Path, relative: str | PurePath) -> Path:
    """`root/relative` as a folder: kept when it is one, else made (replacing what is there)."""
    with _opened(root, _parts(relative)):
        pass
    return root / relative


def fresh_folder(root: Path, relative: str | PurePath) -> Path:
    """`root/relative` as a new, empty folder: whatever was there is removed."""
    *folders, name = _parts(relative)
    with _opened(root, folders) as folder:
        _remove(folder, name, root.joinpath(*folders))
        try:
            os.mkdir(name, 0o755, dir_fd=folder)
        except OSError as error:
            raise _unwritable(root / relative, error) from None
    return root / relative


def remove(root: Path, relative: str | PurePath) -> None:
    """Remove whatever is at `root/relative` (nothing when the folders on the way are not
    there)."""
    *folders, name = _parts(relative)
    with contextlib.suppress(FileNotFoundError), _opened(root, folders, make=False) as folder:
        _remove(folder, name, root.joinpath(*folders))


def file_digests(root: Path, relative: str | PurePath, limit: int) -> dict[str, str] | str:
    """The SHA-256 of each file in the folder `root/relative` and in its sub-folders (SCBench's
    `evaluation/`), by path; or why there are none: the folder is not there, or holds something
    other than regular files and folders (links, fifos), folders deeper than FOLDER_DEPTH, or
    more than `limit` entries. Nothing is followed, nothing blocks."""
    try:
        with _opened(root, _parts(relative), make=False) as folder:
            digests: dict[str, str] = {}
            _digest_folder(folder, "", FOLDER_DEPTH, limit, digests)
            return dict(sorted(digests.items()))
    except _TooMany:
        return f"it holds more than {limit} entries"
    except FileNotFoundError:
        return MISSING
    except _NotRegular as error:
        return f"{error} is not a regular file"
    except (UsageError, OSError) as error:
        return f"it cannot be read ({error})"


FOLDER_DEPTH = 1
"""How deep a job folder's sub-folders go: one level (`evaluation/`)."""


class _NotRegular(Exception):
    pass


class _TooMany(Exception):
    pass


def _digest_folder(
    folder: int, prefix: str, depth: int, limit: int, digests: dict[str, str]
) -> None:
    for name in sorted(os.listdir(folder)):
        if len(digests) >= limit:
            raise _TooMany
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode) and depth > 0:
            inner = os.open(name, _FOLDER, dir_fd=folder)
            try:
                _digest_folder(inner, f"{prefix}{name}/", depth - 1, limit, digests)
            finally:
                os.close(inner)
        elif stat.S_ISDIR(info.st_mode):
            raise _NotRegular(f"{prefix}{name}")
        else:
            digests[f"{prefix}{name}"] = _digest(folder, name)


def _digest(folder: int, name: str) -> str:
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO):
            raise _NotRegular(name) from None
        raise
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise _NotRegular(name)
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _parts(relative: str | PurePath) -> list[str]:
    parts = list(PurePath(relative).parts)
    if not parts or PurePath(relative).is_absolute() or ".." in parts:
        raise ValueError(f"not a path inside the output folder: {relative}")
    return parts


@contextlib.contextmanager
def _opened(root: Path, folders: list[str], make: bool = True) -> Iterator[int]:
    """The descriptor of `root/folders...`, each name opened without following a link; with
    `make`, the root is made if missing, and a missing name below it is made a folder and one
    that is not a folder is replaced by one."""
    try:
        if make:  # the root and its parents are the caller's to choose
            root.mkdir(parents=True, exist_ok=True)
        current = os.open(root, _FOLDER)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise UsageError(f"--output: {root} is not a plain folder ({error.strerror})") from None
    try:
        for depth, name in enumerate(folders):
            place = root.joinpath(*folders[: depth + 1])
            following = _enter(current, name, place, make)
            os.close(current)
            current = following
        yield current
    finally:
        os.close(current)


def _enter(parent: int, name: str, place: Path, make: bool) -> int:
    for _ in range(3):  # another job may make or replace the same folder at once
        try:
            descriptor = os.open(name, _FOLDER, dir_fd=parent)
        except FileNotFoundError:
            if not make:
                raise
            with contextlib.suppress(FileExistsError):
                _try(place, lambda: os.mkdir(name, 0o755, dir_fd=parent))
            continue
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR) or not make:
                raise _unwritable(place, error) from None
            _remove(parent, name, place.parent)
            continue
        _writable(descriptor, place)
        return descriptor
    raise UsageError(f"--output: {place} keeps changing; is another run writing there?")


def _writable(descriptor: int, place: Path) -> None:
    """A folder of ours left without write permission (a test's) is given it back."""
    info = os.fstat(descriptor)
    if info.st_uid == os.geteuid() and info.st_mode & 0o700 != 0o700:
        _try(place, lambda: os.fchmod(descriptor, stat.S_IMODE(info.st_mode) | 0o700))


def _remove(folder: int, name: str, where: Path) -> None:
    """Remove `name` from the open `folder` (at `where`), whatever it is; a folder is first
    moved aside under a fresh name, so nothing in it is reached through a name someone else
    made."""
    try:
        os.unlink(name, dir_fd=folder)
        return
    except FileNotFoundError:
        return
    except IsADirectoryError:
        pass
    except OSError as error:
        raise _unwritable(where / name, error) from None
    aside = f"{_REMOVED_PREFIX}{secrets.token_hex(8)}"
    try:
        os.rename(name, aside, src_dir_fd=folder, dst_dir_fd=folder)
    except FileNotFoundError:
        return
    except OSError as error:
        raise _unwritable(where / name, error) from None
    remove_tree(where / aside)


def _try(place: Path, action: Callable[[], None]) -> None:
    try:
        action()
    except FileExistsError:
        raise
    except OSError as error:
        raise _unwritable(place, error) from None


def _unwritable(place: Path | str, error: OSError) -> UsageError:
    return UsageError(f"--output: cannot write {place}: {error.strerror}")
