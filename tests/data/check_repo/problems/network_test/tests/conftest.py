"""Fixtures of the shout tests."""

import shlex
import subprocess

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--entrypoint",
        action="store",
        required=True,
        help="command that runs the submission, e.g. 'uv run shout.py'",
    )
    parser.addoption(
        "--checkpoint",
        action="store",
        required=True,
        help="the checkpoint being evaluated, e.g. checkpoint_1",
    )


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")


@pytest.fixture
def shout(entrypoint_argv):
    """Run the submission with arguments; returns the CompletedProcess."""

    def run(*args):
        return subprocess.run(
            entrypoint_argv + list(args), capture_output=True, text=True, timeout=10
        )

    return run
