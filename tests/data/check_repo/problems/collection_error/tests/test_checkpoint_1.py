"""shout, checkpoint_1."""

import pytest
from shout_words import split_words  # no such module: the file does not collect


def test_one_word(shout):
    run = shout("hello")
    assert (run.returncode, run.stdout) == (0, "HELLO\n")


def test_each_word(shout):
    assert shout(*split_words("a b")).stdout == "A\nB\n"


# An empty submission passes this one too (nothing runs, so the exit status is not 0): it is an
# Error test, not a Core one, so it is not vacuous.
@pytest.mark.error
def test_no_word(shout):
    assert shout().returncode != 0
