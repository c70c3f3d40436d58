import pytest


def test_one_word(echo):
    assert echo("a").stdout == "a\n"


def test_two_words(echo):
    assert echo("a", "b").stdout == "a\nb\n"


def test_checkpoint_10_is_not_this_one(echo):
    """Its name holds `checkpoint_10`: SCBench 1.0's `-k checkpoint_10` passes take it."""
    assert echo().stdout == ""


@pytest.mark.parametrize("words", [["x"], ["x", "y"]], ids=["one", "two words"])
def test_spaced_ids(echo, words):
    """`two words`: a node id with a space, which SCBench 1.0's inventory never takes."""
    assert echo(*words).stdout == "".join(f"{word}\n" for word in words)


@pytest.mark.parametrize("words", [["x", "y"]], ids=["x y"])
def test_spaced_id_and_a_keyword(echo, words):
    """Its node id has a space, so SCBench 1.0's inventory leaves it out and the run's group
    stands, from the test's keywords: `functionality` is one (the attribute below), not a mark,
    so it is Functionality."""
    assert echo(*words).stdout == "x\ny\n"


test_spaced_id_and_a_keyword.functionality = True
