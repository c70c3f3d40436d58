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
    ("markers", "owner", "expected"),
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
def test_group_rules_in_order(markers: tuple[str, ...], owner: Checkpoint, expected: Group) -> None:
    assert group_of(markers, owner.name, CP2, CUSTOM) is expected


def test_file_ownership() -> None:
    tested = (CP1, CP2)
    assert owning_checkpoint("tests/test_checkpoint_1.py", tested, CP2) == "checkpoint_1"
    assert owning_checkpoint("tests/test_checkpoint_2.py", tested, CP2) == "checkpoint_2"
    # a test file in a sub-folder or a helper module belongs to the evaluated checkpoint
    assert owning_checkpoint("tests/extra/test_checkpoint_1.py", tested, CP2) == "checkpoint_2"
    assert owning_checkpoint("tests/extra/helpers.py", tested, CP2) == "checkpoint_2"


def test_file_ownership_by_file_name_as_scbench_has_it() -> None:
    """SCBench's runner takes a checkpoint from any `test_<name>.py` in the path."""
    tested = (CP1, CP2)
    for file, owner in (
        ("tests/test_checkpoint_1.py", "checkpoint_1"),
        ("tests/extra/test_checkpoint_1.py", "checkpoint_1"),
        ("tests/extra/test_helpers.py", "helpers"),
        ("tests/test_data/check_test.py", "checkpoint_2"),
        ("tests/extra/helpers.py", "checkpoint_2"),
    ):
        assert owning_checkpoint(file, tested, CP2, by_file_name=True) == owner, file
