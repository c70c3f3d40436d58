"""Fixtures of the marks tests, among them two that fail on purpose: one in setup, shared by the
whole session, and one in teardown."""

import shlex
import subprocess
from pathlib import Path

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True,
                     help="command that runs the submission, e.g. 'uv run greet.py'")
    parser.addoption("--checkpoint", action="store", required=True,
                     help="the checkpoint being evaluated, e.g. checkpoint_1")


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")


@pytest.fixture
def greet(entrypoint_argv):
    """Run the submission with arguments; returns the CompletedProcess."""

    def run(*args):
        return subprocess.run(entrypoint_argv + list(args), capture_output=True, text=True,
                              timeout=15)

    return run


@pytest.fixture(scope="session")
def names_table():
    """Deliberately broken, as a server-backed problem's data upload can be: the file it loads
    is not shipped, so every test using it errors in setup (the first one, and every later one
    from pytest's cached failure)."""
    return (Path(__file__).parent / "data" / "names.csv").read_text().splitlines()


@pytest.fixture
def scratch_file(tmp_path):
    """Deliberately broken in teardown: the test itself passes, its teardown errors."""
    path = tmp_path / "scratch.txt"
    path.write_text("scratch")
    yield path
    raise RuntimeError("teardown could not clean up the scratch file")
