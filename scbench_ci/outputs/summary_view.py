"""What the job summary shows of a run, as plain data its template lays out: the numbers of its
headline, the matrix of problems x checkpoints in tables that fit GitHub's width, the warnings
once each, which checkpoints get a section of their own (`details`), and the history's chart,
table and trends."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from scbench_ci.outputs.summary_quality import chart_top
from scbench_ci.problem.model import Group
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import CheckpointResult, FailureKind, ProblemResult, RunResult
from scbench_ci.results.quality_steps import percent
from scbench_ci.results.trends import RunQuality, TestTrend, Trends, trends
from scbench_ci.trust.markdown import Markdown, literal

MATRIX_COLUMNS = 8
"""Checkpoint columns in one matrix table: with the problem's name, as many as fit GitHub's
content width (tests/outputs/test_summary_width.py measures it)."""
CELL_LABELS = {
    FailureKind.INFRASTRUCTURE: "infra",
    FailureKind.COLLECTION: "collect",
    FailureKind.INTERRUPTED: "halted",
    FailureKind.NO_TESTS: "no tests",
    FailureKind.RESOURCES: "limits",
}
"""A matrix cell's word for the failure kinds whose names would widen a column past the page's
share (tests/outputs/test_summary_width.py measures it); the others are their own names."""
MIN_PREFIX = 3
"""A prefix every column name shares is left out of the matrix's headers from this length."""
LISTED_PLACES = 5
"""Where a warning was given: how many checkpoints are named before `and N more`."""


@dataclass(frozen=True)
class Numbers:
    """The headline's figures, and how far each moved since the baseline (0 without one)."""

    checkpoints: int
    checkpoints_passed: int
    checkpoints_delta: int
    core_passed: int
    core_total: int
    core_delta: int
    tests_passed: int
    tests_failed: int
    tests_unreached: int
    """Of the failing tests, those that could not reach the network."""
    tests_skipped: int
    tests_total: int
    tests_delta: int


def numbers(run: RunResult) -> Numbers:
    checkpoints = [checkpoint for _, checkpoint in run.checkpoints()]
    totals = run.group_totals()
    comparison = run.comparison
    moved = comparison.group_deltas() if comparison is not None else {}
    verdicts = comparison.verdict_changes if comparison is not None else ()
    return Numbers(
        checkpoints=len(checkpoints),
        checkpoints_passed=sum(checkpoint.passed for checkpoint in checkpoints),
        checkpoints_delta=sum(1 if delta.passed_after else -1 for delta in verdicts),
        core_passed=totals[Group.CORE].passed,
        core_total=totals[Group.CORE].total,
        core_delta=moved.get(Group.CORE, (0, 0))[0],
        tests_passed=sum(counts.passed for counts in totals.values()),
        tests_failed=sum(counts.failed for counts in totals.values()),
        tests_unreached=sum(c.network.tests for _, c in run.checkpoints() if c.network),
        tests_skipped=sum(counts.skipped for counts in totals.values()),
        tests_total=sum(counts.total for counts in totals.values()),
        tests_delta=sum(passed for passed, _ in moved.values()),
    )


@dataclass(frozen=True)
class MatrixRow:
    problem: ProblemResult
    cells: list[CheckpointResult | None]
    """One per column: the problem's checkpoint of that name, if it was evaluated."""


@dataclass(frozen=True)
class MatrixTable:
    labels: list[str]
    """The column headers: the checkpoints' names, less the prefix they all share."""
    rows: list[MatrixRow]


@dataclass(frozen=True)
class Matrix:
    tables: list[MatrixTable]
    """The checkpoints MATRIX_COLUMNS at a time, so that no table is wider than the page."""
    prefix: str
    """What every column's name starts with and its header leaves out; '' for none."""
    short_kinds: list[FailureKind]
    """The failure kinds its cells name by a CELL_LABELS word, for its legend."""


def cell_label(kind: FailureKind) -> str:
    return CELL_LABELS.get(kind, kind.value)


