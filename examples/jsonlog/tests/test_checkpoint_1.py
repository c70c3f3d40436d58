"""The tests read the program's stderr as JSON, whole: anything else written there (a tool's own
output, the first time it runs) fails them, as in real SCBench problems."""

import json
import subprocess

import pytest


def run(entrypoint_argv, *args):
    result = subprocess.run(
        [*entrypoint_argv, *args], capture_output=True, text=True, timeout=20
    )
    return result, json.loads(result.stderr)


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [("add", "2", "3", 5), ("sub", "2", "3", -1), ("mul", "0x10", "2", 32), ("div", "10.0", "4", 2.5)],
)
def test_an_operation_is_logged(entrypoint_argv, op, a, b, expected):
    result, log = run(entrypoint_argv, op, a, b)
    assert result.returncode == 0
    assert float(result.stdout) == expected
    assert log["op"] == op
    assert log["result"] == expected


@pytest.mark.error
def test_a_division_by_zero_is_logged(entrypoint_argv):
    result, log = run(entrypoint_argv, "div", "1", "0")
    assert result.returncode == 1
    assert log["op"] == "div"
    assert log["error"]
