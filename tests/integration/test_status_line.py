"""The status line on a terminal while evaluations run side by side in Docker (issue #52): it
was drawn only when a job started or ended, so it read `0:04 elapsed, ETA -` for a minute; now
its clock ticks every second, with what runs and for how long."""

from __future__ import annotations

import re
from pathlib import Path

from testing.problems import ProblemFolder, waiting_problem
from testing.terminal import run_on_terminal

STATUS = re.compile(r"\r\x1b\[K(\d+):(\d\d) elapsed; (\d+)/2 done: [^\r\n]*")


def test_the_status_line_ticks_every_second_while_nothing_ends(
    tmp_path: Path, test_image: str
) -> None:
    problem, _ = waiting_problem(tmp_path / "problem", checkpoints=2, seconds=5)
    submission = tmp_path / "submission"
    submission.mkdir()
    run = run_on_terminal(
        "evaluate", "--problem", problem.root, "--checkpoint", "all",
        "--submission", submission, "--output", tmp_path / "out", "--jobs", "2",
        "--executor", "docker", "--image", test_image, "--no-quality",
    )  # fmt: skip
    output = run.output
    assert run.returncode == 0, output
    first_finished = output.index("[1/2] problem / ")
    statuses = STATUS.findall(output[:first_finished])
    # Both jobs start at once; then only the clock draws the line, a new second each time.
    seconds = [int(minutes) * 60 + int(rest) for minutes, rest, done in statuses if done == "0"]
    assert len(set(seconds)) >= 4, statuses
    assert sorted(seconds) == seconds
    assert "running: problem / checkpoint_1 (0:0" in output[:first_finished]
    assert "running: problem / checkpoint_2 (0:0" in output[:first_finished] or (
        ", problem / checkpoint_2 (0:0" in output[:first_finished]
    )
    # The last status is followed by the report, on a line of its own.
    assert "\r\x1b[K" not in output[output.index("Verdict: PASSED") :]


GREETS = """
import subprocess


def test_greets(entrypoint_argv):
    done = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=60)
    assert done.stdout == "hello\\n"
"""


def test_check_s_status_line_counts_runs_as_its_verdict_does(
    tmp_path: Path, test_image: str
) -> None:
    """Issue #52: `check`'s status line showed `2 passing, 6 failing`, then it ended `PASSED
    (1 of 1 problem sound)`: the empty submission's failure is what the check expects."""
    problem = ProblemFolder(tmp_path / "greet", {
        "name": "greet", "entry_file": "main", "checkpoints": {"checkpoint_1": {}},
    })  # fmt: skip
    problem.write("tests/test_checkpoint_1.py", GREETS)
    problem.write("checkpoint_1.md", "Print hello.\n")
    problem.write("solutions/checkpoint_1/main.py", "print('hello')\n")
    run = run_on_terminal(
        "check", problem.root, "--jobs", "2", "--executor", "docker", "--image", test_image,
        "--no-quality", "--output", tmp_path / "out",
    )  # fmt: skip
    output = run.output
    assert run.returncode == 0, output
    statuses = re.findall(r"\r\x1b\[K(\d+:\d\d elapsed; [^\r\n]*)", output)
    assert statuses
    assert all(re.search(r"; \d+/\d+ runs done; ", status) for status in statuses), statuses
    assert not [status for status in statuses if "passing" in status or "failing" in status]
    assert "greet / checkpoint_1, empty submission: Core 0/1, all 0/1" in output
    assert "Verdict: PASSED (1 of 1 problem sound)" in output
