"""Every listing of containers takes a container removed while it is listed in its stride.

The Docker SDK's `containers.list()` lists, then inspects each container found: one removed in
between (another run ending, side by side on the daemon) raises NotFound for the whole list unless
`ignore_removed=True`. A cancel stopped that way kills none of the rest; a test's check of what a
run left errors (seen: test_pool's Ctrl-C test, beside three other workers' runs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from testing.paths import REPO_ROOT

FOLDERS = ("scbench_ci", "testing", "tests", "benchmarks", "scripts")


def container_listings(folder: Path) -> Iterator[tuple[Path, ast.Call]]:
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "list"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "containers"
            ):
                yield path, node


def takes_removed_containers(call: ast.Call) -> bool:
    return any(
        keyword.arg in ("ignore_removed", "sparse")
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
        for keyword in call.keywords
    )


def test_every_container_listing_ignores_containers_removed_meanwhile() -> None:
    found = [
        (path, call) for folder in FOLDERS for path, call in container_listings(REPO_ROOT / folder)
    ]
    assert len(found) >= 9, "the scan no longer finds the listings it was written for"
    unguarded = [
        f"{path.relative_to(REPO_ROOT)}:{call.lineno}"
        for path, call in found
        if not takes_removed_containers(call)
    ]
    assert unguarded == []
