import pytest


def test_upper(echo):
    assert echo("--upper", "a").stdout == "A\n"


def test_invalid_option(echo):
    """Marked `error` by the conftest, before pytest's deselection: Error for SCBench 1.0 too."""
    assert echo("--nope").returncode == 2


@pytest.mark.error
def test_no_arguments_with_upper(echo):
    assert echo("--upper").stdout == ""


@pytest.mark.functionality
def test_many_words(echo):
    assert len(echo(*"abcdefghij").stdout.splitlines()) == 10


@pytest.mark.slow
def test_slow_case(echo):
    """A problem-defined marker (Functionality): SCBench 1.0's inventory does not consult it."""
    assert echo("slow").stdout == "slow\n"


def test_optional_suffix(echo):
    """Marked `functionality` by the conftest after pytest's deselection."""
    assert echo("x").returncode == 0


@pytest.mark.parametrize("word", ["a", "b c", "d-e"])
def test_words(echo, word):
    assert echo(word).stdout == f"{word}\n"


class TestUpper:
    def test_mixed(self, echo):
        assert echo("--upper", "aB").stdout == "AB\n"

    @pytest.mark.regression
    def test_lower_unchanged(self, echo):
        assert echo("ab").stdout == "ab\n"
