"""`scbench-ci check`'s flags, read into CheckOptions."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.cli import check
from scbench_ci.cli.main import parse_arguments
from testing.paths import CHECK_REPO_PROBLEMS


def test_the_oracle_policy_and_repeat_make_the_runs_options(tmp_path: Path) -> None:
    args = parse_arguments(
        [
            *("check", str(CHECK_REPO_PROBLEMS), "--output", str(tmp_path), "--jobs", "3"),
            *("--oracle-policy", "any-case", "--repeat", "4", "--changed-since", "main"),
        ]
    )
    options = check.options(args)
    runs = options.runs
    assert (runs.policy, runs.repeat, runs.jobs) == ("any-case", 4, 3)
    assert (runs.checkpoint, runs.problems) == ("all", (CHECK_REPO_PROBLEMS,))
    assert options.changed_since == "main"
