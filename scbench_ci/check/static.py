"""The static half of `check`: what a problem's files say without running any of them.

Every finding at once, each with its file and line where there is one. The tests' Python is read
with `ast`, never imported or run: a problem under review is not trusted yet.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from scbench_ci.check.known_failures import read_known_failures
from scbench_ci.foundation.errors import ProblemError
from scbench_ci.foundation.layout import TESTS_DIR
from scbench_ci.foundation.paths import real_path
from scbench_ci.foundation.scbench_runner import V1_0, ScbenchRunner
from scbench_ci.problem.load import ProblemCheck, check_problem
from scbench_ci.problem.model import BUILTIN_MARKERS, CONFIG_NAME, CONFTEST, Group, Problem
from scbench_ci.problem.yaml_loader import ConfigError
from scbench_ci.results.findings import Finding, Severity, Stage, finding_path
from scbench_ci.trust.untrusted_tree import (
    TOO_DEEP,
    Entry,
    Kind,
    UntrustedTree,
    UntrustedTreeError,
    stays_inside,
)

PYTEST_MARKERS = frozenset(
    {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings", "timeout"}
)
"""pytest's own markers, and pytest-timeout's (the evaluator always installs it)."""
REQUIRED_OPTIONS = ("--entrypoint", "--checkpoint")
REQUIRED_FIXTURES = ("entrypoint_argv", "checkpoint_name")
SOLUTIONS_DIR = "solutions"
MAX_SOURCE_BYTES = 16 * 1024 * 1024
"""A test file larger than this is not read (no real one is)."""
_PARSER = f"Python {sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class _Module:
    """A Python file of the problem's tests/ folder, parsed."""

    name: str
    file: str
    """As findings name it."""
    tree: ast.Module
    names: _PytestNames

    @property
    def is_test_file(self) -> bool:
        return _is_test_file(self.name)


@dataclass(frozen=True)
class _PytestNames:
    """What the module's imports call pytest and the parts of it the checks look for."""

    pytest: frozenset[str]
    mark: frozenset[str]
    fixture: frozenset[str]
    param: frozenset[str]

    def is_pytest(self, node: ast.expr, name: Literal["mark", "fixture", "param"]) -> bool:
        """Whether `node` is `pytest.<name>`, or what the module imported it as."""
        if isinstance(node, ast.Name):
            imported: frozenset[str] = getattr(self, name)
            return node.id in imported
        return (
            isinstance(node, ast.Attribute)
            and node.attr == name
            and isinstance(node.value, ast.Name)
            and node.value.id in self.pytest
        )


def static_findings(
    problem_root: Path, *, relative_to: Path | None = None, scbench: ScbenchRunner = V1_0
) -> tuple[list[Finding], Problem | None]:
    """Every static finding of the problem, and the problem when its config.yaml loads.

    Findings are in the order of their files and lines, and name files relative to
    `relative_to` (a repository root), by default the problem folder's parent. The checks that
    need the problem's checkpoints or markers are left out while config.yaml does not load.
    Where SCBench 1.0's inventory surprises is warned of only when the runner `scbench` takes
    one (`--scbench 1.0`).
    """
    root = real_path(problem_root)
    base = real_path(relative_to) if relative_to is not None else root.parent
    check = check_problem(root)
    findings = [_problem_finding(error, base) for error in check.errors]
    try:
        with UntrustedTree.opened(root) as tree:
            folders = [TESTS_DIR, SOLUTIONS_DIR]
            if check.problem is not None:
                folders += [_relative(asset.source, root) for asset in check.problem.static_assets]
            walks = {folder: _walk(tree, folder, base) for folder in folders}
            tests = walks[TESTS_DIR][0]
            modules, unparsed = _parse_tests(tree, tests, base)
    except UntrustedTreeError:  # the problem folder itself: check_problem says why
        return findings, None
    for _, found in walks.values():
        findings += found
    findings += unparsed
    conftest = next((module for module in modules if module.name == CONFTEST), None)
    if conftest is not None:
        findings += _conftest_findings(conftest)
    for module in modules:
        if module.is_test_file:
            findings += _shadowed_tests(module, module.tree.body)
            findings += _duplicate_ids(module)
    problem = check.problem
    if problem is not None:
        findings += _checkpoint_findings(problem, check, base)
        findings += _marker_findings(problem, modules, conftest)
        if scbench.collection_inventory:
            findings += _keyword_findings(problem, check, base)
            findings += _marker_group_findings(problem, modules)
        findings += _stray_test_files(problem, tests, base)
        findings += read_known_failures(problem, relative_to=base)[1]
    return sorted(findings, key=lambda finding: (finding.file, finding.line or 0)), problem


