"""The terminal during a real run in Docker (issue #52): the set-up lines that mean nothing went
wrong stay in setup.log (`--verbose` shows them), and pytest's own lines are whole."""

from __future__ import annotations

import re
from pathlib import Path

from scbench_ci.executors.output import LOG_ONLY_PREFIXES, SETUP_LOG_ONLY
from testing.cli import run_cli
from testing.examples import SharedEvaluations
from testing.paths import EXAMPLES

JSONLOG = EXAMPLES / "jsonlog"


def _evaluate(output: Path, test_image: str, *extra: str) -> str:
    run = run_cli(
        "evaluate", "--problem", JSONLOG, "--checkpoint", "checkpoint_1",
        "--submission", JSONLOG / "solutions/checkpoint_1", "--output", output,
        "--executor", "docker", "--image", test_image, "--no-quality", *extra,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_set_up_lines_that_mean_nothing_went_wrong_stay_in_the_log(
    tmp_path: Path, test_image: str
) -> None:
    """jsonlog's solution has a requirements.txt: uv sets its environment up (or finishes the
    cached one), and says so at length (`Building workspace`, `Uninstalled 1 package`, a
    three-line warning that it could not hardlink)."""
    shown = _evaluate(tmp_path / "default", test_image).splitlines()
    log = (tmp_path / "default/jsonlog/checkpoint_1/setup.log").read_text().splitlines()
    quiet = [line for line in log if line.startswith(SETUP_LOG_ONLY)]
    assert quiet, log  # uv and the caches said what they did
    assert not [line for line in shown if line.startswith(SETUP_LOG_ONLY)]
    verbose = _evaluate(tmp_path / "verbose", test_image, "--verbose").splitlines()
    log = (tmp_path / "verbose/jsonlog/checkpoint_1/setup.log").read_text().splitlines()
    assert log and [line for line in log if not line.startswith(LOG_ONLY_PREFIXES)] == [
        line for line in verbose[2 : 2 + len(log)] if not line.startswith(LOG_ONLY_PREFIXES)
    ]


def test_pytest_s_lines_are_whole(shared_evaluations: SharedEvaluations, test_image: str) -> None:
    """The quick start showed `test_hyphenated_words_split XFAILdea for a later version)`:
    pytest's -vv cut the start of an xfail's reason on a line wider than 72 columns."""
    evaluated = shared_evaluations(
        "wordstat", "checkpoint_2", "solutions/checkpoint_2", "--image", test_image,
        executor="docker",
    )  # fmt: skip
    log = (evaluated.output / "wordstat/checkpoint_2/pytest.log").read_text().splitlines()
    progress = [line for line in log if re.search(r"\[ *\d+%\]$", line)]
    assert len(progress) == 30
    for line in progress:
        assert re.fullmatch(r"\.evaluation_tests/\S+::\S+ [A-Z]+( \(.*\))? +\[ *\d+%\]", line), line
    assert any(line.split()[0].endswith("::test_hyphenated_words_split") for line in progress)
