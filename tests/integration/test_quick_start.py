"""The README's quick start, as written, in a fresh clone of this checkout's HEAD (its first line
clones the repository's address, pyproject's `Source`: the clone is of HEAD instead): the example
evaluates and passes, its reports and summary are where the README says, and `scbench-ci` is then
the command the README says it is. Commit what the quick start needs before running it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import docker

from scbench_ci import __version__
from testing.examples import EXPECTED, group_counts
from testing.paths import REPO_ROOT
from testing.results import checkpoint_documents

README = (REPO_ROOT / "README.md").read_text()
# The ```sh block under the README's `<!-- quick-start: ... -->` comment.
_QUICK_START = re.compile(r"^<!-- quick-start:.*?-->\n```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SOURCE = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["urls"]["Source"]
CLONE = "scbench-ci"
VERSION_LINE = f"scbench-ci {__version__}"
# What the README says the first run prints, the harmless lines among it: each is in the README
# (lines joined, as markdown joins them) and in what the quick start printed.
NAMED_LINES = (
    "bootstrap: creating .venv",
    "ERROR at setup of test_top_matches_frequency_table",
    "report auto-save skipped",
    "28 passed, 1 xfailed, 1 error",
    "1 failing test (the policy core-cases does not need it to pass)",
    "in tests/test_checkpoint_2.py::test_top_matches_frequency_table",
    "Verdict: PASSED (1 of 1 checkpoint passes the policy core-cases, which asks that every Core"
    " test passes)",
)


SETUP_BUILT = ("[scbench-ci] $ uv init", "[scbench-ci] $ uv add -r requirements.txt || true")
"""What the terminal shows of SCBench's setup, when it builds the dependency cache."""
SETUP_LOG_ONLY = (
    "Creating virtual environment at: .venv",
    "error: File not found: requirements.txt",
)
"""What setup.log, and not the terminal, has of it then (issue #52)."""
RESTORED = "[scbench-ci] setup: not run here;"
"""What setup.log, and not the terminal, says of it later."""


def quick_start() -> str:
    (commands,) = _QUICK_START.findall(README)
    return str(commands)


def _fresh_shell_environment() -> dict[str, str]:
    """This process's environment without the checkout's own virtual environment: a new user's
    shell has no scbench-ci on PATH."""
    venv = str(REPO_ROOT / ".venv")
    path = [entry for entry in os.environ["PATH"].split(os.pathsep) if not entry.startswith(venv)]
    env = {name: value for name, value in os.environ.items() if name != "VIRTUAL_ENV"}
    return env | {"PATH": os.pathsep.join(path)}


def test_the_quick_start_clones_the_repository_then_runs_from_the_clone() -> None:
    lines = quick_start().splitlines()
    assert lines[:2] == [f"git clone {SOURCE} {CLONE}", f"cd {CLONE}"]
    assert f"prints `{VERSION_LINE}`" in " ".join(README.split())


def test_the_readme_quick_start_works_as_written(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    script = quick_start().replace(f"git clone {SOURCE} ", f"git clone --quiet {REPO_ROOT} ", 1)
    env = _fresh_shell_environment()
    assert shutil.which("scbench-ci", path=env["PATH"]) is None
    run = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    readme = " ".join(README.split())
    for line in NAMED_LINES:
        assert f"`{line}`" in readme or line in readme, line
        assert line in run.stdout + run.stderr, line
    # SCBench's setup: built into the cache on this daemon's first run, copied in after; what
    # it says when nothing went wrong is in setup.log, not on the terminal.
    printed = run.stdout + run.stderr
    clone = tmp_path / CLONE
    setup_log = (clone / ".scbench/wordstat/checkpoint_2/setup.log").read_text()
    built = all(line in printed for line in SETUP_BUILT)
    assert built or RESTORED in setup_log, setup_log
    for line in SETUP_BUILT:
        assert f"`{line}`" in readme, line
    for line in (*SETUP_LOG_ONLY, RESTORED):
        assert line not in printed, line
    if built:
        assert all(line in setup_log for line in SETUP_LOG_ONLY), setup_log
        assert re.search(r"^Using CPython 3\.12\.\d+ interpreter at: ", setup_log, re.M)
    head = ["git", "rev-parse", "HEAD"]
    assert subprocess.check_output(head, cwd=clone) == subprocess.check_output(head, cwd=REPO_ROOT)

    # ./scripts/example.sh: wordstat checkpoint_2's reference solution passes, as the README says.
    reports = clone / ".scbench"
    results = json.loads((reports / "results.json").read_text())
    (checkpoint,) = checkpoint_documents(results)
    assert results["passed"] is True
    exit_code, counts = EXPECTED[("wordstat", "checkpoint_2", "solutions/checkpoint_2")]
    assert exit_code == 0
    assert group_counts(checkpoint) == counts
    assert "Verdict: PASSED" in run.stdout
    assert (reports / "wordstat" / "checkpoint_2" / "pytest.log").is_file()
    # cat .scbench/summary.md
    summary = (reports / "summary.md").read_text()
    assert summary.strip() and summary in run.stdout
    # . .venv/bin/activate, then scbench-ci --version: the clone's, the only one on PATH.
    assert run.stdout.splitlines()[-1] == VERSION_LINE
