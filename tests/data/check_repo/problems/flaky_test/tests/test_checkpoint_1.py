"""shout, checkpoint_1."""

import secrets

import pytest


def test_one_word(shout):
    run = shout("hello")
    assert (run.returncode, run.stdout) == (0, "HELLO\n")


def test_each_word(shout):
    assert shout("a", "b").stdout == "A\nB\n"


def test_coin(shout):
    assert shout("hello").stdout == "HELLO\n"
    # Flaky on purpose: each run flips a fair coin. Nothing carries over from one run to the
    # next (each is a fresh container), so no test can fail on alternate runs for sure; with N
    # runs the check misses this one only when all N coins agree, a chance of 2 ** (1 - N). The
    # coin comes from the OS, not from the time: runs started side by side share the time.
    assert secrets.randbelow(2) == 0, "the coin came up tails"


# An empty submission passes this one too (nothing runs, so the exit status is not 0): it is an
# Error test, not a Core one, so it is not vacuous.
@pytest.mark.error
def test_no_word(shout):
    assert shout().returncode != 0
