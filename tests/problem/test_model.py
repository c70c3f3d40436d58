"""The problem model: checkpoint names, and looking a checkpoint up."""

import pytest

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import MAX_CHECKPOINT_NAME_CHARS, is_checkpoint_name
from testing.problems import ProblemFolder


def test_unknown_checkpoint_lists_known_ones(problem_folder: ProblemFolder) -> None:
    problem = load_problem(problem_folder.root)
    with pytest.raises(ProblemError) as error:
        problem.select("checkpoint_9")
    assert str(error.value) == (
        f"{problem_folder.root.resolve() / 'config.yaml'}: checkpoints: no checkpoint "
        "'checkpoint_9' (known: checkpoint_1, checkpoint_2, checkpoint_3)"
    )


def test_every_checkpoint_name_is_a_file_name() -> None:
    assert is_checkpoint_name("checkpoint_1") and is_checkpoint_name("v1.2-final")
    assert is_checkpoint_name("c" * MAX_CHECKPOINT_NAME_CHARS)
    for name in ("", ".", "..", "../x", "a/b", "/a", "a\\b", "-a", "a\n", "a\0", "c" * 101):
        assert not is_checkpoint_name(name), name