def matrix(run: RunResult) -> Matrix:
    columns = list(dict.fromkeys(checkpoint.name for _, checkpoint in run.checkpoints()))
    prefix = _shared_prefix(columns)
    tables = []
    for start in range(0, len(columns), MATRIX_COLUMNS):
        names = columns[start : start + MATRIX_COLUMNS]
        rows = [
            MatrixRow(problem, [_named(problem, name) for name in names])
            for problem in run.problems
        ]
        tables.append(MatrixTable([name[len(prefix) :] for name in names], rows))
    kinds = {c.failure.kind for _, c in run.checkpoints() if c.failure is not None}
    return Matrix(tables, prefix, [kind for kind in CELL_LABELS if kind in kinds])


def _shared_prefix(names: list[str]) -> str:
    """The prefix all names share (`checkpoint_`), when it leaves each of them something."""
    prefix = names[0] if len(names) > 1 else ""
    for name in names:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    # A header is never empty, nor a number cut in two (`checkpoint_1` of `checkpoint_10`).
    while prefix and (prefix in names or prefix[-1].isdigit()):
        prefix = prefix[:-1]
    return prefix if len(prefix) >= MIN_PREFIX else ""


def _named(problem: ProblemResult, name: str) -> CheckpointResult | None:
    return next((c for c in problem.checkpoints if c.name == name), None)


@dataclass(frozen=True)
class RunWarning:
    text: str
    places: list[str]
    """The checkpoints it was given for, `problem / checkpoint` (the checkpoint alone when the
    run has one problem)."""


def run_warnings(run: RunResult) -> list[RunWarning]:
    """Each distinct warning once, with every checkpoint that gave it, in the run's order."""
    places: dict[str, list[str]] = defaultdict(list)
    for problem, checkpoint in run.checkpoints():
        for text in dict.fromkeys(checkpoint.warnings):
            places[text].append(run.where(problem.name, checkpoint.name))
    return [RunWarning(text, found) for text, found in places.items()]


def detailed(run: RunResult, details: str) -> set[tuple[str, str]]:
    """The (problem, checkpoint) pairs given a section of their own: a run of one checkpoint
    is all its section, which no overview repeats."""
    pairs = [(problem.name, checkpoint) for problem, checkpoint in run.checkpoints()]
    if details == "all" or len(pairs) == 1:
        return {(problem, checkpoint.name) for problem, checkpoint in pairs}
    failed = {(problem, checkpoint.name) for problem, checkpoint in pairs if not checkpoint.passed}
    if details == "failed" or run.comparison is None:
        return failed
    return failed | changed_checkpoints(run.comparison)


def changed_checkpoints(comparison: Comparison) -> set[tuple[str, str]]:
    """The checkpoints whose verdict or any test's outcome changed since the baseline."""
    changes: Iterable[tuple[str, str]] = (
        (change.problem, change.checkpoint)
        for changes in (
            comparison.regressions,
            comparison.fixed,
            comparison.new,
            comparison.removed,
        )
        for change in changes
    )
    verdicts = ((delta.problem, delta.checkpoint) for delta in comparison.verdict_changes)
    return {*changes, *verdicts}


@dataclass(frozen=True)
class CheckpointChanges:
    """One checkpoint's changes since the baseline: one row of the summary's table of them."""

    where: str
    passed_before: bool | None
    passed_after: bool | None
    regressed: int
    fixed: int
    new: int
    removed: int


def checkpoint_changes(run: RunResult) -> list[CheckpointChanges]:
    """Every checkpoint that changed since the baseline, in the run's order."""
    comparison = run.comparison
    if comparison is None:
        return []
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for kind, changes in (
        ("regressed", comparison.regressions),
        ("fixed", comparison.fixed),
        ("new", comparison.new),
        ("removed", comparison.removed),
    ):
        for change in changes:
            counts[(change.problem, change.checkpoint)][kind] += 1
    changed = changed_checkpoints(comparison)
    rows = []
    for delta in comparison.checkpoints:
        key = (delta.problem, delta.checkpoint)
        if key not in changed:
            continue
        found = counts[key]
        rows.append(
            CheckpointChanges(
                run.where(*key),
                delta.passed_before,
                delta.passed_after,
                found["regressed"],
                found["fixed"],
                found["new"],
                found["removed"],
            )
        )
    return rows


