"""What `--skip-existing` may reuse: only a job folder this user's key signed.

The fingerprint of a result (fingerprint.py) covers every input of its verdict, but anyone can
compute it, and an output folder may hold files that are not ours (a checked-out submission can
bring its own `.scbench/`). So each reusable result is signed, with HMAC-SHA256, together with its
fingerprint and every file of its job folder (result.json, the reports, the logs), by a key kept
outside every output folder: in the user's cache folder (`$XDG_CACHE_HOME/scbench-ci/`, else
`~/.cache/scbench-ci/`), made private (0700, the key 0600, created with O_EXCL, never read
through a link). A job folder without a valid signature is run again.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from scbench_ci.trust.output_folder import MISSING, file_digests, write_file

KEY_FILE = "reuse.key"
SIGNATURE_FILE = "result.sig"
"""In each signed job folder, beside the files it signs."""
_KEY_BYTES = 32
_MAX_FILES = 32
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CONTEXT = b"scbench-ci signed result 1\n"


@dataclass(frozen=True)
class Unsigned:
    """Why a job folder's result is not reused."""

    reason: str
    found: bool = True
    """Whether the folder holds any file (an earlier result) at all."""


def key_folder(env: Mapping[str, str] = os.environ) -> Path:
    cache_home = env.get("XDG_CACHE_HOME", "")
    base = Path(cache_home) if os.path.isabs(cache_home) else Path.home() / ".cache"
    return base / "scbench-ci"


def sign(root: Path, folder: str, fingerprint: str) -> Unsigned | None:
    """Sign the files of the job folder `root/folder` as the result of `fingerprint`."""
    key = reuse_key(key_folder())
    if isinstance(key, Unsigned):
        return key
    digests = file_digests(root, folder, _MAX_FILES)
    if isinstance(digests, str):
        return Unsigned(f"{folder}: {digests}")
    digests.pop(SIGNATURE_FILE, None)
    write_file(root, f"{folder}/{SIGNATURE_FILE}", _signature(key, fingerprint, digests).encode())
    return None


def check_signature(root: Path, folder: str, fingerprint: str) -> Unsigned | None:
    """None when `root/folder` holds exactly the files this user's key signed for
    `fingerprint`; else why not."""
    key = reuse_key(key_folder())
    if isinstance(key, Unsigned):
        return key
    digests = file_digests(root, folder, _MAX_FILES)
    if isinstance(digests, str):
        return Unsigned(f"its folder cannot be checked: {digests}", found=digests != MISSING)
    if not digests:
        return Unsigned("its folder is empty", found=False)
    if SIGNATURE_FILE not in digests:
        return Unsigned("it is not signed")
    signature = _read_signature(root / folder / SIGNATURE_FILE)
    del digests[SIGNATURE_FILE]
    expected = _signature(key, fingerprint, digests)
    if signature is None or not hmac.compare_digest(signature, expected.encode()):
        return Unsigned(
            "it was not signed with this user's key for these files and these inputs "
            "(submission, problem, settings)"
        )
    return None


def _signature(key: bytes, fingerprint: str, digests: Mapping[str, str]) -> str:
    message = _CONTEXT + fingerprint.encode() + b"\n"
    message += b"".join(
        name.encode("utf-8", "surrogateescape") + b"\0" + digest.encode() + b"\n"
        for name, digest in sorted(digests.items())
    )
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _read_signature(path: Path) -> bytes | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return None
        return stream.read(2 * hashlib.sha256().digest_size + 1)


@cache
def reuse_key(folder: Path) -> bytes | Unsigned:
    """This user's key in `folder`, made on first use; or why there is none to trust."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        descriptor = os.open(folder, _FOLDER)
    except OSError as error:
        return Unsigned(f"no key for signed results in {folder}: {error.strerror}")
    try:
        info = os.fstat(descriptor)
        # Made 0700; one made before by other tools may be readable (the key itself is 0600),
        # but no one else may write in it.
        if info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return Unsigned(f"{folder} is not this user's alone to write: its key is not used")
        return _read_key(descriptor, folder) or _new_key(descriptor, folder)
    finally:
        os.close(descriptor)


def _read_key(folder: int, where: Path) -> bytes | Unsigned | None:
    try:
        descriptor = os.open(KEY_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        return Unsigned(f"{where / KEY_FILE} cannot be read: {error.strerror}")
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(stream.fileno())
        key = stream.read(_KEY_BYTES + 1)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return Unsigned(f"{where / KEY_FILE} is not a file private to this user: not used")
    if len(key) != _KEY_BYTES:
        return Unsigned(f"{where / KEY_FILE} is not a key of {_KEY_BYTES} bytes: not used")
    return key


def _new_key(folder: int, where: Path) -> bytes | Unsigned:
    """Written under a fresh name, then linked into place: a run that makes its key at the same
    time gets one of the two, never half of one."""
    draft = f"{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        descriptor = os.open(draft, flags, 0o600, dir_fd=folder)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(os.urandom(_KEY_BYTES))
        try:
            os.link(draft, KEY_FILE, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except OSError as error:
            if error.errno != errno.EEXIST:
                raise
    except OSError as error:
        return Unsigned(f"no key for signed results in {where}: {error.strerror}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(draft, dir_fd=folder)
    return _read_key(folder, where) or Unsigned(f"{where / KEY_FILE} vanished")
