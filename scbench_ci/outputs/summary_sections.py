"""What the job summary says of each checkpoint's failing tests: grouped by cause
(results/causes.py), the tests that fail the same way once, with how many they are and which,
most first; for a run of several checkpoints, the failing ones with why and their main cause,
for the top of the page; and the text shown under a cause (a traceback, the submission's
stderr), once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from scbench_ci.outputs.summary_levels import Level, end_of
from scbench_ci.problem.model import Group
from scbench_ci.reports import FAILING, cap
from scbench_ci.results.causes import Cause, cause_of, first_line
from scbench_ci.results.comparison import Comparison
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult, TestResult
from scbench_ci.trust.markdown import Markdown, code_span, formatted, literal

LISTED_FAILING = 5
"""How many failing checkpoints the top of a run's summary names, with why."""
MAX_ASSERTION_CHARS = 200


@dataclass(frozen=True)
class CauseGroup:
    """The failing tests of a checkpoint that failed the same way."""

    cause: Cause
    tests: list[TestResult]
    """Those that newly fail since the baseline first."""
    regressed: int


@dataclass(frozen=True)
class Section:
    """One checkpoint, with its failing tests grouped by cause."""

    problem: ProblemResult
    checkpoint: CheckpointResult
    causes: list[CauseGroup]
    """Those that hit the most tests first."""
    deltas: dict[str, tuple[int, int]]
    """Per group and for "All", the change in passed and in total tests since the baseline;
    empty without one."""
    regressed: frozenset[str]
    """The ids of its tests that newly fail since the baseline."""
    title: str
    """`problem / checkpoint`, or the checkpoint alone in a run of one problem."""

    @property
    def failing_count(self) -> int:
        return sum(len(group.tests) for group in self.causes)


def sections(run: RunResult, shown: set[tuple[str, str]]) -> Iterator[Section]:
    """A section for each checkpoint `shown`, made as it is rendered (one checkpoint's tests
    in memory at a time)."""
    deltas = _checkpoint_deltas(run.comparison)
    regressed = regressed_tests(run.comparison)
    for problem, checkpoint in run.checkpoints():
        key = (problem.name, checkpoint.name)
        if key not in shown:
            continue
        newly = regressed.get(key, frozenset())
        yield Section(
            problem,
            checkpoint,
            cause_groups(checkpoint, newly),
            deltas.get(key, {}),
            newly,
            run.where(*key),
        )


def cause_groups(checkpoint: CheckpointResult, regressed: frozenset[str]) -> list[CauseGroup]:
    """The checkpoint's failing tests by cause: the cause that hit the most first, then in the
    order of their first test (newly failing first, then group by group)."""
    order = {group.value: index for index, group in enumerate(Group)}
    failing = [test for test in checkpoint.tests if test.status in FAILING]
    failing.sort(key=lambda test: (test.id not in regressed, order[test.group]))
    found: dict[str, tuple[Cause, list[TestResult]]] = {}
    for test in failing:
        cause = cause_of(test)
        found.setdefault(cause.text, (cause, []))[1].append(test)
    groups = [
        CauseGroup(cause, tests, sum(test.id in regressed for test in tests))
        for cause, tests in found.values()
    ]
    return sorted(groups, key=lambda group: -len(group.tests))


@dataclass(frozen=True)
class FailingCheckpoint:
    """A checkpoint that fails the policy, for the top of a run's summary."""

    where: str
    checkpoint: CheckpointResult
    main_cause: CauseGroup | None
    """The cause of the most of its failing tests; None when none fails (it failed for its
    failure kind, or for tests skipped)."""
    failing: int
    """How many of its tests fail."""


def cause_title(failing: FailingCheckpoint) -> str:
    """What its main cause is called: the cause of all its failing tests, of the most of them,
    or (each failing its own way) the first failure."""
    cause = failing.main_cause
    if cause is None:
        return ""
    count = len(cause.tests)
    if count == failing.failing:
        return f"The cause ({count} test{'s' if count != 1 else ''})"
    if count > 1:
        return f"The main cause ({count} of {failing.failing} failing tests)"
    return "The first failure"


@dataclass(frozen=True)
class FailingCheckpoints:
    listed: list[FailingCheckpoint]
    """The first LISTED_FAILING, in the run's order."""
    count: int


