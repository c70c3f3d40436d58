"""Folders a run filled, removed whatever they hold; scratch folders. (Files in an output folder are
written by output_folder.py.)"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


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
