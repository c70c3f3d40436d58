"""The broken wordstat, after filling .scbench/ with more entries than a copy back would take."""

import sys
from pathlib import Path

from wordstat_base import main

REPORTS = Path(__file__).resolve().parent / ".scbench"


def fill() -> None:
    folder = REPORTS / "many"
    try:
        folder.mkdir()
    except FileExistsError:
        return
    for number in range(10_050):
        (folder / str(number)).touch()


if __name__ == "__main__":
    fill()
    sys.exit(main())
