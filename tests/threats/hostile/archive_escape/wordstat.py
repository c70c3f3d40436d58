"""The broken wordstat, after leaving links, a fifo and odd names in .scbench/ for the copy back."""

import os
import sys
from pathlib import Path

from wordstat_base import main

REPORTS = Path(__file__).resolve().parent / ".scbench"


def plant() -> None:
    links = {"escape": "/", "passwd": "/etc/passwd", "up": "../..", "results.json": "/etc/passwd"}
    for name, target in links.items():
        try:
            os.symlink(target, REPORTS / name)
        except OSError:
            pass
    try:
        os.mkfifo(REPORTS / "fifo")
    except OSError:
        pass
    deep = REPORTS.joinpath(*["d"] * 60)
    deep.mkdir(parents=True, exist_ok=True)
    (deep / "..\\..\\evil").write_text("x")
    (REPORTS / "name with\nnewline").write_text("x")


if __name__ == "__main__":
    plant()
    sys.exit(main())