def _error(file: str, line: int | None, message: str, checkpoint: str | None = None) -> Finding:
    return Finding(Stage.STATIC, Severity.ERROR, file, line, message, checkpoint=checkpoint)


def _warning(file: str, line: int | None, message: str) -> Finding:
    return Finding(Stage.STATIC, Severity.WARNING, file, line, message)


def _problem_finding(error: ProblemError, base: Path) -> Finding:
    line = error.line if isinstance(error, ConfigError) else None
    message = str(error).removeprefix(f"{error.path}: ")
    return _error(finding_path(error.path, base), line, message)


def _walk(tree: UntrustedTree, folder: str, base: Path) -> tuple[list[Entry], list[Finding]]:
    """The entries of one of the problem's folders (none when it is not one), and an error for
    each that is never read: a symlink leading out of the problem, a folder nested too deep, a
    tree too large."""
    entries: list[Entry] = []
    findings: list[Finding] = []
    if tree.kind(folder) is not Kind.FOLDER:
        if tree.kind(folder) is Kind.LINK:
            findings.append(_error(_file(tree, folder, base), None, _LINK_FOLDER))
        return entries, findings
    try:
        for entry in tree.walk(folder, skip=lambda entry: entry.path.name == "__pycache__"):
            if entry.too_deep:
                findings.append(_error(_file(tree, entry.path, base), None, TOO_DEEP))
            elif entry.kind is Kind.LINK and not stays_inside(tree, entry.path, entry.link or ""):
                findings.append(_error(_file(tree, entry.path, base), None, _LINK_OUT))
            else:
                entries.append(entry)
    except UntrustedTreeError as error:
        findings.append(_error(_file(tree, error.relative, base), None, error.reason))
    return entries, findings


_LINK_OUT = "is a symlink that leads out of the problem: it is neither read nor copied"
_LINK_FOLDER = "is a symlink: the problem's own folders are never followed through a link"


def _file(tree: UntrustedTree, relative: PurePosixPath | str, base: Path) -> str:
    return finding_path(tree.root / relative, base)


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _parse_tests(
    tree: UntrustedTree, tests: list[Entry], base: Path
) -> tuple[list[_Module], list[Finding]]:
    """The Python files directly in tests/: conftest, test files and their helpers. Files in
    sub-folders may be the tests' data, and are left alone."""
    modules = []
    findings = []
    for entry in tests:
        if entry.depth != 1 or not entry.path.name.endswith(".py"):
            continue
        file = _file(tree, entry.path, base)
        if entry.kind is Kind.LINK:
            findings.append(_warning(file, None, "not checked: it is a symlink"))
            continue
        if entry.kind is not Kind.FILE:
            continue
        try:
            source = tree.read_file(str(entry.path), MAX_SOURCE_BYTES)
            tree_ = ast.parse(source, filename=file)
        except UntrustedTreeError as error:
            findings.append(_error(file, None, error.reason))
            continue
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            # The tests run on the evaluation image's Python, which may read syntax this one
            # cannot: the collection stage has the last word on whether the file is valid.
            # (ValueError: a NUL byte; RecursionError and MemoryError: nesting too deep.)
            line = error.lineno if isinstance(error, SyntaxError) else None
            reason = error.msg if isinstance(error, SyntaxError) else type(error).__name__
            findings.append(
                _warning(file, line, f"not checked: {_PARSER} cannot parse it ({reason})")
            )
            continue
        modules.append(_Module(entry.path.name, file, tree_, _pytest_names(tree_)))
    return modules, findings


def _pytest_names(tree: ast.Module) -> _PytestNames:
    found: dict[str, set[str]] = {"pytest": set(), "mark": set(), "fixture": set(), "param": set()}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "pytest":
                    found["pytest"].add(alias.asname or "pytest")
        elif isinstance(node, ast.ImportFrom) and node.module == "pytest" and node.level == 0:
            for alias in node.names:
                if alias.name in found and alias.name != "pytest":
                    found[alias.name].add(alias.asname or alias.name)
    return _PytestNames(
        pytest=frozenset(found["pytest"]),
        mark=frozenset(found["mark"]),
        fixture=frozenset(found["fixture"]),
        param=frozenset(found["param"]),
    )