def failing_checkpoints(run: RunResult) -> FailingCheckpoints:
    failing = [(p, c) for p, c in run.checkpoints() if not c.passed]
    regressed = regressed_tests(run.comparison)
    listed = []
    for problem, checkpoint in islice(failing, LISTED_FAILING):
        key = (problem.name, checkpoint.name)
        causes = cause_groups(checkpoint, regressed.get(key, frozenset()))
        failing_count = sum(len(group.tests) for group in causes)
        listed.append(
            FailingCheckpoint(run.where(*key), checkpoint, next(iter(causes), None), failing_count)
        )
    return FailingCheckpoints(listed, len(failing))


@dataclass(frozen=True)
class CauseBlock:
    """What a cause shows below its line: a note, then a code block."""

    note: Markdown
    """Before the block (empty for none): where the text comes from, what is cut."""
    text: str


def cause_block(group: CauseGroup, level: Level) -> CauseBlock:
    """The text under a cause, once for all its tests: the output the cause was found in (the
    submission's stderr), else the first test's traceback when the level shows tracebacks,
    else its message. Every cause has one, so that what a summary's layout is never depends on
    the text of the results."""
    cause, test = group.cause, group.tests[0]
    whose = "The test" if len(group.tests) == 1 else "The first test"
    if cause.output is not None:
        excerpt = end_of(cause.output, max(level.test_chars, 1))
        assertion = first_line(test.message)[:MAX_ASSERTION_CHARS]
        note = formatted(
            "{} asserted {}; the cause is in {}{}:",
            whose,
            code_span(assertion),
            cause.source.value,
            _cut(excerpt.cut_lines),
        )
        return CauseBlock(note, excerpt.text)
    traceback = (test.traceback or "").strip()
    if level.tracebacks and traceback:
        excerpt = end_of(traceback, level.test_chars)
        if excerpt.cut_lines:
            note = formatted("The end of the traceback{}:", _cut(excerpt.cut_lines))
            return CauseBlock(note, excerpt.text)
        return CauseBlock(literal(""), excerpt.text)
    message = (test.message or "").strip() or cause.text
    return CauseBlock(literal(""), cap(message, max(level.test_chars, 1)) or "")


def _cut(lines: int) -> Markdown:
    """What a block leaves out above it, for its note: ` (its first 3 lines are in the
    reports)`, or nothing."""
    if not lines:
        return literal("")
    if lines == 1:
        return literal(" (its first line is in the reports)")
    return formatted(" (its first {} lines are in the reports)", lines)


def regressed_tests(comparison: Comparison | None) -> dict[tuple[str, str], frozenset[str]]:
    """Per checkpoint, the ids of its tests that newly fail."""
    found: dict[tuple[str, str], set[str]] = {}
    for change in comparison.regressions if comparison is not None else ():
        found.setdefault((change.problem, change.checkpoint), set()).add(change.test)
    return {key: frozenset(ids) for key, ids in found.items()}


def _checkpoint_deltas(
    comparison: Comparison | None,
) -> dict[tuple[str, str], dict[str, tuple[int, int]]]:
    """Per checkpoint that both runs evaluated, Section.deltas."""
    if comparison is None:
        return {}
    deltas = {}
    for delta in comparison.checkpoints:
        if delta.passed_before is None or delta.passed_after is None:
            continue
        before, after = delta.groups_before, delta.groups_after
        changes = {
            group.value: (
                after[group].passed - before[group].passed,
                after[group].total - before[group].total,
            )
            for group in Group
        }
        changes["All"] = (
            sum(passed for passed, _ in changes.values()),
            sum(total for _, total in changes.values()),
        )
        deltas[(delta.problem, delta.checkpoint)] = changes
    return deltas


@dataclass(frozen=True)
class FixedTests:
    where: str
    tests: list[str]


def fixed_tests(run: RunResult) -> list[FixedTests]:
    """The tests fixed since the baseline, checkpoint by checkpoint."""
    found: dict[str, list[str]] = {}
    for change in run.comparison.fixed if run.comparison is not None else ():
        found.setdefault(run.where(change.problem, change.checkpoint), []).append(change.test)
    return [FixedTests(where, tests) for where, tests in found.items()]