HISTORY_MIN_RUNS = 3
"""A history of fewer runs is the baseline and this run, which the changes already compare."""
HISTORY_LISTED = 10
"""How many tests each list of the history's section shows (flaky, newly flaky)."""
CHART_COLORS = {
    Group.CORE: (literal("#0969da"), "blue"),
    Group.FUNCTIONALITY: (literal("#1a7f37"), "green"),
    Group.REGRESSION: (literal("#9a6700"), "brown"),
    Group.ERROR: (literal("#cf222e"), "red"),
}
"""Each group's line in the chart, and its color's name for the legend (mermaid's xychart
draws no legend of its own)."""


@dataclass(frozen=True)
class HistoryRow:
    number: int
    """1 for the oldest run."""
    date: str
    commit: str | None
    """Its first 7 characters."""
    rates: list[float | None]
    """Per group, in the order of `Group`."""


@dataclass(frozen=True)
class ChartLine:
    group: str
    color: Markdown
    color_name: str
    percents: list[float]


@dataclass(frozen=True)
class HistoryView:
    """The summary's section on the run's history: a chart of each group's pass rate, run by
    run, the same as a table, what the trends single out, and each run's code quality."""

    trends: Trends
    rows: list[HistoryRow]
    lines: list[ChartLine]
    """The groups with tests in every run (a line cannot skip a run)."""
    flaky: list[TestTrend]
    newly_flaky: list[TestTrend]
    quality: list[tuple[int, RunQuality]]
    """Each run's code quality by its number; empty when no run was measured."""
    quality_lines: tuple[list[float], list[float]] | None
    """The chart's verbosity and erosion lines, in percent, when every run was measured (a line
    cannot skip a run); None otherwise."""
    quality_top: int
    """The quality chart's y-axis top, in percent."""
    places: dict[str, str]
    """The checkpoint of each trend listed (`problem/checkpoint`) as the run names it
    (RunResult.where)."""


def history_view(run: RunResult) -> HistoryView | None:
    """None without a history of at least HISTORY_MIN_RUNS runs."""
    if run.history is None or len(run.history.runs) < HISTORY_MIN_RUNS:
        return None
    found = trends(run.history)
    rows = [
        HistoryRow(
            number,
            history_date(rates.started_at),
            rates.commit[:7] if rates.commit else None,
            [rates.rates[group] for group in Group],
        )
        for number, rates in enumerate(found.pass_rates, start=1)
    ]
    lines = []
    for group in Group:
        rates = [run_rates.rates[group] for run_rates in found.pass_rates]
        percents = [round(100 * rate, 1) for rate in rates if rate is not None]
        if len(percents) == len(rates):
            lines.append(ChartLine(group.value, *CHART_COLORS[group], percents))
    verbosity = [percent(run.verbosity) for run in found.quality if run.verbosity is not None]
    erosion = [percent(run.erosion) for run in found.quality if run.erosion is not None]
    every_run = bool(found.quality) and len(verbosity) == len(erosion) == len(found.quality)
    flaky = list(found.flaky[:HISTORY_LISTED])
    newly_flaky = list(found.newly_flaky[:HISTORY_LISTED])
    return HistoryView(
        found,
        rows,
        lines,
        flaky,
        newly_flaky,
        list(enumerate(found.quality, start=1)),
        (verbosity, erosion) if every_run else None,
        chart_top([*verbosity, *erosion]) if every_run else 100,
        {
            trend.checkpoint: run.where(*trend.checkpoint.rsplit("/", 1))
            for trend in [*flaky, *newly_flaky]
        },
    )


def history_date(started_at: str) -> str:
    """A run's start as the history shows it: `2026-11-24 15:40` (UTC as it was written)."""
    return datetime.fromisoformat(started_at).strftime("%Y-%m-%d %H:%M")
