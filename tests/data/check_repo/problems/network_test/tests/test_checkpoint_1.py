"""shout, checkpoint_1."""

import os
import urllib.request

import pytest


def test_one_word(shout):
    run = shout("hello")
    assert (run.returncode, run.stdout) == (0, "HELLO\n")


def test_each_word(shout):
    assert shout("a", "b").stdout == "A\nB\n"


# Reaches the network on purpose: the package index the run's setup installs from (the only
# host a test here may reach). Not Core: it passes against an empty submission too.
@pytest.mark.functionality
def test_the_index_answers(shout):
    index = next(
        (
            os.environ[name]
            for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
            if os.environ.get(name)
        ),
        "https://pypi.org/simple/",
    )
    with urllib.request.urlopen(index.rstrip("/") + "/pip/", timeout=8) as response:
        assert response.status == 200


# An empty submission passes this one too (nothing runs, so the exit status is not 0): it is an
# Error test, not a Core one, so it is not vacuous.
@pytest.mark.error
def test_no_word(shout):
    assert shout().returncode != 0
