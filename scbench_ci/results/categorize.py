"""Sort a test into its group by SCBench's rules, first rule that applies."""

from __future__ import annotations

import re
from collections.abc import Iterable

from scbench_ci.problem.model import BUILTIN_MARKERS, Checkpoint, Group, Marker

_TEST_FILE = re.compile(r"test_([^/]+)\.py")
"""SCBench's runner's `_infer_checkpoint_from_file`: searched anywhere in the test's file path."""
_BUILTIN = frozenset(marker.name for marker in BUILTIN_MARKERS)


def owning_checkpoint(file: str, evaluated: Checkpoint) -> str:
    """The name of the checkpoint a test file belongs to, as both of SCBench's runners take it
    (`_infer_checkpoint_from_file`): the name any `test_<name>.py` in the file's path says,
    wherever it is (a `tests/sub/test_x.py` is checkpoint `x`'s), else the evaluated one."""
    found = _TEST_FILE.search(file)
    return found.group(1) if found else evaluated.name


def group_of(
    keywords: Iterable[str],
    owner: str,
    evaluated: Checkpoint,
    custom_markers: Iterable[Marker],
) -> Group:
    """`keywords`: pytest-json-report's keywords of the test, in the report's order; those that
    name a built-in or a custom marker are its markers, as SCBench's runners (the paper's and
    1.0's run, `PytestRunner._convert_pytest_report_test_to_result`) take them: a parameter id
    `error` is as good as the mark, and of two custom markers the first among the keywords
    decides. `owner`: the name of the checkpoint the test's file belongs to."""
    if owner != evaluated.name:
        return Group.REGRESSION
    groups = {marker.name: marker.group for marker in custom_markers}
    markers = [keyword for keyword in keywords if keyword in groups or keyword in _BUILTIN]
    if "error" in markers:
        return Group.ERROR
    if "regression" in markers:
        return Group.REGRESSION
    for marker in markers:
        if marker in groups:
            return groups[marker]
    if "functionality" in markers:
        return Group.FUNCTIONALITY
    return Group.CORE
