"""Every line the CLI writes in a workflow step is one line, and inert: an error, a warning, a
refusal, a progress line or a report that quotes a hostile name or message starts no workflow
command, whatever line breaks and `::` it holds.

The runner reads each line of a step's output (stdout and stderr alike) for `::name::` after
white space and `##[name]` anywhere (`processed_commands` reads them as it does). Before, a
problem folder whose name held line breaks made `scbench-ci check` print live `::add-mask::`,
`::warning` and `::stop-commands::` lines: error lines kept the name's line breaks, and the
refusal quoted the name raw.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ExitCode
from scbench_ci.job.reports import Status
from scbench_ci.results.file import write_results
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.results import make_checkpoint, make_run, make_test
from tests.threats.conftest import Threat, no_traceback
from tests.threats.test_hostile_injection import processed_commands

COMMANDS = (
    "\n::add-mask::PWN-MASK\n  ::warning title=PWN::PWN-WARNING\r::error::PWN-ERROR"
    "\u2028::stop-commands::PWN-TOKEN\n##[warning]PWN-OLD"
)
"""What a hostile name or message carries: every way a line can start a workflow command."""
HOSTILE_NAME = f"prob{COMMANDS}"


def in_a_workflow_step() -> dict[str, str]:
    return {**os.environ, "GITHUB_ACTIONS": "true"}


def assert_no_command_of_theirs(output: str) -> None:
    """Only scbench-ci's own commands: the streamed output's stop and resume, annotations."""
    for command in processed_commands(output):
        assert "PWN" not in command.name + command.data + str(command.properties), command
    assert "PWN-MASK" not in [c.data for c in processed_commands(output)]


def assert_one_line_each(output: str, quoted: str) -> None:
    """What quotes the hostile text quotes it on one line, escaped."""
    lines = [line for line in output.splitlines() if quoted in line]
    assert lines, output
    for line in lines:
        assert "\\n::add-mask::PWN-MASK\\n  ::warning" in line, line


@pytest.fixture
def hostile_problem(tmp_path: Path) -> Path:
    folder = tmp_path / HOSTILE_NAME
    shutil.copytree(EXAMPLES / "wordstat", folder)
    return folder


def test_check_refuses_a_hostile_folder_name_on_one_line(hostile_problem: Path) -> None:
    run = run_cli("check", hostile_problem, "--executor", "local", env=in_a_workflow_step())
    assert run.returncode == ExitCode.USAGE, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert_no_command_of_theirs(output)
    assert_one_line_each(run.stderr, "the problem folder's name")
    assert "the problem folder's name 'prob\\n::add-mask::PWN-MASK" in run.stderr


def test_evaluate_s_errors_quote_hostile_paths_on_one_line(
    hostile_problem: Path, tmp_path: Path
) -> None:
    runs = [
        run_cli(
            "evaluate",
            *("--problem", hostile_problem, "--checkpoint", "checkpoint_1"),
            *("--submission", tmp_path / f"missing{COMMANDS}"),
            env=in_a_workflow_step(),
        ),
        run_cli(
            "evaluate",
            *("--problem", EXAMPLES / "wordstat", "--checkpoint", f"c{COMMANDS}"),
            *("--submission", tmp_path),
            env=in_a_workflow_step(),
        ),
        run_cli(
            "evaluate",
            *("--problem", EXAMPLES / "wordstat", "--checkpoint", "checkpoint_1"),
            *("--submission", tmp_path, "--policy", f"p{COMMANDS}"),
            env=in_a_workflow_step(),
        ),
    ]
    for run in runs:
        assert run.returncode == ExitCode.USAGE, run.stdout + run.stderr
        assert_no_command_of_theirs(run.stdout + run.stderr)
        assert_one_line_each(run.stderr, "PWN-MASK")


def test_several_errors_are_each_one_line(tmp_path: Path) -> None:
    """The run's problems are listed together, a line each (`--select` splits at white space:
    what its values bring is `##[` and `::`)."""
    run = run_cli(
        "evaluate",
        *("--problem", EXAMPLES / "wordstat", "--checkpoint", "all", "--submission", tmp_path),
        *("--select", "one::error::PWN-ERROR", "--select", "##[warning]PWN-OLD"),
        env=in_a_workflow_step(),
    )
    assert run.returncode == ExitCode.USAGE, run.stdout + run.stderr
    assert_no_command_of_theirs(run.stdout + run.stderr)
    lines = run.stderr.splitlines()
    assert lines[0].startswith("scbench-ci: error: 2 problems with the run:"), run.stderr
    assert [line.startswith("  - --select: ") for line in lines[1:]] == [True, True], run.stderr


def test_summary_and_history_of_hostile_text(tmp_path: Path) -> None:
    test = replace(
        make_test("test_x", Status.FAILED),
        message=f"assert 1 == 2{COMMANDS}",
        traceback=f"E   AssertionError{COMMANDS}",
    )
    folder = tmp_path / "run"
    folder.mkdir()
    results = write_results(make_run(make_checkpoint(test)), folder)
    for args in (("summary", results, "--details", "all"), ("history", results)):
        run = run_cli(*args, env=in_a_workflow_step())
        assert run.returncode == 0, run.stderr
        assert_no_command_of_theirs(run.stdout + run.stderr)
    missing = run_cli("summary", tmp_path / f"gone{COMMANDS}.json", env=in_a_workflow_step())
    assert missing.returncode == ExitCode.USAGE
    assert_no_command_of_theirs(missing.stdout + missing.stderr)
    assert_one_line_each(missing.stderr, "no such file")


def test_merge_s_refusal_of_a_hostile_shard(tmp_path: Path) -> None:
    shard = tmp_path / f"shard{COMMANDS}.json"
    shard.write_text(json.dumps({"schema_version": f"1{COMMANDS}"}))
    run = run_cli("merge", shard, "--output", tmp_path / "out", env=in_a_workflow_step())
    assert run.returncode == ExitCode.USAGE, run.stdout + run.stderr
    assert_no_command_of_theirs(run.stdout + run.stderr)
    assert_one_line_each(run.stderr, "schema_version")


@pytest.mark.usefixtures("docker_client")
def test_warnings_and_progress_during_a_run(threat: Threat) -> None:
    """A link the submission brings that leaves it is left out with a warning naming it; the
    run's progress names the submission's folder."""
    (threat.submission / f"link{COMMANDS}").symlink_to(threat.outside / "file.txt")
    submission = threat.submission.rename(threat.submission.with_name(f"sub{COMMANDS}"))
    run = threat.cli(
        "evaluate",
        *("--problem", threat.problem.root, "--checkpoint", "checkpoint_1"),
        *("--submission", submission, "--output", threat.output),
        *("--executor", "docker", "--image", threat.image, "--jobs", "1"),
        env={"GITHUB_ACTIONS": "true"},
    )
    no_traceback(run)
    assert run.returncode == ExitCode.FAILED, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert_no_command_of_theirs(output)
    assert_one_line_each(output, "link")
