"""What a user sees at the end of a real run in Docker (issue #52), as `scbench-ci evaluate -q`
prints it: the main cause of a failing checkpoint in the words of its summary, the failing tests
of a checkpoint that passes, and the tests that could not reach the network, with the host."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scbench_ci.trust.markdown import html_text, text
from testing.cli import run_cli
from testing.examples import SharedEvaluations
from testing.problems import ProblemFolder
from testing.results import checkpoint_documents

CAUSE = re.compile(r"^    (The cause \(.*?\)|The main cause \(.*?\)|The first failure): (.*)$")


def _cause(stdout: str) -> tuple[str, str]:
    """The console's cause line: its title and the cause."""
    found = [CAUSE.match(line) for line in stdout.splitlines()]
    (match,) = [m for m in found if m]
    return match.group(1), match.group(2)


def test_a_failing_run_ends_with_its_cause_as_its_summary_says_it(
    shared_evaluations: SharedEvaluations, test_image: str
) -> None:
    evaluated = shared_evaluations(
        "wordstat", "checkpoint_2", "submissions/broken", "--image", test_image, executor="docker"
    )
    stdout = evaluated.run.stdout
    assert evaluated.run.returncode == 1, stdout + evaluated.run.stderr
    title, cause = _cause(stdout)
    lines = stdout.splitlines()
    why = lines.index("  why it failed: 8 Core tests failed")
    assert lines[why + 1].startswith(f"    {title}: ")
    assert lines[why + 2] == "    in tests/test_checkpoint_2.py::test_several_files"
    summary = (evaluated.output / "summary.md").read_text()
    # The same cause, first among the summary's causes: its folded line.
    assert "<details><summary><code>tests/test_checkpoint_2.py::test_several_files</code> " in (
        summary
    )
    assert html_text(cause) in summary
    # The first screen: the verdict and the cause are in the last lines a terminal shows.
    assert len(lines) < 24


def test_a_passing_run_names_its_failing_tests(
    shared_evaluations: SharedEvaluations, test_image: str
) -> None:
    evaluated = shared_evaluations(
        "wordstat", "checkpoint_2", "solutions/checkpoint_2", "--image", test_image,
        executor="docker",
    )  # fmt: skip
    stdout = evaluated.run.stdout
    assert evaluated.run.returncode == 0, stdout + evaluated.run.stderr
    assert (
        "  1 failing test (the policy core-cases does not need it to pass)\n"
        "    The cause (1 test): FileNotFoundError: [Errno 2] No such file or directory: "
        "'/workspace/.evaluation_tests/assets/corpus/frequencies.csv'\n"
        "    in tests/test_checkpoint_2.py::test_top_matches_frequency_table\n"
    ) in stdout
    summary = (evaluated.output / "summary.md").read_text()
    assert (
        "#### checkpoint\\_2: 1 failing test (the policy core-cases does not need it to pass)"
    ) in summary


NETWORK_TEST = """
import subprocess


def test_adds():
    assert 1 + 1 == 2


def test_fetches_the_index(entrypoint_argv):
    done = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0


def test_fetches_it_again(entrypoint_argv):
    done = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
"""
FETCH = """
import urllib.request

# .invalid never resolves (RFC 2606), wherever this runs.
urllib.request.urlopen("https://index.crates.invalid/config.json", timeout=20)
"""


def test_tests_that_could_not_reach_the_network_are_counted_apart(
    tmp_path: Path, test_image: str
) -> None:
    """As cargo that cannot reach crates.io: the tests fail, the verdict is SCBench's, and the
    console, the summary and results.json say that the network decided it, and which host."""
    problem = ProblemFolder(tmp_path / "fetch", {
        "name": "fetch", "entry_file": "fetch", "checkpoints": {"checkpoint_1": {}},
    })  # fmt: skip
    problem.write("tests/test_checkpoint_1.py", NETWORK_TEST)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "fetch.py").write_text(FETCH)
    output = tmp_path / "out"
    run = run_cli(
        "evaluate", "--problem", problem.root, "--checkpoint", "checkpoint_1",
        "--submission", submission, "--output", output, "--executor", "docker",
        "--image", test_image, "--quiet", "--no-quality",
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    unreached = (
        "2 failing tests could not reach the network (index.crates.invalid): SCBench counts "
        "them failed, though they say nothing of the answers"
    )
    assert "  why it failed: 2 Core tests failed\n" in run.stdout
    assert f"    {unreached}\n" in run.stdout
    summary = (output / "summary.md").read_text()
    assert "all tests: 1 of 3 pass, 2 fail (2 could not reach the network)" in summary
    assert f"**Network**: {text(unreached)}.\n" in summary
    (checkpoint,) = checkpoint_documents(json.loads((output / "results.json").read_text()))
    assert checkpoint["network"] == {"tests": 2, "hosts": ["index.crates.invalid"]}
    assert checkpoint["passed"] is False
