"""greet, checkpoint_1. Each test's group follows from its marks, wherever they come from."""

import pytest


def test_greets_one_name(greet):
    run = greet("ada")
    assert (run.returncode, run.stdout) == (0, "hello, ada!\n")


def test_greets_each_name(greet):
    assert greet("ada", "alan").stdout == "hello, ada!\nhello, alan!\n"


# An id spelling a marker is a keyword: Functionality by the paper's runner, Core by 1.0's.
@pytest.mark.parametrize(
    "name",
    [
        "grace",
        pytest.param("", marks=pytest.mark.error, id="empty"),
        pytest.param("x1", marks=pytest.mark.strict, id="digit"),
        pytest.param("mary-ann", id="functionality"),
    ],
)
def test_names(greet, name):
    run = greet(name)
    if name in ("", "x1"):
        assert run.returncode == 2 and run.stderr == f"invalid name: {name}\n"
    else:
        assert run.stdout == f"hello, {name}!\n"


@pytest.mark.functionality
def test_names_table_first_user(greet, names_table):
    assert greet(*names_table).returncode == 0


@pytest.mark.functionality
def test_names_table_later_user(greet, names_table):
    assert greet(*names_table).returncode == 0


@pytest.mark.slow
def test_names_table_custom_mark(greet, names_table):
    assert greet(*names_table).returncode == 0


@pytest.mark.functionality
class TestClassMarks:
    def test_plain_method(self, greet):
        assert greet("ada").returncode == 0

    def test_method_with_a_failing_fixture(self, greet, names_table):
        assert greet(*names_table).returncode == 0

    @pytest.mark.strict
    def test_method_with_its_own_mark(self, greet):
        assert greet("no name").returncode == 2


@pytest.mark.slow
class TestClassCustomMark:
    def test_inherits_the_custom_mark(self, greet):
        assert greet("linus").returncode == 0


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("guido", marks=pytest.mark.slow),
        pytest.param("ken", marks=pytest.mark.functionality),
    ],
)
def test_param_with_a_custom_mark_and_a_failing_fixture(greet, names_table, name):
    assert greet(name).returncode == 0


@pytest.mark.functionality
@pytest.mark.skip(reason="greeting in other languages is a later checkpoint")
def test_skipped_functionality(greet):
    assert greet("--lang", "fr", "ada").stdout == "bonjour, ada!\n"


@pytest.mark.strict
@pytest.mark.skipif(True, reason="only where the locale is not UTF-8")
def test_skipped_custom(greet):
    assert greet("\u00e9").returncode == 2


@pytest.mark.error
@pytest.mark.xfail(reason="numbers are names by a later spec", strict=True)
def test_xfailed_error(greet):
    assert greet("r2d2").returncode == 0


@pytest.mark.slow
@pytest.mark.xfail(reason="no --shout before checkpoint_2", strict=True)
def test_xfailed_custom(greet):
    assert greet("--shout", "ada").stdout == "HELLO, ADA!\n"


@pytest.mark.regression
def test_teardown_error(greet, scratch_file):
    assert greet(scratch_file.read_text()).returncode == 0


@pytest.mark.strict
def test_teardown_error_custom(greet, scratch_file):
    assert greet("-").returncode == 0 or scratch_file.exists()


@pytest.mark.error
def test_no_name_is_a_usage_error(greet):
    run = greet()
    assert (run.returncode, run.stderr) == (2, "usage: greet NAME...\n")
