"""The golden summaries: each scenario's results.json, captured once from real runs of the bundled
examples by scripts/golden.py (the `scale` one generated here), normalized so that it is stable,
and beside it the summary.md that `scbench-ci summary` renders from it. The `trajectory` summary
(code quality checkpoint by checkpoint) is rendered from a run generated here, without a
results.json.

    python scripts/golden.py [SCENARIO ...]      run them again: results.json and summary.md
    SCBENCH_UPDATE_GOLDEN=1 pytest tests/outputs/test_golden.py      only render summary.md again

tests/outputs/test_golden.py compares each summary.md with a fresh rendering, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import cycle
from pathlib import Path
from typing import Any

from scbench_ci.job.reports import Status
from scbench_ci.outputs.console import headline
from scbench_ci.outputs.failing_view import failing_checkpoints, passing_with_failures
from scbench_ci.outputs.summary import render_summary
from scbench_ci.problem.model import Group
from scbench_ci.results.compare import compare
from scbench_ci.results.file import write_results
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    ProblemResult,
    RunResult,
    why_failed,
)
from scbench_ci.results.verdict import count_groups
from testing.cli import run_cli
from testing.paths import REPO_ROOT
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured

GOLDEN = REPO_ROOT / "tests" / "data" / "golden"
UPDATE_VARIABLE = "SCBENCH_UPDATE_GOLDEN"
UPDATE_COMMAND = f"{UPDATE_VARIABLE}=1 pytest tests/outputs/test_golden.py"
RESULTS = "results.json"
SUMMARY = "summary.md"

FIXED_DATE = "2026-01-01T00:00:00+00:00"
FIXED_DURATION_S = 1.0
FIXED_VERSION = "0.0.0"
REPO_PLACEHOLDER = "/repo"
"""What the checkout's absolute path becomes."""
MEMORY_ADDRESS = re.compile(r"\b0x[0-9a-f]{6,16}\b")
"""In a traceback's reprs: `<function run at 0x7f3ded623240>`."""
FIXED_ADDRESS = "0x7f0000000000"
SCRATCH_PLACEHOLDER = "/scratch"
CAUSE_PREFIX_CHARS = 40
"""first_cause: as much as a page is searched for."""
"""What the folder scripts/golden.py runs in (copied submissions, shards) becomes."""


@dataclass(frozen=True)
class Scenario:
    name: str
    summary_arguments: tuple[str, ...] = ()
    """What `scbench-ci summary` is given after the results.json."""

    @property
    def folder(self) -> Path:
        return GOLDEN / self.name

    @property
    def results(self) -> Path:
        return self.folder / RESULTS

    @property
    def summary(self) -> Path:
        return self.folder / SUMMARY


SCENARIOS = (
    Scenario("single_pass"),
    Scenario("single_fail"),
    Scenario("missing_module"),
    Scenario("multi_problem"),
    Scenario("comparison", ("--fail-on", "regressions")),
    Scenario("check"),
    Scenario("merge"),
    Scenario("scale"),
)
SCALE = SCENARIOS[-1]
"""Generated, not run: `scale_run`."""


def first_cause(run: RunResult) -> str | None:
    """The start of what a summary with failing tests must show in its first screen: the main
    cause of its first failing checkpoint's failing tests, else why that checkpoint failed; for
    a run whose checkpoints all pass, the main cause of the first one's that passes with failing
    tests (a green run hides no red test); None when no test fails."""
    failing = failing_checkpoints(run).listed or passing_with_failures(run).listed
    if not failing:
        return None
    first = failing[0]
    cause = first.main_cause
    text = cause.cause.text if cause is not None else why_failed(first.checkpoint, run.policy)
    return headline(text)[:CAUSE_PREFIX_CHARS]


