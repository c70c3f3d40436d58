"""shout, checkpoint_1."""

import time

import pytest


def test_one_word(shout):
    run = shout("hello")
    assert (run.returncode, run.stdout) == (0, "HELLO\n")


def test_each_word(shout):
    assert shout("a", "b").stdout == "A\nB\n"


def test_slowly(shout):
    # Slow on purpose: about 2.5 s of the checkpoint's 4 s timeout, more than half of it.
    time.sleep(2.5)
    assert shout("hello").stdout == "HELLO\n"


# An empty submission passes this one too (nothing runs, so the exit status is not 0): it is an
# Error test, not a Core one, so it is not vacuous.
@pytest.mark.error
def test_no_word(shout):
    assert shout().returncode != 0
