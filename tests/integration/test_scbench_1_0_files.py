"""SCBench's files as SCBench 1.0 writes them: each bundled example's (and the inventory's test
problem's) `evaluation.json`, made with nothing configured, is the one SCBench 1.0's own code wrote
for the same checkpoint and submission, byte for byte but its duration, and the fields its
metrics read from it (`get_evaluation_metrics`) are those of our `checkpoint_results.jsonl`'s row.
What SCBench 1.0 wrote: tests/data/scbench/v1/, recorded by scripts/scbench_1_0_expectations.py
from SCBench's checkout (see there)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from testing.cli import run_cli
from testing.examples import SharedEvaluations
from testing.paths import REPO_ROOT

pytestmark = pytest.mark.integration

RECORDED = REPO_ROOT / "tests/data/scbench/v1"
KEYWORDS = REPO_ROOT / "tests/data/inventory/keywords"
EXAMPLE_CASES = (
    ("wordstat", "checkpoint_1", "solutions/checkpoint_1"),
    ("wordstat", "checkpoint_2", "solutions/checkpoint_2"),
    ("wordstat", "checkpoint_3", "solutions/checkpoint_3"),
    ("wordstat", "checkpoint_1", "submissions/broken"),
    ("kvserver", "checkpoint_1", "solutions/checkpoint_1"),
    ("kvserver", "checkpoint_2", "solutions/checkpoint_2"),
    ("marks", "checkpoint_1", "solutions/checkpoint_1"),
    ("marks", "checkpoint_2", "solutions/checkpoint_2"),
    ("settings", "checkpoint_1", "solutions/checkpoint_1"),
    ("jsonlog", "checkpoint_1", "solutions/checkpoint_1"),
)
KEYWORDS_CASES = (
    ("checkpoint_1", "solutions/checkpoint_1"),
    ("checkpoint_10", "solutions/checkpoint_10"),
    # Its submission kills pytest mid-run: every test SCBench collected is failed.
    ("checkpoint_1", "submissions/killer"),
)


def case_name(checkpoint: str, submission: str) -> str:
    """As scripts/scbench_1_0_expectations.py names a case's folder."""
    own = submission == f"solutions/{checkpoint}"
    return checkpoint if own else f"{checkpoint}-{Path(submission).name}"


_DURATION = re.compile(r'\n  "duration": [0-9.e+-]+,\n')


def _without_duration(path: Path) -> str:
    """The file's text, its duration (the one line that differs from run to run) made 0."""
    return _DURATION.sub('\n  "duration": 0,\n', path.read_text(), count=1)


def _same_files(checkpoint_dir: Path, recorded: Path, row: dict[str, Any]) -> None:
    assert _without_duration(checkpoint_dir / "evaluation.json") == _without_duration(
        recorded / "evaluation.json"
    )
    metrics = json.loads((recorded / "metrics.json").read_text())
    assert {key: row[key] for key in metrics} == metrics


def _row(output: Path, problem: str, checkpoint: str) -> dict[str, Any]:
    rows = [
        json.loads(line) for line in (output / "checkpoint_results.jsonl").read_text().splitlines()
    ]
    (row,) = [r for r in rows if (r["problem"], r["checkpoint"]) == (problem, checkpoint)]
    return row


@pytest.mark.parametrize(("problem", "checkpoint", "submission"), EXAMPLE_CASES)
def test_an_example_s_files_are_scbench_1_0_s(
    problem: str, checkpoint: str, submission: str, shared_evaluations: SharedEvaluations
) -> None:
    output = shared_evaluations(problem, checkpoint, submission).output
    recorded = RECORDED / problem / case_name(checkpoint, submission)
    _same_files(output / problem / checkpoint, recorded, _row(output, problem, checkpoint))


@pytest.fixture(scope="module")
def keywords(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    outputs = {}
    for checkpoint, submission in KEYWORDS_CASES:
        output = tmp_path_factory.mktemp("keywords")
        done = run_cli(
            "evaluate",
            *("--problem", KEYWORDS, "--checkpoint", checkpoint),
            *("--submission", KEYWORDS / submission, "--output", output),
            *("--executor", "local", "--no-quality", "--quiet"),
            cwd=REPO_ROOT,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        outputs[(checkpoint, submission)] = output
    return outputs


@pytest.mark.parametrize(("checkpoint", "submission"), KEYWORDS_CASES)
def test_the_inventory_problem_s_files_are_scbench_1_0_s(
    checkpoint: str, submission: str, keywords: dict[tuple[str, str], Path]
) -> None:
    output = keywords[(checkpoint, submission)]
    recorded = RECORDED / "keywords" / case_name(checkpoint, submission)
    _same_files(output / "keywords" / checkpoint, recorded, _row(output, "keywords", checkpoint))
