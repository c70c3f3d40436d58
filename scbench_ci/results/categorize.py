"""Sort a test into its group by the design's rules, first rule that applies."""

from __future__ import annotations

import re
from collections.abc import Iterable

from scbench_ci.foundation.layout import TESTS_DIR
from scbench_ci.problem.model import Checkpoint, Group, Marker

_TEST_FILE = re.compile(r"test_([^/]+)\.py")
"""SCBench's runner's `_infer_checkpoint_from_file`: searched anywhere in the test's file path."""


def owning_checkpoint(
    file: str, tested: Iterable[Checkpoint], evaluated: Checkpoint, *, by_file_name: bool = False
) -> str:
    """The name of the checkpoint a test file belongs to. Without `by_file_name`: one of the
    tested checkpoints' own test files, else (a helper module, a test file in a sub-folder) the
    evaluated one. With it (SCBench's runner): the name any `test_<name>.py` in the file's path
    says, wherever it is, else the evaluated checkpoint."""
    if by_file_name:
        found = _TEST_FILE.search(file)
        return found.group(1) if found else evaluated.name
    for checkpoint in tested:
        if file == f"{TESTS_DIR}/{checkpoint.test_file}":
            return checkpoint.name
    return evaluated.name


def group_of(
    markers: Iterable[str],
    owner: str,
    evaluated: Checkpoint,
    custom_markers: Iterable[Marker],
) -> Group:
    """`owner`: the name of the checkpoint the test's file belongs to."""
    marks = set(markers)
    if owner != evaluated.name:
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