def render_summary_file(scenario: Scenario) -> str:
    """The summary `scbench-ci summary` renders from the scenario's results.json, given by its
    path in the checkout (the summary names the folder it is in)."""
    relative = scenario.results.relative_to(REPO_ROOT)
    done = run_cli("summary", relative, *scenario.summary_arguments, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"scbench-ci summary {relative} failed: {done.stderr.strip()}")
    return done.stdout


# Normalizing.


def normalized(document: Any, scratch: str | None = None) -> Any:
    """The results.json document with what changes from run to run replaced by fixed values:
    durations, dates (a run's start, and in its trends when a test began failing, which its
    history's normalized starts must give again), versions, fingerprints (each distinct one by
    a fixed one of its own, in the order met: the history's trends tell the same inputs by
    them), memory addresses, and the absolute paths of the checkout and of `scratch`. The
    tests' outcomes, from which the verdicts and counts follow, are kept."""
    fingerprints: dict[str, str] = {}
    for found in _fingerprints(document):
        fingerprints.setdefault(found, f"{len(fingerprints):064x}")
    return _normalized(document, scratch, fingerprints)


def _fingerprints(document: Any) -> Iterator[str]:
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "fingerprint" and isinstance(value, str):
                yield value
            else:
                yield from _fingerprints(value)
    elif isinstance(document, list):
        for item in document:
            yield from _fingerprints(item)


