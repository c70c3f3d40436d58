"""Hostile submissions through the real pipeline: they get the verdict their code deserves."""

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO_ROOT
from tests.integration.test_examples import EXPECTED, group_counts, scbench_evaluate

HOSTILE = REPO_ROOT / "tests/hostile"


@pytest.mark.parametrize("executor", ["local", "docker"])
def test_a_root_conftest_cannot_rewrite_outcomes(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    shutil.copytree(EXAMPLES / "wordstat/submissions/broken", tmp_path / "submission")
    shutil.copytree(HOSTILE / "root_conftest", tmp_path / "submission", dirs_exist_ok=True)
    # An absolute path: scbench_evaluate joins it onto the problem's folder unchanged.
    run, results = scbench_evaluate(
        "wordstat",
        "checkpoint_1",
        str(tmp_path / "submission"),
        tmp_path / "out",
        "--image",
        test_image,
        executor=executor,
    )
    assert run.returncode == 1, run.stdout
    (checkpoint,) = results["checkpoints"]
    assert (
        group_counts(checkpoint) == EXPECTED[("wordstat", "checkpoint_1", "submissions/broken")][1]
    )
