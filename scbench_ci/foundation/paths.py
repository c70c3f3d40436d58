"""Path helpers every layer uses."""

from __future__ import annotations

import os
from pathlib import Path


def real_path(path: Path) -> Path:
    """`path.resolve()` without its RuntimeError on a symlink loop (before Python 3.13): the
    loop is left for the next look at the file to report."""
    return Path(os.path.realpath(path))