def _normalized(document: Any, scratch: str | None, fingerprints: dict[str, str]) -> Any:
    if isinstance(document, dict):
        return {
            key: _normalized_value(key, value, scratch, fingerprints)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [_normalized(item, scratch, fingerprints) for item in document]
    if isinstance(document, str):
        text = document if scratch is None else document.replace(scratch, SCRATCH_PLACEHOLDER)
        text = MEMORY_ADDRESS.sub(FIXED_ADDRESS, text)
        return text.replace(str(REPO_ROOT), REPO_PLACEHOLDER)
    return document


def _normalized_value(
    key: str, value: Any, scratch: str | None, fingerprints: dict[str, str]
) -> Any:
    if value is None:
        return None
    if key in ("duration_s", "estimated_s"):
        return FIXED_DURATION_S
    if key == "phases":
        return {phase: FIXED_DURATION_S for phase in value}
    if key in ("started_at", "baseline_started_at", "since"):
        return FIXED_DATE
    if key == "tool_versions":
        return {tool: FIXED_VERSION for tool in value}
    if key == "fingerprint":
        return fingerprints[value]
    return _normalized(value, scratch, fingerprints)


def results_text(document: Any) -> str:
    """How a golden results.json is written."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# The scale scenario: 20 problems x 8 checkpoints, long names, every kind of failure.

SCALE_PROBLEMS = (
    "layered_config_synthesizer",
    "distributed_rate_limiter_core",
    "incremental_markdown_renderer",
    "sparse_matrix_expression_eval",
    "streaming_json_path_extractor",
    "calendar_recurrence_expander",
    "dependency_graph_topo_sorter",
    "regex_engine_with_backrefs",
    "log_structured_merge_kvstore",
    "unicode_aware_text_wrapper",
    "http_request_router_matcher",
    "cron_expression_scheduler",
    "geometric_polygon_clipper",
    "bank_ledger_reconciliation",
    "terminal_spreadsheet_engine",
    "package_version_resolver_sat",
    "image_dithering_pipeline",
    "chess_move_legality_checker",
    "query_planner_for_tiny_sql",
    "wordstat",
)
SCALE_CHECKPOINTS = tuple(f"checkpoint_{index}" for index in range(1, 9))
LOG_TAIL = "\n".join(
    [*(f"step {line}: preparing the workspace" for line in range(8)), f"error: {'x' * 200}"]
)
"""A failure's log, with a line longer than the page."""


def scale_run() -> RunResult:
    """A run of SCALE_PROBLEMS, each with SCALE_CHECKPOINTS (the last problem with fewer, so a
    cell says `not evaluated`): most pass, and in each column some fail their Core tests and
    some fail with a failure kind, every kind in turn, so that the matrix is as wide as it gets."""
    kinds = cycle(FailureKind)
    problems = []
    for row, name in enumerate(SCALE_PROBLEMS):
        shown = SCALE_CHECKPOINTS[:5] if row == len(SCALE_PROBLEMS) - 1 else SCALE_CHECKPOINTS
        checkpoints = []
        for column, checkpoint in enumerate(shown):
            if (row + column) % 5 == 0:
                checkpoints.append(_failed_with(next(kinds), checkpoint))
            elif (row + 2 * column) % 7 == 0:
                checkpoints.append(_failing_tests(checkpoint, failing=1 + (row + column) % 12))
            else:
                checkpoints.append(_failing_tests(checkpoint, failing=0))
        problems.append(ProblemResult(name, f"/problems/{name}", 1, tuple(checkpoints)))
    return replace(make_run(), problems=tuple(problems), jobs=2, duration_s=5400.0)


def _failing_tests(checkpoint: str, failing: int) -> CheckpointResult:
    tests = [make_test(f"test_passes_{index}", Status.PASSED) for index in range(3)]
    tests += [
        make_test(f"test_edge_case_with_a_rather_long_name_{index}", Status.FAILED, group)
        for index, group in zip(range(failing), cycle(Group), strict=False)
    ]
    made = make_checkpoint(*tests, name=checkpoint)
    return replace(made, groups=count_groups(made.tests, flaky_passes=False))


def _failed_with(kind: FailureKind, checkpoint: str) -> CheckpointResult:
    failure = Failure(kind, f"the run of {checkpoint} stopped", LOG_TAIL)
    return replace(make_checkpoint(name=checkpoint, failure=failure), pytest_exit_code=None)


# The trajectory: one problem's checkpoints, their code quality measured (the figures of
# a real problem's reference solutions: erosion 0.22 -> 0.34 -> 0.39, verbosity 0.066 -> 0.073
# -> 0.115), one the measure failed on, compared with a baseline.

TRAJECTORY = GOLDEN / "trajectory" / SUMMARY
TRAJECTORY_FIGURES: tuple[tuple[float, float] | None, ...] = (
    (0.066, 0.22),
    (0.070, 0.29),
    (0.073, 0.34),
    None,
    (0.115, 0.39),
)
TRAJECTORY_BASELINE = ((0.061, 0.22), (0.066, 0.25), (0.071, 0.36), (0.08, 0.36), (0.09, 0.37))
TRAJECTORY_REASON = "scb-check was stopped at its time limit (60 s)"


def trajectory_run() -> RunResult:
    """A run of wordstat's five checkpoints, the fourth failing a Core test and not measured."""
    checkpoints = []
    baseline = []
    for number, (figures, before) in enumerate(
        zip(TRAJECTORY_FIGURES, TRAJECTORY_BASELINE, strict=True), start=1
    ):
        errors = make_test("reports_errors", Status.PASSED, Group.ERROR)
        passing = make_checkpoint(
            make_test("counts_words", Status.PASSED), errors, name=f"checkpoint_{number}"
        )
        if figures is None:
            failing = make_checkpoint(
                make_test("counts_words", Status.FAILED), errors, name=f"checkpoint_{number}"
            )
            checkpoints.append(not_measured(failing, TRAJECTORY_REASON))
        else:
            checkpoints.append(measured(passing, *figures))
        baseline.append(measured(passing, *before))
    run = make_run(*checkpoints, problem="wordstat")
    return replace(
        run,
        comparison=compare(run, make_run(*baseline, problem="wordstat"), "baseline/results.json"),
    )


def render_trajectory() -> str:
    return render_summary(trajectory_run())


def write_scale(folder: Path) -> Path:
    """The scale run's results.json, normalized as the captured ones are."""
    written = write_results(scale_run(), folder)
    document = normalized(json.loads(written.read_text()))
    written.write_text(results_text(document))
    return written
