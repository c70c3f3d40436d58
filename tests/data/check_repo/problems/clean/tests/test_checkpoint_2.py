"""shout, checkpoint_2."""

import pytest


def test_exclaim(shout):
    assert shout("--exclaim", "hey").stdout == "HEY!\n"


@pytest.mark.functionality
@pytest.mark.parametrize(
    ("words", "expected"), [(["a", "b"], "A!\nB!\n"), (["x"], "X!\n")], ids=["two", "one"]
)
def test_exclaim_each(shout, words, expected):
    assert shout("--exclaim", *words).stdout == expected
