"""What the job summary says of each checkpoint's failing tests: grouped by cause
(results/causes.py, outputs/failing_view.py), the tests that fail the same way once, with how
many they are and which, most first, after the line that the console says too (why it failed,
its main cause); and the text shown under a cause (a traceback, the submission's stderr),
once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scbench_ci.job.reports import cap
from scbench_ci.outputs.console import headline
from scbench_ci.outputs.failing_view import (
    CauseGroup,
    CheckpointCauses,
    cause_groups,
    cause_title,
    checkpoint_causes,
    example_word,
    regressed_tests,
    unreached,
)
from scbench_ci.outputs.summary_levels import Level, end_of
from scbench_ci.problem.model import Group
from scbench_ci.results.causes import first_line
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.trust.markdown import Markdown, code_span, formatted, literal

MAX_ASSERTION_CHARS = 200


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
    told: CheckpointCauses
    """Why it failed and its main cause, as the console tells them."""

    @property
    def failing_count(self) -> int:
        return self.told.failing


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
        groups = cause_groups(checkpoint, newly)
        yield Section(
            problem,
            checkpoint,
            groups,
            deltas.get(key, {}),
            newly,
            run.where(*key),
            checkpoint_causes(run, problem.name, checkpoint, groups),
        )


def told_cause(told: CheckpointCauses) -> Markdown:
    """` The main cause (20 of 21 failing tests): NameError: … (e.g. <code>test_x</code>).`, in
    the words of the console's report, and how many failing tests could not reach the network;
    empty when no test fails."""
    cause, example = told.main_cause, told.example
    if cause is None or example is None:
        return literal("")
    said = formatted(
        " {}: {} ({} <code>{}</code>).",
        cause_title(told),
        headline(cause.cause.text),
        example_word(told),
        example.id,
    )
    network = told.checkpoint.network
    return said if network is None else formatted("{} {}.", said, unreached(network))


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
