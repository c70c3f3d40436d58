"""Print a version's section of CHANGELOG.md: the notes of its GitHub release.

    python scripts/release_notes.py VERSION [CHANGELOG]

The section starts at its heading, `## <version>` (a date may follow: `## 1.2.0 - 2025-01-31`),
and ends at the next `## ` heading. Exits 1 when there is no such section or it is empty: before
tagging a release, its changes move from `## Unreleased` to a section of its own.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"


def release_notes(changelog: str, version: str) -> str | None:
    heading = re.compile(rf"^## v?{re.escape(version)}(?:[ \t].*)?$", re.MULTILINE)
    found = heading.search(changelog)
    if found is None:
        return None
    following = re.compile(r"^## ", re.MULTILINE).search(changelog, found.end())
    section = changelog[found.end() : following.start() if following else None].strip()
    return section or None


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: release_notes.py VERSION [CHANGELOG]", file=sys.stderr)
        return 2
    version = argv[0]
    path = Path(argv[1]) if len(argv) == 2 else CHANGELOG
    notes = release_notes(path.read_text(encoding="utf-8"), version)
    if notes is None:
        print(f"{path}: no section `## {version}` with its changes", file=sys.stderr)
        return 1
    print(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
