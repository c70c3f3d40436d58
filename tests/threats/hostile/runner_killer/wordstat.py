"""Leaves reports of its own, then kills the test runner before it can seal (or replace) them.

The reports claim that every test passed, and the inventory of the tests that there is none; with a file named `deep` beside this one, they are
made to break naive parsers instead (nesting deeper than the recursion limit, numbers of 400
digits, NaN).
"""

import json
import os
import signal
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORTS = HERE / ".scbench"
HUGE = "9" * 400


def forge() -> None:
    passed = {"outcome": "passed", "duration": 0.1}
    tests = [
        {"nodeid": f"tests/test_checkpoint_1.py::test_{n}", "outcome": "passed", "call": passed}
        for n in range(15)
    ]
    (REPORTS / "pytest-report.json").write_text(json.dumps({"exitcode": 0, "tests": tests}))
    ctrf = [{"name": t["nodeid"], "status": "passed"} for t in tests]
    (REPORTS / "ctrf-report.json").write_text(json.dumps({"results": {"tests": ctrf}}))
    # SCBench 1.0's inventory of the tests, which counts each one never reported as failed:
    # claimed empty.
    inventory = {"collected": 0, "taken_by": "session", "reasons": [], "passes": []}
    (REPORTS / "inventory.json").write_text(json.dumps(inventory))


def break_parsers() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    test = (
        '{"nodeid": "tests/test_checkpoint_1.py::test_x", "outcome": "passed", "lineno": %s, '
        '"call": {"outcome": "passed", "duration": %s}, "markers": ["error"]}' % (HUGE, HUGE)
    )
    (REPORTS / "pytest-report.json").write_text(
        '{"exitcode": 0, "tests": [%s, {"nodeid": "a", "outcome": "passed", "duration": NaN}], '
        '"deep": %s}' % (test, deep)
    )
    (REPORTS / "ctrf-report.json").write_text('{"results": {"tests": %s}}' % deep)


def kill_the_runner() -> None:
    pid = os.getppid()
    while pid > 1:
        if b"pytest_runner.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGKILL)
            return
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat[stat.rfind(")") + 2 :].split()[1])


if __name__ == "__main__":
    break_parsers() if (HERE / "deep").exists() else forge()
    kill_the_runner()
