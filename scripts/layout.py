"""Print the package's layout: modules per folder, the largest modules, and its import cycles.

    python scripts/layout.py [CHECKOUT]

CHECKOUT is a checkout of scbench-ci (default: the one this script is in), so the same figures
can be had for an older commit from a worktree of it. A module is a `.py` file (`__init__.py`
included), its lines as `wc -l` counts them. The cycles are the strongly connected components of
grimp's import graph (imports under TYPE_CHECKING count), once between modules and once between
the parts of each package (its child modules and sub-packages, each with everything under it),
as the `acyclic_siblings` contract in `.importlinter` sees them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp

PACKAGE = "scbench_ci"
LARGEST = 10


def module_lines(checkout: Path) -> dict[Path, int]:
    """Each module's path, relative to the checkout, and its line count."""
    return {
        path.relative_to(checkout): path.read_bytes().count(b"\n")
        for path in sorted((checkout / PACKAGE).rglob("*.py"))
    }


def folders(lines: Mapping[Path, int]) -> dict[Path, tuple[int, int]]:
    """Each folder's module count and total lines."""
    totals: dict[Path, tuple[int, int]] = {}
    for path, count in lines.items():
        modules, total = totals.get(path.parent, (0, 0))
        totals[path.parent] = (modules + 1, total + count)
    return dict(sorted(totals.items()))


def import_graph(checkout: Path) -> grimp.ImportGraph:
    """grimp's graph of the checkout's package (not of whichever copy is installed)."""
    sys.path.insert(0, str(checkout))
    spec = importlib.util.find_spec(PACKAGE)
    origin = Path(spec.origin).resolve() if spec and spec.origin else None
    if origin is None or not origin.is_relative_to(checkout / PACKAGE):
        raise SystemExit(f"layout: {PACKAGE} is not found in {checkout} (found: {origin})")
    return grimp.build_graph(PACKAGE, cache_dir=None)


def module_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }


def part_edges(edges: Mapping[str, set[str]], package: str) -> dict[str, set[str]]:
    """The imports between the parts of `package`: each part stands for everything under it."""
    prefix = f"{package}."
    depth = package.count(".") + 2

    def part(module: str) -> str | None:
        return ".".join(module.split(".")[:depth]) if module.startswith(prefix) else None

    parts: dict[str, set[str]] = defaultdict(set)
    for importer, imported in edges.items():
        source = part(importer)
        if source is None:
            continue
        parts[source].update(
            target for module in imported if (target := part(module)) not in (None, source)
        )
    return parts


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan's
    algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def packages(graph: grimp.ImportGraph) -> list[str]:
    """The package and each of its sub-packages."""
    return sorted(
        module for module in graph.modules if graph.find_children(module) or module == PACKAGE
    )


def commit(checkout: Path) -> str:
    described = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h, %cs"],
        capture_output=True,
        text=True,
        check=False,
    )
    return described.stdout.strip() if described.returncode == 0 else "not a git checkout"


def report(checkout: Path) -> str:
    lines = module_lines(checkout)
    graph = import_graph(checkout)
    edges = module_edges(graph)
    out = [f"{PACKAGE} in {checkout} ({commit(checkout)})", ""]

    out += ["Modules per folder (.py files, __init__.py included)", ""]
    out.append(f"  {'folder':<32} {'modules':>7} {'lines':>7}")
    for folder, (modules, total) in folders(lines).items():
        out.append(f"  {f'{folder}/':<32} {modules:>7} {total:>7}")
    out.append(f"  {'all':<32} {len(lines):>7} {sum(lines.values()):>7}")

    out += ["", f"The {LARGEST} largest modules (lines)", ""]
    largest = sorted(lines.items(), key=lambda item: (-item[1], str(item[0])))[:LARGEST]
    out += [f"  {count:>7}  {path}" for path, count in largest]

    out += ["", "Import cycles (grimp; imports under TYPE_CHECKING count)", ""]
    between_modules = cycles(edges)
    out.append(f"  between modules: {len(between_modules) or 'none'}")
    out += [f"    {' <-> '.join(component)}" for component in between_modules]
    for package in packages(graph):
        between_parts = cycles(part_edges(edges, package))
        if between_parts or package == PACKAGE:
            out.append(f"  between the parts of {package}: {len(between_parts) or 'none'}")
            out += [f"    {' <-> '.join(component)}" for component in between_parts]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: python scripts/layout.py [CHECKOUT]", file=sys.stderr)
        return 2
    checkout = Path(argv[0] if argv else Path(__file__).parent.parent).resolve()
    print(report(checkout))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
