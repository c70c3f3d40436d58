"""The package's layers hold: `.importlinter`'s contracts, run by `lint-imports` as CI runs them.

A wrong-way import (a stage importing a later one, the trust layer importing the pipeline, a
cycle between folders, Docker or the network outside the executors and outputs.github) fails
here with import-linter's report of each import that breaks a contract.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.paths import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_import_contracts_are_kept() -> None:
    lint = subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO_ROOT / ".importlinter"), "--no-cache"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.parametrize(
    "code",
    [
        "import runpy, sys; sys.argv = ['scbench-ci', '--version']\n"
        "try: runpy.run_module('scbench_ci', run_name='__main__')\nexcept SystemExit: pass",
        "import scbench_ci.results.model",
    ],
)
def test_the_version_and_the_results_do_not_load_docker_s_sdk(code: str) -> None:
    """Docker's SDK (and requests) cost 0.4 s to import: loaded when a run needs the daemon."""
    probe = f"{code}\nimport sys\nprint(sorted({{'docker', 'requests'}} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "code",
    [
        "import runpy, sys; sys.argv = ['scbench-ci', '--version']\n"
        "try: runpy.run_module('scbench_ci', run_name='__main__')\nexcept SystemExit: pass",
        "from scbench_ci.cli.main import parse_arguments\n"
        "parse_arguments(['evaluate', '--problem', 'p', '--checkpoint', 'c', '--submission', 's'])",
    ],
)
def test_parsing_the_command_line_loads_no_command_s_core(code: str) -> None:
    """Each subcommand's `run` loads its command's core: `--version`, and the arguments of any
    command, cost their declarations only, and a run does not load the other commands."""
    probe = (
        f"{code}\nimport sys\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scbench_ci.commands.', "
        "'scbench_ci.check', 'scbench_ci.pipeline.merge', 'scbench_ci.pipeline.evaluation'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


HEAVY = ("jinja2", "jsonschema", "docker", "scbench_ci.outputs", "scbench_ci.commands")
"""What a run needs and parsing does not: the summary's templates, results.json's schema,
Docker's SDK, the outputs, the commands' cores."""
LOADED = """
import io, sys
from scbench_ci.cli.main import main
sys.stdout = io.StringIO()
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\n".join(sorted(sys.modules)), file=sys.__stdout__)
"""


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("evaluate", "--help")])
def test_help_and_version_load_the_declarations_and_the_parser_only(args: tuple[str, ...]) -> None:
    """`scbench-ci --help` in a process of its own, so that what other tests imported does not
    count (contract `light-options` holds the options package to the same)."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *args],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    modules = done.stdout.splitlines()
    assert "scbench_ci.options.declared" in modules
    heavy = [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in HEAVY)]
    assert heavy == []
