"""Files the evaluator writes where someone else may have been first, always created afresh; and
folders a run filled, removed whatever they hold."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from scbench_ci.pytest_runner import write_new


def replace_file(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `path` as a new file (`data` whole or in chunks): whatever is there (a symlink, a
    read-only file) is removed, never written through."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    write_new(path, data)


def remove_tree(path: Path) -> None:
    """Remove a folder the tests may have filled with anything: folders nested past Python's
    recursion limit or paths past PATH_MAX (where shutil.rmtree fails), folders without
    permissions. `chmod` and `rm` walk the tree without either limit."""
    for argv in (["chmod", "-R", "u+rwX", "--", str(path)], ["rm", "-rf", "--", str(path)]):
        subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, capture_output=True)


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new temporary folder, removed with `remove_tree` on the way out."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove_tree(path)
