import pytest

from scbench_ci.problem.model import Checkpoint, Group, Marker
from scbench_ci.results.categorize import group_of, owning_checkpoint

CUSTOM = (
    Marker("slow", "slow", Group.FUNCTIONALITY),
    Marker("strict", "strict", Group.ERROR),
    Marker("legacy", "old", Group.REGRESSION),
)


def _checkpoint(name: str) -> Checkpoint:
    return Checkpoint(
        name=name, version=1, order=0, state=None, include_prior_tests=True, timeout_s=30, env={}
    )


CP1, CP2 = _checkpoint("checkpoint_1"), _checkpoint("checkpoint_2")


@pytest.mark.parametrize(
    ("keywords", "owner", "expected"),
    [
        # (1) a file of an earlier checkpoint is Regression, whatever its markers
        ((), CP1, Group.REGRESSION),
        (("error",), CP1, Group.REGRESSION),
        (("functionality", "slow"), CP1, Group.REGRESSION),
        # (2) error beats everything else
        (("error",), CP2, Group.ERROR),
        (("functionality", "error", "slow"), CP2, Group.ERROR),
        # (3) regression marker
        (("regression",), CP2, Group.REGRESSION),
        (("regression", "slow", "functionality"), CP2, Group.REGRESSION),
        # (4) custom markers take their configured group
        (("slow",), CP2, Group.FUNCTIONALITY),
        (("strict",), CP2, Group.ERROR),
        (("legacy",), CP2, Group.REGRESSION),
        (("strict", "functionality"), CP2, Group.ERROR),
        # (5) functionality
        (("functionality",), CP2, Group.FUNCTIONALITY),
        (("functionality", "parametrize", "xfail"), CP2, Group.FUNCTIONALITY),
        # (6) otherwise Core, including marks nobody configured
        ((), CP2, Group.CORE),
        (("xfail", "skip", "usefixtures", "unknown"), CP2, Group.CORE),
    ],
)
def test_group_rules_in_order(
    keywords: tuple[str, ...], owner: Checkpoint, expected: Group
) -> None:
    assert group_of(keywords, owner.name, CP2, CUSTOM) is expected


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        # `pytest.param(..., id="error")`: the id is a keyword, as good as the mark
        (
            ("test_counts[error]", "parametrize", "pytestmark", "error", "test_checkpoint_2.py"),
            Group.ERROR,
        ),
        (("test_counts[functionality]", "parametrize", "functionality"), Group.FUNCTIONALITY),
        # a function attribute, a class's name: keywords too
        (("test_x", "regression", "test_checkpoint_2.py"), Group.REGRESSION),
        # of two custom markers, the first among the keywords decides, not config.yaml's order
        (("test_x", "strict", "slow"), Group.ERROR),
        (("test_x", "slow", "strict"), Group.FUNCTIONALITY),
        # names that only hold a marker's are not it
        (("test_error", "errors", "Error", "test_x[error-1]"), Group.CORE),
    ],
)
def test_keywords_are_markers_as_scbench_reads_them(
    keywords: tuple[str, ...], expected: Group
) -> None:
    """Both of SCBench's runners take a test's markers from pytest-json-report's keywords
    (`_convert_pytest_report_test_to_result`): those that name a built-in or custom marker."""
    assert group_of(keywords, CP2.name, CP2, CUSTOM) is expected


def test_file_ownership_by_file_name_as_scbench_has_it() -> None:
    """Both of SCBench's runners take a checkpoint from any `test_<name>.py` in the path: a test
    file in a sub-folder is the checkpoint its name says, a helper module the evaluated one's."""
    for file, owner in (
        ("tests/test_checkpoint_1.py", "checkpoint_1"),
        ("tests/extra/test_checkpoint_1.py", "checkpoint_1"),
        ("tests/extra/test_helpers.py", "helpers"),
        ("tests/test_data/check_test.py", "checkpoint_2"),
        ("tests/extra/helpers.py", "checkpoint_2"),
    ):
        assert owning_checkpoint(file, CP2) == owner, file
