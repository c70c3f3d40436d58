"""Probes: arbitrary code run by the real test runner, as a test command an executor runs."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.executors.base import TestCommand
from scbench_ci.foundation.layout import WORKSPACE_TESTS_DIR
from scbench_ci.standalone.pytest_runner import START_PREFIX, start_text

PROBE_KEY = "test-key"


RUNNER_STARTED = f"{START_PREFIX}{start_text(PROBE_KEY)}\n"
"""The first line of a test log whose runner was given PROBE_KEY."""


PROBE_OUTPUT = ".scbench/ctrf-report.json"
"""Where a probe leaves what it found: a file the executors bring back, that a probe's pytest (run
without --ctrf) never writes."""


def probe_command(
    workspace: Path, code: str, variables: dict[str, str] | None = None
) -> TestCommand:
    """A test command whose test process runs `code` (Python) as it collects the one test file,
    then exits 0 (unless the code exits first): arbitrary code, run by the real test runner.
    The probe's code may use PROBE_OUTPUT."""
    (workspace / WORKSPACE_TESTS_DIR).mkdir(parents=True, exist_ok=True)
    ending = "import os as _os, sys as _sys\n_sys.stdout.flush()\n_os._exit(0)\n"
    (workspace / WORKSPACE_TESTS_DIR / "test_probe.py").write_text(
        f"PROBE_OUTPUT = {PROBE_OUTPUT!r}\n{code}\n\n{ending}"
    )
    return TestCommand(
        requirements=("pytest",),
        pytest_args=("-q", "-s", "-p", "no:cacheprovider", f"{WORKSPACE_TESTS_DIR}/test_probe.py"),
        variables=variables or {},
    )


def shell(script: str) -> str:
    """Probe code that runs a bash script and exits with its exit code."""
    return f"import os, subprocess\nos._exit(subprocess.run(['bash', '-c', {script!r}]).returncode)"
