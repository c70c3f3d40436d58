"""The golden summaries (tests/data/golden, testing/golden.py): each results.json captured from
a real run renders, through `scbench-ci summary`, to its committed summary.md byte for byte.
A change to the summary is seen here as a diff, and committed on purpose with UPDATE_COMMAND."""

from __future__ import annotations

import json
import os
from difflib import unified_diff
from pathlib import Path

import pytest

from testing.golden import (
    SCALE,
    SCENARIOS,
    TRAJECTORY,
    UPDATE_COMMAND,
    UPDATE_VARIABLE,
    Scenario,
    normalized,
    render_summary_file,
    render_trajectory,
    results_text,
    write_scale,
)
from testing.paths import REPO_ROOT

pytestmark = pytest.mark.slow

UPDATING = os.environ.get(UPDATE_VARIABLE) == "1"


def scenario_id(scenario: Scenario) -> str:
    return scenario.name


def differs(golden: Path, now: str) -> str:
    """Why the test fails: the diff from the golden file to what is made now."""
    name = str(golden.relative_to(REPO_ROOT))
    diff = unified_diff(
        golden.read_text().splitlines(keepends=True),
        now.splitlines(keepends=True),
        f"{name} (golden)",
        f"{name} (now)",
    )
    return (
        f"{name} is not what is made from its results.json now:\n{''.join(diff)}\n"
        f"If the change is meant, update the goldens and commit them: {UPDATE_COMMAND}"
    )


def test_the_scale_results_are_the_generated_run(tmp_path: Path) -> None:
    """First: updating, the scale summary is rendered from the new results."""
    generated = write_scale(tmp_path).read_text()
    if UPDATING:
        SCALE.results.write_text(generated)
    elif SCALE.results.read_text() != generated:
        pytest.fail(differs(SCALE.results, generated), pytrace=False)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_the_summary_is_the_golden_one(scenario: Scenario) -> None:
    rendered = render_summary_file(scenario)
    if UPDATING:
        scenario.summary.write_text(rendered)
    elif scenario.summary.read_bytes() != rendered.encode():
        pytest.fail(differs(scenario.summary, rendered), pytrace=False)


def test_the_trajectory_summary_is_the_golden_one() -> None:
    """Rendered from the generated run (testing/golden.py trajectory_run), not a results.json."""
    rendered = render_trajectory()
    if UPDATING:
        TRAJECTORY.write_text(rendered)
    elif TRAJECTORY.read_bytes() != rendered.encode():
        pytest.fail(differs(TRAJECTORY, rendered), pytrace=False)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_the_results_are_stored_normalized(scenario: Scenario) -> None:
    """As scripts/golden.py writes them: a hand-made results.json is seen."""
    text = scenario.results.read_text()
    normal = results_text(normalized(json.loads(text)))
    if text != normal:
        pytest.fail(differs(scenario.results, normal), pytrace=False)
