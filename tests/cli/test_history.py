"""`scbench-ci history` and `evaluate --history`, through the real CLI: real runs of an example
carry their history forward from the baseline, and the trends print for a terminal."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import write_results
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.results import make_checkpoint, make_run, make_test

pytestmark = pytest.mark.slow

WORDSTAT = EXAMPLES / "wordstat"
SHA = "0123456789abcdef0123456789abcdef01234567"


def _evaluate(submission: str, output: Path, *flags: str, sha: str = SHA) -> None:
    done = run_cli(
        *("evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1"),
        *("--submission", WORDSTAT / submission, "--executor", "local", "--quiet"),
        *("--output", output, *flags),
        env={**os.environ, "GITHUB_SHA": sha},
    )
    assert done.returncode in (0, 1), done.stderr


def test_real_runs_carry_their_history_and_print_its_trends(tmp_path: Path) -> None:
    _evaluate("solutions/checkpoint_1", tmp_path / "night1", sha="")
    _evaluate("submissions/broken", tmp_path / "night2", "--baseline", str(tmp_path / "night1"))

    results = json.loads((tmp_path / "night2" / "results.json").read_text())
    runs = results["history"]["runs"]
    assert [run["commit"] for run in runs] == [None, SHA]
    assert [run["checkpoints"]["wordstat/checkpoint_1"]["passed"] for run in runs] == [True, False]
    # The broken submission's 9 failing tests (an xfail is neither pass nor failure).
    assert len(results["trends"]["failing"]) == 9
    assert results["trends"]["pass_rates"][1]["rates"]["Core"] == 0.25

    # The output folder, as --baseline takes it (issue #52: only the file was taken).
    done = run_cli("history", tmp_path / "night2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("History: 2 runs of at most 30, ")
    assert lines[5].split()[3:] == ["0123456", "25.0%", "0.0%", "75.0%", "0.0%"]
    since = f"{runs[1]['started_at'][:10]} {runs[1]['started_at'][11:16]}"
    failing = lines.index("Failing now: 9 tests in 1 checkpoint, the longest failing first")
    assert lines[failing + 1 : failing + 4] == [
        "  wordstat/checkpoint_1: 9 failing tests, 9 causes",
        # Failing as long as each other, in SCBench 1.0's inventory order.
        "    1 test: AssertionError: assert {'lines': 1, 'words': 3, 'chars': 18} == {'lines': 1, "
        "'words': 3, 'chars': 14}",
        "      tests/test_checkpoint_1.py::test_chars_are_code_points, failing since "
        f"{since}, 1 run",
    ]
    assert lines[-1] == "    … and 4 more causes"


def test_tests_failing_the_same_way_are_one_cause_per_checkpoint(tmp_path: Path) -> None:
    """Issue #52: `history` listed 49 failing tests one per line, where the summary has one
    cause."""
    missing = "NameError: name 'values_equal' is not defined"
    run = None
    for day in (1, 2):
        failing = [
            replace(make_test(f"t{i}", Status.FAILED), message=missing)
            for i in range(49 if day == 2 else 40)
        ]
        tonight = make_run(
            make_checkpoint(*failing),
            make_checkpoint(make_test("x", Status.FAILED), name="checkpoint_2"),
            started_at=f"2026-05-0{day}T01:30:00+00:00",
        )
        run = with_history(tonight, 10, None, carried(run))
    assert run is not None
    write_results(run, tmp_path)
    done = run_cli("history", tmp_path)
    assert done.stdout.endswith(
        "Failing now: 50 tests in 2 checkpoints, the longest failing first\n"
        "  demo/checkpoint_1: 49 failing tests\n"
        f"    49 tests: {missing}\n"
        "      e.g. tests/test_checkpoint_1.py::t0, failing since 2026-05-01 01:30, 2 runs\n"
        "  demo/checkpoint_2: 1 failing test\n"
        "    1 test: x broke\n"
        "      tests/test_checkpoint_1.py::x, failing since 2026-05-01 01:30, 2 runs\n"
    )


def test_history_0_writes_none(tmp_path: Path) -> None:
    _evaluate("solutions/checkpoint_1", tmp_path / "out", "--history", "0")
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert (results["history"], results["trends"]) == (None, None)
    done = run_cli("history", tmp_path / "out" / "results.json")
    assert done.stdout.endswith(": no history (the run was made with --history 0, or is a check)\n")


def test_bad_windows_and_commits_are_one_line(tmp_path: Path) -> None:
    done = run_cli("evaluate", "--problem", WORDSTAT, "--checkpoint", "c", "--history", "101")
    assert done.returncode == 2
    assert "argument --history: must be at most 100, got '101'" in done.stderr
    done = run_cli(
        *("evaluate", "--problem", WORDSTAT, "--checkpoint", "checkpoint_1", "--executor"),
        *("local", "--submission", WORDSTAT / "solutions" / "checkpoint_1"),
        *("--output", tmp_path / "out"),
        env={**os.environ, "GITHUB_SHA": "refs/heads/main\x1b[2J"},
    )
    assert done.returncode == 2
    assert done.stderr == (
        "scbench-ci: error: GITHUB_SHA: 'refs/heads/main\\x1b[2J' is not a commit hash "
        "(lowercase hex)\n"
    )


def test_the_trends_print_as_a_terminal_shows_them(tmp_path: Path) -> None:
    """A test id no history keeps (over 500 characters) is in none of them."""
    run = None
    for day, status in enumerate([Status.PASSED, Status.FAILED, Status.PASSED, Status.FAILED], 1):
        tests = (make_test("flips", status), make_test("id" + "x" * 600, status))
        same_inputs = replace(make_checkpoint(*tests), fingerprint="c" * 64)
        tonight = make_run(same_inputs, started_at=f"2026-05-0{day}T01:30:00+00:00")
        run = with_history(tonight, 10, None, carried(run))
    assert run is not None
    done = run_cli("history", write_results(run, tmp_path))
    assert done.stdout == (
        "History: 4 runs of at most 10, 2026-05-01 01:30 to 2026-05-04 01:30\n"
        "\n"
        "Pass rate per run, oldest first:\n"
        "  run  started           commit            Core  Functionality          Error"
        "     Regression\n"
        "    1  2026-05-01 01:30  -               100.0%              -              -"
        "              -\n"
        "    2  2026-05-02 01:30  -                 0.0%              -              -"
        "              -\n"
        "    3  2026-05-03 01:30  -               100.0%              -              -"
        "              -\n"
        "    4  2026-05-04 01:30  -                 0.0%              -              -"
        "              -\n"
        "\n"
        "Flaky (the same inputs gave different outcomes): 1\n"
        "  demo/checkpoint_1  tests/test_checkpoint_1.py::flips: failed 2 of 4, 3 flips\n"
        "Newly flaky (every flip in the last 5 runs): 0\n"
        "Failing now: 1 test in 1 checkpoint, the longest failing first\n"
        "  demo/checkpoint_1: 1 failing test\n"
        "    1 test: flips broke\n"
        "      tests/test_checkpoint_1.py::flips, failing since 2026-05-04 01:30, 1 run\n"
    )
