"""How every executor starts the quality measure: SCBench 1.0's call (`scb-check check --report
--include-all`, its metrics/checkpoint/driver.py), through a launcher that also says which files
scb-check measured; and the submission's source files as staged, which it should all measure.

`--include-all` is what makes the evaluator, not the submission, decide what is measured: without
it, scb-check skips what the submission's own `.gitignore` names, honours its `# scbc ignore[...]`
comments, and fails on one it rejects. Even with it, scb-check skips folders by name (`build`,
`dist`, `env`, `node_modules`, ...) and files its parsers cannot read, without a word: the
files it measured, compared with those staged, name what it left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from scbench_ci.foundation.layout import EVALUATOR_NAMES
from scbench_ci.trust.untrusted_tree import Entry, Kind, UntrustedTree

SCB_CHECK_SUFFIXES = frozenset(
    {
        ".c++",
        ".cc",
        ".cpp",
        ".cxx",
        ".hh",
        ".hpp",
        ".hs",
        ".hxx",
        ".js",
        ".mjs",
        ".cjs",
        ".py",
        ".pyw",
        ".rs",
        ".ts",
        ".zig",
    }
)
"""The file suffixes scb-check 0.2.0 reads, in any case (`tree_walking/dispatch.py`,
`SUPPORTED_SOURCE_SUFFIXES`; the Docker tests compare them with the installed scb-check's)."""

LAUNCHER = """\
import io, json, os, sys
from pathlib import Path
import yaml
if yaml.__with_libyaml__:
    yaml.safe_load_all = lambda stream: yaml.load_all(stream, Loader=yaml.CSafeLoader)
from scb_check import pipeline
from scb_check.cli import main
from scb_check.commands import check
measured = []
def analyze(path, config, **options):
    result = pipeline.analyze(path, config, **options)
    root = Path(path).resolve()
    for file, _ in result.flags.lines.total_loc_by_file:
        measured.append(os.fsencode(file.relative_to(root)).hex())
    return result
check.analyze = analyze
sys.argv[0] = "scb-check"
printed, sys.stdout = sys.stdout, io.StringIO()
try:
    main()
except SystemExit as end:
    code = end.code
else:
    code = 0
finally:
    report, sys.stdout = sys.stdout.getvalue(), printed
if report.strip():
    sys.stdout.write('{"report": ' + report + ', "measured": ' + json.dumps(measured) + "}")
sys.exit(code)
"""
"""How scb-check is started: as its own `scb-check` script does, with two changes. PyYAML's
libyaml loader reads the rules it reads three times at each start (its YAML is only its own
bundled rules; the pure-Python loader spent about 1 s of each measure on them; the same documents:
the measure's Docker tests load every bundled rule both ways and compare). And what it prints
is `{"report": <its report, as it printed it>, "measured": [<each file it parsed, its path
relative to the measured folder, as the hex of its bytes>]}`: the files behind the report's
figures (its `files_scanned` counts the same list), exactly, whatever their names."""


def scb_check_arguments(source: str) -> list[str]:
    """SCBench 1.0's arguments (its driver passes the snapshot folder last; the order is
    click's to read, not scb-check's)."""
    return ["check", source, "--report", "--include-all"]


def launcher_argv(python: list[str], source: str) -> list[str]:
    """scb-check on `source` through LAUNCHER, `python` being the measure's environment's;
    `-P`: nothing of the working folder or the launcher's on the import path."""
    return [*python, "-P", "-c", LAUNCHER, *scb_check_arguments(source)]


def staged_sources(workspace: Path) -> tuple[str, ...]:
    """The source files of the submission in the staged `workspace` (the evaluator's entries
    left out): each regular file with a suffix scb-check reads, by its path below the workspace,
    in name order. Links are not followed, and not counted: scb-check skips them, and what a
    link inside the submission points to is measured where it is."""
    with UntrustedTree.opened(workspace) as tree:
        return tuple(
            str(entry.path)
            for entry in tree.walk(skip=is_evaluators)
            if entry.kind is Kind.FILE and entry.path.suffix.lower() in SCB_CHECK_SUFFIXES
        )


def measured_name(path: str) -> bytes:
    """A staged source file's path as the launcher names a file it measured (once decoded from
    hex): its bytes."""
    return os.fsencode(path)


def is_evaluators(entry: Entry) -> bool:
    """A workspace's entry that only the evaluator makes (the tests, pytest.ini, .scbench/)."""
    return len(entry.path.parts) == 1 and entry.path.name in EVALUATOR_NAMES
