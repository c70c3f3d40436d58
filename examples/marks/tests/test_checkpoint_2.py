"""greet, checkpoint_2: every test here is marked slow at module level, so none is Core."""

import pytest

pytestmark = pytest.mark.slow


def test_shouts(greet):
    assert greet("--shout", "ada").stdout == "HELLO, ADA!\n"


def test_still_greets_quietly(greet):
    assert greet("ada").stdout == "hello, ada!\n"


@pytest.mark.error
def test_shout_without_a_name(greet):
    assert greet("--shout").returncode == 2


@pytest.mark.regression
def test_shout_with_a_bad_name(greet):
    assert greet("--shout", "a b").returncode == 2
