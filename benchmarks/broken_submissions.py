"""Broken submissions made from a reference solution, where SCBench 1.0's rules and the paper's
decide differently (a pytest that ends with an exit code other than 0 or 1, tests collected and
never reported):

- `missing-function`: the entry file without its first top-level function other than `main`
  (an agent's half-finished refactoring);
- `conftest-crash`: a `conftest.py` beside the entry file whose hook kills pytest's own process
  with SIGSEGV after its first test (an agent's own tests' configuration, left in the workspace);
- `kills-pytest`: the entry file first sends SIGKILL to the pytest process it runs under (found
  among its ancestors), then does its work;
- `hangs-once`: the entry file's first run sleeps until something stops it (a timeout), the
  others work.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Callable
from pathlib import Path

KILL_PYTEST = """
def _scbench_kill_pytest():
    import os, signal
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read()
            with open(f"/proc/{pid}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            return
        if b"pytest" in command:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            return
        pid = parent


_scbench_kill_pytest()
"""
HANG_ONCE = """
def _scbench_hang_once():
    import os, tempfile, time
    flag = os.path.join(tempfile.gettempdir(), "scbench-hang-once")
    if not os.path.exists(flag):
        open(flag, "w").close()
        time.sleep(100000)


_scbench_hang_once()
"""
CONFTEST_CRASH = """import os
import signal


def pytest_runtest_teardown(item, nextitem):
    os.kill(os.getpid(), signal.SIGSEGV)
"""


def _without_a_function(entry: Path) -> bool:
    source = entry.read_text()
    tree = ast.parse(source)
    functions = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name != "main"
    ]
    if not functions:
        return False
    first = functions[0]
    start = min([first.lineno, *(decorator.lineno for decorator in first.decorator_list)])
    lines = source.splitlines(keepends=True)
    entry.write_text("".join(lines[: start - 1] + lines[first.end_lineno or start :]))
    return True


def _prepended(code: str) -> Callable[[Path], bool]:
    """Insert `code` where a module's statements may start (after `from __future__` imports)."""

    def change(entry: Path) -> bool:
        source = entry.read_text()
        futures = [
            node.end_lineno or node.lineno
            for node in ast.parse(source).body
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"
        ]
        lines = source.splitlines(keepends=True)
        at = max(futures, default=0)
        entry.write_text("".join([*lines[:at], code, "\n", *lines[at:]]))
        return True

    return change


def _with_conftest(entry: Path) -> bool:
    (entry.parent / "conftest.py").write_text(CONFTEST_CRASH)
    return True


VARIANTS: dict[str, Callable[[Path], bool]] = {
    "missing-function": _without_a_function,
    "conftest-crash": _with_conftest,
    "kills-pytest": _prepended(KILL_PYTEST),
    "hangs-once": _prepended(HANG_ONCE),
}


def make(solution: Path, entry_file: str, variant: str, target: Path) -> bool:
    """The variant of `solution` in `target`; False (and nothing made) where it has no entry
    file or nothing to change."""
    entry = solution / f"{entry_file}.py"
    if not entry.is_file():
        return False
    shutil.copytree(solution, target, symlinks=True)
    if VARIANTS[variant](target / entry.name):
        return True
    shutil.rmtree(target)
    return False
