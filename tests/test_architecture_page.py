"""docs/architecture.md, the map at the door, names only paths that exist: each repository path it
gives (in backticks, or in its module map) is a file or folder of this checkout, a folder when it
ends in `/`."""

from __future__ import annotations

import re
from pathlib import Path

from testing.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "architecture.md"
FOLDERS = ("scbench_ci", "tests", "testing", "docs", "scripts", "benchmarks", "examples")
"""The repository's top-level folders a path on the page may start with."""
ROOT_FILES = (".importlinter", "action.yml", "CHANGELOG.md", "README.md", "SECURITY.md")
_PATH = re.compile(rf"(?:{'|'.join(FOLDERS)})/[\w./-]*")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def named_paths(text: str) -> set[str]:
    """Every repository path `text` names: a backticked word, or a word of a fenced block, that
    starts with one of FOLDERS or is one of ROOT_FILES."""
    words = re.findall(r"`([^`\s]+)`", _FENCE.sub("", text))
    words += [word for block in _FENCE.findall(text) for word in block.split()]
    return {word for word in words if _PATH.fullmatch(word) or word in ROOT_FILES}


def missing(paths: set[str], root: Path) -> list[str]:
    return sorted(
        path
        for path in paths
        if not ((root / path).is_dir() if path.endswith("/") else (root / path).is_file())
    )


def test_every_path_the_architecture_page_names_exists() -> None:
    paths = named_paths(PAGE.read_text())
    assert len(paths) > 50
    assert missing(paths, REPO_ROOT) == []


def test_a_path_that_disappeared_or_changed_kind_is_found(tmp_path: Path) -> None:
    (tmp_path / "scbench_ci" / "cli").mkdir(parents=True)
    (tmp_path / "scbench_ci" / "api.py").write_text("")
    text = (
        "`scbench_ci/cli/` and `scbench_ci/api.py`, `scbench_ci/options.py`, `scbench_ci/api.py/`"
        ", `results.json`, `--fail-on`\n"
        "```\nfront ends   scbench_ci/cli/   the CLI\n             scbench_ci/gone/  nothing\n```\n"
    )
    paths = named_paths(text)
    assert paths == {
        "scbench_ci/cli/",
        "scbench_ci/api.py",
        "scbench_ci/options.py",
        "scbench_ci/api.py/",
        "scbench_ci/gone/",
    }
    assert missing(paths, tmp_path) == [
        "scbench_ci/api.py/",
        "scbench_ci/gone/",
        "scbench_ci/options.py",
    ]
