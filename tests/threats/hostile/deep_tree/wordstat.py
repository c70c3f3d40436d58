"""The broken wordstat, after nesting folders 3,000 deep (past Python's recursion limit) with no
permissions, in the workspace and in its home, for whoever cleans up after it."""

import os
import sys
from pathlib import Path

from wordstat_base import main


def nest(where: str) -> None:
    try:
        folder = os.open(where, os.O_RDONLY)
        os.mkdir("deep", dir_fd=folder)
    except OSError:
        return  # an earlier run of the tests made it already
    for _ in range(3000):
        folder = os.open("deep", os.O_RDONLY, dir_fd=folder)
        os.mkdir("deep", mode=0o700, dir_fd=folder)
    os.chmod("deep", 0o000, dir_fd=folder)


if __name__ == "__main__":
    nest(str(Path(__file__).resolve().parent))
    nest(os.environ["HOME"])
    sys.exit(main())
