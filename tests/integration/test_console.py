"""What the console shows during and after real runs of examples/marks under `any-core-cases` by
the paper's rules (its checkpoint_2 has no Core test there, so that policy fails it): the tests'
output without the test runner's own lines, progress lines that say why a checkpoint failed, a
recap of what failed before the verdict, and `check`'s progress instead of its runs' output."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.standalone.pytest_runner import SEAL_PREFIX, START_PREFIX
from testing.cli import run_cli
from testing.examples import EXECUTOR
from testing.paths import EXAMPLES

MARKS = EXAMPLES / "marks"
POLICY = ("--policy", "any-core-cases", "--scbench", "paper")
NO_CORE = "no Core test passed (policy any-core-cases needs at least one)"
RECAP = [
    "1 checkpoint failed:",
    f"  marks / checkpoint_2: {NO_CORE}",
    "Failing tests in checkpoints that pass: 8 tests in 1 of 2 checkpoints (the policy "
    "any-core-cases does not need them to pass)",
    "  marks / checkpoint_1: 8 failing tests",
    "    The main cause (6 of 8 failing tests): FileNotFoundError: [Errno 2] No such file or "
    "directory: 'WORKSPACE/.evaluation_tests/data/names.csv'",
    "    e.g. tests/test_checkpoint_1.py::test_names_table_first_user",
    "    and 1 more cause, in the summary",
    rules_line("paper"),
    "Verdict: FAILED (1 of 2 checkpoints pass the policy any-core-cases, which asks that at least "
    "one Core test passes)",
]
"""What a run of both ends with: the checkpoint that failed, the tests that fail in the one
that passed (issue #52), and the verdict."""


def scbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--executor", EXECUTOR, timeout=900)


def evaluate(output: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return scbench(
        "evaluate",
        *("--problem", MARKS, "--checkpoint", "all", "--output", output, *POLICY, *extra),
        *("--submission", MARKS / "solutions/{checkpoint}"),
    )


def timeless(text: str) -> list[str]:
    """The lines, each duration as `T s`, the local executor's workspace as `WORKSPACE`, and
    the end of a cause that its length cut (it depends on the workspace's) as it would end."""
    text = re.sub(r"/\S*/scbench-run-[^/\s]+/workspace", "WORKSPACE", text)
    text = re.sub(
        r"(directory: 'WORKSPACE/)[^\n]*…$",
        r"\1.evaluation_tests/data/names.csv'",
        text,
        flags=re.M,
    )
    return re.sub(r"\b\d+\.\d s\b", "T s", text).splitlines()


def test_a_streamed_run_shows_the_tests_output_and_keeps_the_runner_s_lines_in_the_logs(
    tmp_path: Path,
) -> None:
    run = evaluate(tmp_path, "--jobs", "1")
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert "=== marks / checkpoint_2 (" in run.stdout
    assert sum("test session starts" in line for line in lines) == 2
    assert [line for line in lines if line.startswith((SEAL_PREFIX, START_PREFIX))] == []
    for checkpoint in ("checkpoint_1", "checkpoint_2"):
        log = (tmp_path / "marks" / checkpoint / "pytest.log").read_text().splitlines()
        assert sum(line.startswith(START_PREFIX) for line in log) == 1
        assert sum(line.startswith(SEAL_PREFIX) for line in log) == 1
    assert timeless(run.stdout)[-len(RECAP) - 2 :] == [
        "1 of 2 checkpoints passed (1 problem, T s, 1 job side by side)",
        *RECAP,
        f"Results: {tmp_path}/results.json",
    ]


@pytest.mark.parametrize("shown", ["--quiet", "progress"])
def test_a_run_side_by_side_says_why_on_its_progress_line_and_recaps(
    shown: str, tmp_path: Path
) -> None:
    run = evaluate(tmp_path, "--jobs", "2", *(["--quiet"] if shown == "--quiet" else []))
    assert run.returncode == 1, run.stderr
    lines = timeless(run.stdout)
    progress = [line for line in lines if line.startswith("[")]
    if shown == "--quiet":
        assert progress == []
    else:
        assert sorted(line[6:] for line in progress) == [
            "marks / checkpoint_1: passed, Core 3/3, all 10/22 (4 skipped), T s",
            f"marks / checkpoint_2: failed, Core 0/0, all 4/4, T s — {NO_CORE}",
        ]
    assert lines[-len(RECAP) - 1 : -1] == RECAP


def test_check_shows_a_line_per_run_not_the_runs_output(tmp_path: Path) -> None:
    # The reference solutions' code quality (tests/outputs/test_check_console.py) would depend on
    # a Python 3.12 on this machine (the local executor's measure).
    run = scbench(
        "check", MARKS, "--jobs", "1", "--no-quality", "--scbench", "paper", "--output", tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert timeless(run.stdout) == [
        "[1/8] marks / checkpoint_1, tests collected only: done, T s",
        "[2/8] marks / checkpoint_1, reference solution (run 1/2): "
        "Core 3/3, all 10/22 (4 skipped), T s",
        "[3/8] marks / checkpoint_1, reference solution (run 2/2): "
        "Core 3/3, all 10/22 (4 skipped), T s",
        "[4/8] marks / checkpoint_1, empty submission: Core 0/3, all 1/22 (4 skipped), T s",
        "[5/8] marks / checkpoint_2, tests collected only: done, T s",
        "[6/8] marks / checkpoint_2, reference solution (run 1/2): Core 0/0, all 4/4, T s",
        "[7/8] marks / checkpoint_2, reference solution (run 2/2): Core 0/0, all 4/4, T s",
        "[8/8] marks / checkpoint_2, empty submission: Core 0/0, all 2/4, T s",
        "",
        "",
        "marks  passed",
        "",
        "Oracle policy all-cases: every test passes; 2 oracle runs of each checkpoint; T s",
        rules_line("paper"),
        "Verdict: PASSED (1 of 1 problem sound)",
        f"Results: {tmp_path}/results.json",
    ]
    # The empty submission's expected failures are in its log.
    log = (tmp_path / "marks" / "checkpoint_1" / "empty" / "pytest.log").read_text()
    assert "10 failed, 2 passed, 2 skipped, 2 xfailed, 8 errors" in log
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("## ✅ PASSED (1 of 1 problem sound)\n")
