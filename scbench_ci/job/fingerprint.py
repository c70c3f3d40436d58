"""What `--skip-existing` compares: a hash of a staged workspace and of everything else a run uses.

The staged workspace holds the submission's files as they will be tested, the problem's selected
tests, its assets and the generated pytest.ini, so hashing it covers the problem's files and the
submission's together. It is the evaluator's own copy: links are hashed as links, never followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

_CHUNK = 1 << 20


def fingerprint(workspace: Path, settings: Mapping[str, object]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    pending = [""]
    while pending:
        relative = pending.pop()
        folder = workspace / relative
        for name in sorted(os.listdir(folder)):
            entry = f"{relative}/{name}" if relative else name
            info = os.lstat(folder / name)
            if stat.S_ISDIR(info.st_mode):
                digest.update(b"D\0" + os.fsencode(entry) + b"\0")
                pending.append(entry)
            elif stat.S_ISLNK(info.st_mode):
                target = os.readlink(folder / name)
                digest.update(b"L\0" + os.fsencode(entry) + b"\0" + os.fsencode(target) + b"\0")
            elif stat.S_ISREG(info.st_mode):
                executable = b"x" if info.st_mode & 0o111 else b"-"
                digest.update(b"F\0" + os.fsencode(entry) + b"\0" + executable)
                digest.update(_file_digest(folder / name) + b"\0")
    return digest.hexdigest()


def _file_digest(path: Path) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(descriptor, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").digest()
