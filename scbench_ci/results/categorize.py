"""Sort a test into its group by the design's rules, first rule that applies."""

from __future__ import annotations

from collections.abc import Iterable

from scbench_ci.executors.base import TESTS_DIR
from scbench_ci.problem.model import Checkpoint, Group, Marker


def owning_checkpoint(file: str, tested: Iterable[Checkpoint], evaluated: Checkpoint) -> Checkpoint:
    """The checkpoint a test file belongs to; helpers in sub-folders belong to the evaluated one."""
    for checkpoint in tested:
        if file == f"{TESTS_DIR}/{checkpoint.test_file}":
            return checkpoint
    return evaluated


def group_of(
    markers: Iterable[str],
    owner: Checkpoint,
    evaluated: Checkpoint,
    custom_markers: Iterable[Marker],
) -> Group:
    marks = set(markers)
    if owner.name != evaluated.name:
        return Group.REGRESSION
    if "error" in marks:
        return Group.ERROR
    if "regression" in marks:
        return Group.REGRESSION
    for marker in custom_markers:
        if marker.name in marks:
            return marker.group
    if "functionality" in marks:
        return Group.FUNCTIONALITY
    return Group.CORE