def _conftest_findings(conftest: _Module) -> list[Finding]:
    options: set[str] = set()
    fixtures: set[str] = set()
    addoption_line = None
    for node in ast.walk(conftest.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "addoption":
                options.update(_strings(node.args))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == "pytest_addoption":
                addoption_line = node.lineno
            fixtures.update(_fixture_names(node, conftest.names))
    findings = [
        _error(
            conftest.file,
            addoption_line,
            f"registers no {option} option: the evaluator runs pytest with {option}=..., so "
            f"pytest_addoption must call parser.addoption({option!r})",
        )
        for option in REQUIRED_OPTIONS
        if option not in options
    ]
    findings += [
        _error(
            conftest.file,
            None,
            f"defines no {fixture} fixture: every problem's tests can use it",
        )
        for fixture in REQUIRED_FIXTURES
        if fixture not in fixtures
    ]
    return findings


def _strings(nodes: list[ast.expr]) -> Iterator[str]:
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def _fixture_names(
    function: ast.FunctionDef | ast.AsyncFunctionDef, names: _PytestNames
) -> Iterator[str]:
    """The name a function is a fixture under (its own, or its decorator's `name=`), if it is."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        if not names.is_pytest(call.func if call else decorator, "fixture"):
            continue
        renamed = [k.value for k in call.keywords if k.arg == "name"] if call else []
        yield from (_strings(renamed) if renamed else [function.name])


def _shadowed_tests(module: _Module, body: list[ast.stmt], owner: str = "") -> list[Finding]:
    """Tests defined twice in one scope: the later definition replaces the earlier one, whose
    test never runs."""
    findings = []
    seen: dict[str, int] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            is_test = node.name.startswith("test")
        elif isinstance(node, ast.ClassDef):
            is_test = node.name.startswith("Test")
            if is_test:
                findings += _shadowed_tests(module, node.body, f"{node.name}.")
        else:
            continue
        if not is_test:
            continue
        if node.name in seen:
            findings.append(
                _error(
                    module.file,
                    node.lineno,
                    f"{owner}{node.name} is defined again: the one at line {seen[node.name]} "
                    "is replaced by this one and never runs",
                )
            )
        seen[node.name] = node.lineno
    return findings


def _duplicate_ids(module: _Module) -> list[Finding]:
    """Explicit parametrize ids given twice in one parametrize: pytest renames every case of
    a repeated id (`a` becomes `a0`, `a1`), so none is found under the id its author gave."""
    findings = []
    for node in ast.walk(module.tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "parametrize"
            and module.names.is_pytest(node.func.value, "mark")
        ):
            continue
        seen: dict[str, int] = {}
        for case_id, line in _explicit_ids(node, module.names):
            if case_id in seen:
                findings.append(
                    _error(
                        module.file,
                        line,
                        f"parametrize id {case_id!r} is given twice (first at line "
                        f"{seen[case_id]}): pytest renames both cases",
                    )
                )
            else:
                seen[case_id] = line
    return findings


def _explicit_ids(parametrize: ast.Call, names: _PytestNames) -> Iterator[tuple[str, int]]:
    """Each case's id where it is a literal: `pytest.param(..., id=...)`, else its `ids` entry."""
    keywords = {keyword.arg: keyword.value for keyword in parametrize.keywords}
    values = parametrize.args[1] if len(parametrize.args) > 1 else keywords.get("argvalues")
    ids = keywords.get("ids")
    cases = values.elts if isinstance(values, ast.List | ast.Tuple) else []
    listed = ids.elts if isinstance(ids, ast.List | ast.Tuple) else []
    for index in range(max(len(cases), len(listed))):
        case = cases[index] if index < len(cases) else None
        given = None
        if isinstance(case, ast.Call) and names.is_pytest(case.func, "param"):
            given = next((k.value for k in case.keywords if k.arg == "id"), None)
        if given is None and index < len(listed):
            given = listed[index]
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            yield given.value, given.lineno


def _checkpoint_findings(problem: Problem, check: ProblemCheck, base: Path) -> list[Finding]:
    """Each checkpoint's test file, spec and, where the problem ships them, reference solution:
    reported on the checkpoint's line of config.yaml, where it is declared."""
    config = finding_path(problem.root / CONFIG_NAME, base)
    solutions = problem.root / SOLUTIONS_DIR
    findings = []
    for checkpoint in problem.checkpoints:
        wanted = [
            ("test file", problem.tests_dir / checkpoint.test_file, Path.is_file),
            ("spec", problem.root / f"{checkpoint.name}.md", Path.is_file),
        ]
        if solutions.is_dir():
            wanted.append(("reference solution", solutions / checkpoint.name, Path.is_dir))
        findings += [
            _error(
                config,
                check.line("checkpoints", checkpoint.name),
                f"checkpoint {checkpoint.name!r} has no {what} {path.relative_to(problem.root)}",
                checkpoint=checkpoint.name,
            )
            for what, path, exists in wanted
            if not exists(path)
        ]
    return findings


def _keyword_findings(problem: Problem, check: ProblemCheck, base: Path) -> list[Finding]:
    """A checkpoint whose name is part of another's: SCBench 1.0 collects a checkpoint's tests
    with `-k <name>`, pytest's case-insensitive substring match."""
    config = finding_path(problem.root / CONFIG_NAME, base)
    findings = []
    for checkpoint in problem.checkpoints:
        others = [
            other.name
            for other in problem.checkpoints
            if other is not checkpoint and checkpoint.name.lower() in other.name.lower()
        ]
        if others:
            findings.append(
                _warning(
                    config,
                    check.line("checkpoints", checkpoint.name),
                    f"`-k {checkpoint.name}`, with which SCBench 1.0 collects checkpoint "
                    f"{checkpoint.name!r}'s tests for its inventory, also matches "
                    f"{', '.join(repr(name) for name in others)} (a substring, whatever the "
                    "case): its passes take their tests too, and any test whose name holds it; "
                    "names that are no part of one another avoid it",
                )
            )
    return findings


def _marker_group_findings(problem: Problem, modules: list[_Module]) -> list[Finding]:
    """Each use of a marker of the problem's own that gives a group other than Core: SCBench
    1.0's inventory decides the groups from `-m error`, `-m functionality` and `-m regression`
    alone, so under it such a test is Core."""
    grouped = {marker.name: marker.group for marker in problem.markers}
    builtin = {marker.name for marker in BUILTIN_MARKERS}
    findings = []
    for module in modules:
        for node in ast.walk(module.tree):
            if not (isinstance(node, ast.Attribute) and module.names.is_pytest(node.value, "mark")):
                continue
            group = grouped.get(node.attr)
            if group is None or node.attr in builtin or group is Group.CORE:
                continue
            findings.append(
                _warning(
                    module.file,
                    node.lineno,
                    f"marker {node.attr!r} puts its tests in {group} ({CONFIG_NAME}), but SCBench "
                    "1.0's inventory, which decides the groups, reads only error, functionality "
                    "and regression: under SCBench 1.0 they are Core, unless marked with one of "
                    "those too",
                )
            )
    return findings


def _marker_findings(
    problem: Problem, modules: list[_Module], conftest: _Module | None
) -> list[Finding]:
    known = PYTEST_MARKERS | {marker.name for marker in (*BUILTIN_MARKERS, *problem.markers)}
    known |= registered_markers(conftest.tree) if conftest is not None else frozenset()
    findings = []
    for module in modules:
        uses = sorted(
            (node.lineno, node.attr)
            for node in ast.walk(module.tree)
            if isinstance(node, ast.Attribute) and module.names.is_pytest(node.value, "mark")
        )
        findings += [
            _error(
                module.file,
                line,
                f"marker {name!r} is not registered: a test it marks counts as Core; declare it "
                f"in {CONFIG_NAME}'s markers (with its group) or use a built-in one",
            )
            for line, name in uses
            if name not in known
        ]
    return findings


def registered_markers(conftest: ast.Module) -> frozenset[str]:
    """The markers the conftest registers itself, as pytest documents it (`pytest_configure`:
    `config.addinivalue_line("markers", "name(args): description")`): pytest knows them, so
    SCBench runs their tests without a word (they count as Core, as any marker config.yaml does
    not give a group). Read from the parsed file, never run."""
    names = set()
    for node in ast.walk(conftest):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "addinivalue_line"
        ):
            continue
        values = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
        if (
            len(node.args) == len(values) == 2
            and values[0] == "markers"
            and isinstance(line := values[1], str)
        ):
            names.add(line.split(":", 1)[0].split("(", 1)[0].strip())
    return frozenset(names)


