"""testing/fidelity/scbench_flow.py stages the tests SCBench's PytestRunner selects: the
checkpoint's, and with `include_prior_tests` (its default) every earlier checkpoint's."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.fidelity import scbench_flow
from testing.paths import REPO_ROOT

WORDSTAT = REPO_ROOT / "examples/wordstat"
CHECKPOINTS = ["checkpoint_1", "checkpoint_2", "checkpoint_3"]


@pytest.mark.parametrize(
    ("checkpoint", "include_prior_tests", "selected"),
    [
        ("checkpoint_2", True, {"test_checkpoint_1.py", "test_checkpoint_2.py"}),
        ("checkpoint_3", False, {"test_checkpoint_3.py"}),
        ("checkpoint_1", False, {"test_checkpoint_1.py"}),
    ],
)
def test_the_tests_staged_are_the_ones_scbench_selects(
    tmp_path: Path, checkpoint: str, include_prior_tests: bool, selected: set[str]
) -> None:
    workspace = tmp_path / "workspace"
    scbench_flow.stage(
        WORDSTAT,
        CHECKPOINTS,
        checkpoint,
        WORDSTAT / "solutions" / checkpoint,
        workspace,
        {},
        include_prior_tests=include_prior_tests,
    )
    staged = {path.name for path in (workspace / scbench_flow.WORKSPACE_TEST_DIR).iterdir()}
    assert {name for name in staged if name.startswith("test_")} == selected
    assert {"conftest.py", "known_failures.txt"} <= staged
