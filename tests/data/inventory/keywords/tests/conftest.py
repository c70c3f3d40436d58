"""Fixtures, and two hooks that mark tests: one as pytest's own deselection sees them, one after
it (trylast), so that SCBench 1.0's `-m functionality` pass never sees its marker."""

import shlex
import subprocess

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True)
    parser.addoption("--checkpoint", action="store", required=True)


@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")


@pytest.fixture
def echo(entrypoint_argv):
    def run(*args):
        return subprocess.run(entrypoint_argv + list(args), capture_output=True, text=True)

    return run


def pytest_collection_modifyitems(items):
    for item in items:
        if "invalid" in item.name:
            item.add_marker(pytest.mark.error)


class AfterDeselection:
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            if "optional" in item.name:
                item.add_marker(pytest.mark.functionality)


def pytest_configure(config):
    config.pluginmanager.register(AfterDeselection(), "keywords-after-deselection")