def _stray_test_files(problem: Problem, tests: list[Entry], base: Path) -> list[Finding]:
    """Test files outside the convention (`tests/test_<checkpoint>.py`).

    One directly in tests/ named `test_*.py` is an error: the evaluator copies only the
    evaluated checkpoints' test files, so its tests never run. Any other file pytest would
    collect (`*_test.py`, or one in a sub-folder) is copied and runs with every checkpoint's
    tests; it is a warning, as a sub-folder may hold such files as the tests' data.
    """
    expected = {checkpoint.test_file for checkpoint in problem.checkpoints}
    findings = []
    for entry in tests:
        name = entry.path.name
        top = entry.depth == 1
        if entry.kind is Kind.FOLDER or not _is_test_file(name) or (top and name in expected):
            continue
        file = finding_path(problem.root / entry.path, base)
        if top and name.startswith("test_"):
            findings.append(
                _error(
                    file,
                    None,
                    "is no checkpoint's test file (tests/test_<checkpoint>.py of a checkpoint "
                    f"in {CONFIG_NAME}): it is never copied, so its tests never run",
                )
            )
        else:
            findings.append(
                _warning(
                    file,
                    None,
                    "pytest collects it with the tests of every checkpoint: test files are "
                    "tests/test_<checkpoint>.py",
                )
            )
    return findings


def _is_test_file(name: str) -> bool:
    """Whether pytest collects a file of this name (its default `python_files`)."""
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
