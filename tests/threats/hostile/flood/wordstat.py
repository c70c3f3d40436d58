"""Floods once: a file as big as the disk allows, as many files as it allows, 30 MB of output and
a 5 MB error message; after that, the broken wordstat."""

import os
import sys
from pathlib import Path

from wordstat_base import main

HERE = Path(__file__).resolve().parent
CHUNK = b"x" * (1024 * 1024)


def flood() -> None:
    try:
        with open(HERE / "big.bin", "wb") as big:
            for _ in range(8 * 1024):  # up to 8 GiB
                big.write(CHUNK)
    except OSError:
        pass
    files = HERE / "many"
    files.mkdir()
    try:
        for number in range(3_000_000):
            (files / str(number)).touch()
    except OSError:
        pass
    for _ in range(30):
        sys.stdout.write("flood " * 174762 + "\n")
    raise SystemExit("<b>huge</b> " * 500_000)


if __name__ == "__main__":
    try:
        os.mkdir(HERE / ".flooded")
    except OSError:
        sys.exit(main())
    flood()
