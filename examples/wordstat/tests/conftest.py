"""Shared fixtures for the wordstat tests."""

import os
import shlex
import subprocess
from pathlib import Path

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True,
                     help="command that runs the submission, e.g. 'uv run wordstat.py'")
    parser.addoption("--checkpoint", action="store", required=True,
                     help="the checkpoint being evaluated, e.g. checkpoint_2")


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")


@pytest.fixture(scope="session")
def run_timeout():
    """Seconds one run of the submission may take (config.yaml's env, per checkpoint)."""
    return float(os.environ.get("WORDSTAT_RUN_TIMEOUT", "10"))


@pytest.fixture
def run_wordstat(entrypoint_argv, run_timeout):
    """Run the submission with arguments; returns the CompletedProcess."""

    def run(*args, stdin=None):
        return subprocess.run(
            entrypoint_argv + [str(arg) for arg in args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=run_timeout,
        )

    return run


@pytest.fixture
def write_text(tmp_path):
    """Write a file under tmp_path (bytes or str, stored as is) and return its absolute path."""

    def write(name, content):
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
        return path

    return write


@pytest.fixture(scope="session")
def corpus_dir():
    """The `corpus` static asset (config.yaml), found through its SCBENCH_ASSET_ variable."""
    path = Path(os.environ["SCBENCH_ASSET_CORPUS"])
    assert path.is_dir(), f"static asset folder missing: {path}"
    return path.resolve()
