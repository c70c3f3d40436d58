"""scbench-ci's results on the bundled examples equal what SCBench's own package decided on them,
under `--scbench 1.0` (the default) and `--scbench paper`: each test's status and group, the
counts, `pytest_collected`, the collection hash, the infrastructure flag, pytest's exit code and
the verdict (`core-cases`).

What SCBench decided is recorded, as CI has no SCBench checkout: tests/data/scbench/
examples_verdicts.json, written by benchmarks/against_scbench.py's `--record` (docs/parity.md
says how). The examples' evaluations are the suite's shared ones (the default's are the ones
tests/integration/test_examples.py reads); the broken variants of a reference solution
(benchmarks/broken_submissions.py) are made here. Held here: every recorded case of SCBench 1.0,
the default; of the paper's runner, the cases the suite evaluates under it anyway (marks'), as
the rest would cost it a dozen evaluations more (`benchmarks/against_scbench.py --reuse` holds
them all, from a checkout of SCBench).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.broken_submissions import make
from testing.examples import SharedEvaluations, scbench_evaluate
from testing.markdown import anchors
from testing.paths import EXAMPLES, REPO_ROOT
from testing.scbench_verdicts import Verdict, differences, from_scbench_ci

RECORD = REPO_ROOT / "tests/data/scbench/examples_verdicts.json"
RECORDED: list[dict[str, Any]] = [
    entry
    for entry in json.loads(RECORD.read_text())
    if entry["choice"] == "1.0"
    or (entry["problem"] == "marks" and "broken:" not in entry["submission"])
]
DEFAULT_CHOICE = "1.0"
BROKEN = "broken:"

KNOWN_FILE = REPO_ROOT / "tests/data/scbench/examples_known_differences.json"


def _key(entry: dict[str, Any]) -> tuple[str, str, str, str]:
    return (entry["choice"], entry["problem"], entry["checkpoint"], entry["submission"])


KNOWN: dict[tuple[str, str, str, str], list[str]] = {
    _key(known): known["differences"] for known in json.loads(KNOWN_FILE.read_text())
}
"""The differences that remain, by (choice, problem, checkpoint, submission): the lines
`differences` gives for each, and in the file each one's `why`, the section of docs/parity.md
that says why it remains."""


def test_each_known_difference_says_why() -> None:
    for known in json.loads(KNOWN_FILE.read_text()):
        assert known["why"], _key(known)
        for why in known["why"]:
            page, anchor = why.split("#")
            assert anchor in anchors((REPO_ROOT / "docs" / page).read_text()), why


def _name(entry: dict[str, Any]) -> str:
    return "-".join(_key(entry))


def _choice(choice: str) -> tuple[str, ...]:
    return () if choice == DEFAULT_CHOICE else ("--scbench", choice)


def _assert_as_recorded(entry: dict[str, Any], output: Path) -> None:
    ours = from_scbench_ci(output, entry["problem"], entry["checkpoint"])
    assert differences(Verdict.from_json(entry["verdict"]), ours) == KNOWN.get(_key(entry), [])


@pytest.mark.parametrize(
    "entry", [e for e in RECORDED if not e["submission"].startswith(BROKEN)], ids=_name
)
def test_the_examples_as_scbench_decided(
    entry: dict[str, Any], shared_evaluations: SharedEvaluations
) -> None:
    choice, problem, checkpoint, submission = _key(entry)
    evaluated = shared_evaluations(problem, checkpoint, submission, *_choice(choice))
    _assert_as_recorded(entry, evaluated.output)


@pytest.mark.parametrize(
    "entry", [e for e in RECORDED if e["submission"].startswith(BROKEN)], ids=_name
)
def test_broken_submissions_as_scbench_decided(
    entry: dict[str, Any], tmp_path: Path, evaluation_image: str
) -> None:
    """In Docker, as SCBench ran them: a variant that kills its pytest finds it among its
    ancestors in the container."""
    choice, problem, checkpoint, submission = _key(entry)
    config = yaml.safe_load((EXAMPLES / problem / "config.yaml").read_text())
    variant = tmp_path / "submission"
    solution = EXAMPLES / problem / "solutions" / checkpoint
    assert make(solution, config["entry_file"], submission.removeprefix(BROKEN), variant)
    output = tmp_path / "output"
    scbench_evaluate(problem, checkpoint, str(variant), output, *_choice(choice), executor="docker")
    _assert_as_recorded(entry, output)
