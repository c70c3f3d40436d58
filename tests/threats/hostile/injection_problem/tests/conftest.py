import os
import shlex

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)


def pytest_configure(config):
    # test_checkpoint_2.py runs the submission as it is imported, before any fixture exists.
    os.environ["INJECTION_ENTRYPOINT"] = config.getoption("--entrypoint")


@pytest.fixture
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")
