"""The compact plain-text report the CLI (and the action) prints at the end of a run, and the
plain-text wording of changes and flaky tests that the summary and the annotations share.

Names, messages, warnings and log tails in it come from the problem and the submission: the
report is made inert, so neither a terminal nor GitHub's runner reading it takes any of that for
an escape sequence or a workflow command.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.job.reports import Status
from scbench_ci.outputs.exit_status import run_headline
from scbench_ci.outputs.failing_view import (
    CheckpointCauses,
    ListedCheckpoints,
    cause_title,
    example_word,
    failing_checkpoints,
    passing_with_failures,
    run_network,
    tests_in,
    unneeded,
    unreached,
)
from scbench_ci.outputs.failing_view import told as told_causes
from scbench_ci.problem.model import Group
from scbench_ci.results.causes import first_line
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import (
    CheckpointResult,
    ProblemResult,
    RunResult,
    TestResult,
    why_failed,
)
from scbench_ci.results.policy import GroupCounts, counted
from scbench_ci.results.quality_steps import erosion_rises, percent
from scbench_ci.trust.terminal import inert

HEADLINE_CHARS = 120
UNMEASURED_NAMED = 5
"""How many of a checkpoint's source files left out of its code-quality figures the report
names."""
LISTED = 20
"""How many entries of each list (regressions, verdict changes, notes, flaky tests, failed
checkpoints) the report shows."""


@dataclass(frozen=True)
class FlakyTest:
    problem: ProblemResult
    checkpoint: CheckpointResult
    test: TestResult


@dataclass(frozen=True)
class Coloured:
    """A line of the report's own making, coloured on a terminal: its text is made inert like
    every other line, and only whole lines built here get a colour, so no text of a submission's
    can make itself green."""

    text: str
    passed: bool


def render_report(
    result: RunResult, results_path: Path | None, *, fail_on: str, colour: bool = False
) -> str:
    """`fail_on`: the run's `--fail-on`, which its `Verdict:` line follows; `colour`: the verdicts
    in green and red (ANSI), for a terminal."""
    lines: list[str | Coloured] = [""]
    if result.comparison is not None:
        lines += [*_comparison_lines(result.comparison), ""]
    compact = len(result.problems) > 1
    checkpoints = [checkpoint for _, checkpoint in result.checkpoints()]
    for problem, checkpoint in result.checkpoints():
        if compact:
            lines += _checkpoint_line(
                problem.name, checkpoint, why_failed(checkpoint, result.policy)
            )
        else:
            lines += _checkpoint_lines(result, problem, checkpoint, len(checkpoints) == 1)
    if compact:
        lines.append("")
    if len(checkpoints) > 1:
        passed = sum(checkpoint.passed for checkpoint in checkpoints)
        lines.append(
            f"{passed} of {len(checkpoints)} checkpoints passed "
            f"({counted(len(result.problems), 'problem')}, {result.duration_s:.1f} s, "
            f"{counted(result.jobs, 'job')} side by side)"
        )
    lines += _flaky_lines(result)
    if len(checkpoints) > 1:
        lines += _failed_lines(result)
        lines += _passing_failures_lines(result, len(checkpoints))
        lines += _network_lines(result)
    lines += _erosion_lines(result)
    lines += _unmeasured_lines(result)
    headline = run_headline(result, fail_on)
    lines.append(rules_line(result.scbench))
    lines.append(Coloured(f"Verdict: {headline.text}", headline.mark == "✅"))
    if result.infrastructure_failure:
        lines.append("An infrastructure failure stopped the evaluation; see the log tail above.")
    if results_path is not None:
        lines.append(f"Results: {results_path}")
    return "\n".join(_shown(line, colour) for line in lines) + "\n"


_GREEN, _RED, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


def _shown(line: str | Coloured, colour: bool) -> str:
    if not isinstance(line, Coloured):
        return inert(line)
    text = inert(line.text)
    return f"{_GREEN if line.passed else _RED}{text}{_RESET}" if colour else text


# Shared with the summary and the annotations, which escape it for where it goes.


def change_counts(comparison: Comparison) -> str:
    """`2 regressions, 1 fixed, 0 new, 0 removed, 1 flaky, 0 verdict changes`"""
    return (
        f"{counted(len(comparison.regressions), 'regression')}, "
        f"{len(comparison.fixed)} fixed, {len(comparison.new)} new, "
        f"{len(comparison.removed)} removed, {len(comparison.flaky)} flaky, "
        f"{counted(len(comparison.verdict_changes), 'verdict change')}"
    )


def baseline_date(comparison: Comparison) -> str:
    """When the baseline ran, to the minute (in UTC when the time says its zone), or ''."""
    try:
        started = datetime.fromisoformat(comparison.baseline_started_at)
    except ValueError:
        return comparison.baseline_started_at
    if started.tzinfo is None:
        return f"{started:%Y-%m-%d %H:%M}"
    return f"{started.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def flaky_tests(result: RunResult) -> Iterator[FlakyTest]:
    """The run's flaky tests, reading only the checkpoints that have some."""
    for problem, checkpoint in result.checkpoints():
        if checkpoint.counts.flaky:
            for test in checkpoint.tests:
                if test.status is Status.FLAKY:
                    yield FlakyTest(problem, checkpoint, test)


def flaky_outcome(test: TestResult) -> str:
    """`passed 2 of 3 runs` (`--repeat`) or `passed on attempt 3` (`--reruns`)."""
    repeat = test.repeat
    if repeat is not None and repeat.passed < repeat.runs:
        return f"passed {repeat.passed} of {repeat.runs} runs"
    return f"passed on attempt {test.reruns + 1}"


def flaky_meaning(result: RunResult) -> str:
    """What made a test of the run flaky: passing in only some of `--repeat`'s runs of its
    checkpoint, or passing when `--reruns` reran it in its pytest session."""
    ways = []
    if result.repeat > 1:
        ways.append(
            f"passed in some of the {result.repeat} runs of its checkpoint (--repeat) and "
            "failed in the others"
        )
    if result.reruns or not ways:
        ways.append("failed, then passed when pytest reran it in the same session (--reruns)")
    return "A flaky test " + ", or ".join(ways)


def flaky_counting(result: RunResult) -> str:
    if result.flaky_passes:
        return "counted as passed (--flaky-passes)"
    return "counted as failed for the policy"


def passed_of(counts: GroupCounts) -> str:
    """`7/8`, and `7/8 (1 skipped)` when skipped or xfailed tests, which neither pass nor fail,
    are why the passed ones are fewer than all."""
    fraction = f"{counts.passed}/{counts.total}"
    return f"{fraction} ({counts.skipped} skipped)" if counts.skipped else fraction


def headline(message: str | None) -> str:
    """The first line of a message, at most HEADLINE_CHARS long."""
    line = first_line(message)
    return line if len(line) <= HEADLINE_CHARS else line[: HEADLINE_CHARS - 1] + "…"


# The report's parts.


def _comparison_lines(comparison: Comparison) -> list[str]:
    date = baseline_date(comparison)
    source = f"{comparison.baseline} ({date})" if date else comparison.baseline
    lines = [f"Compared with {source}: {change_counts(comparison)}"]
    for change in comparison.regressions[:LISTED]:
        message = headline(change.message)
        lines.append(
            f"  regressed {change.problem} / {change.checkpoint}: {change.test} "
            f"({change.before} -> {change.after}){': ' + message if message else ''}"
        )
    lines += _more(len(comparison.regressions))
    verdicts = comparison.verdict_changes
    for delta in verdicts[:LISTED]:
        lines.append(
            f"  verdict {delta.problem} / {delta.checkpoint}: "
            f"{_passed(delta.passed_before)} -> {_passed(delta.passed_after)}"
        )
    lines += _more(len(verdicts))
    notes = comparison.selection_notes
    return [*lines, *(f"  note: {note}" for note in notes[:LISTED]), *_more(len(notes))]


def _flaky_lines(result: RunResult) -> list[str]:
    total = sum(checkpoint.counts.flaky for _, checkpoint in result.checkpoints())
    if not total:
        return []
    lines = [f"Flaky tests: {total}, {flaky_counting(result)}"]
    for flaky in islice(flaky_tests(result), LISTED):
        message = headline(flaky.test.message)
        lines.append(
            f"  {flaky.problem.name} / {flaky.checkpoint.name}: {flaky.test.id} "
            f"{flaky_outcome(flaky.test)}{'; first failure: ' + message if message else ''}"
        )
    return [*lines, *_more(total), ""]


def _failed_lines(result: RunResult) -> list[str]:
    """The recap at the end of a run of several checkpoints: the failed ones, why and their main
    cause (failing_view.py, as the summary's first screen)."""
    failed = failing_checkpoints(result)
    if not failed.count:
        return []
    lines = [f"{counted(failed.count, 'checkpoint')} failed:"]
    for item in failed.listed:
        where = f"{item.problem} / {item.checkpoint.name}"
        lines += [f"  {where}: {headline(item.why)}", *_cause_lines(item, "    ")]
    return [*lines, *_more_of(failed)]


def _passing_failures_lines(result: RunResult, checkpoints: int) -> list[str]:
    """The passing checkpoints of a run of several whose tests fail somewhere."""
    found = passing_with_failures(result)
    if not found.count:
        return []
    lines = [
        f"Failing tests in checkpoints that pass: {tests_in(found, checkpoints)} "
        f"({unneeded(result.policy, found.tests)})"
    ]
    for item in found.listed:
        lines += [
            f"  {item.problem} / {item.checkpoint.name}: {counted(item.failing, 'failing test')}",
            *_cause_lines(item, "    "),
        ]
    return [*lines, *_more_of(found)]


def _cause_lines(item: CheckpointCauses, indent: str) -> list[str]:
    """`The main cause (20 of 21 failing tests): NameError: …`, then one of its tests, how
    many causes more summary.md shows, and how many failing tests could not reach the
    network."""
    cause, example = item.main_cause, item.example
    if cause is None or example is None:
        return []
    lines = [
        f"{indent}{cause_title(item)}: {headline(cause.cause.text)}",
        f"{indent}{example_word(item)} {example.id}",
    ]
    others = item.causes - 1
    if others:
        lines.append(f"{indent}and {counted(others, 'more cause')}, in the summary")
    network = item.checkpoint.network
    return [*lines, *([f"{indent}{unreached(network)}"] if network is not None else [])]


def _network_lines(result: RunResult) -> list[str]:
    """For a run of several checkpoints: its failing tests that could not reach the network."""
    network = run_network(result)
    if network is None:
        return []
    where = sum(checkpoint.network is not None for _, checkpoint in result.checkpoints())
    return [f"In {counted(where, 'checkpoint')}, {unreached(network)}"]


def _more_of(found: ListedCheckpoints) -> list[str]:
    left = found.count - len(found.listed)
    return [f"  … and {left} more, in the summary"] if left else []


def _erosion_lines(result: RunResult) -> list[str]:
    """The checkpoints whose erosion rose most since their problem's previous measured
    checkpoint (RISES_LISTED of them, only rises)."""
    rises = erosion_rises(result)
    if not rises:
        return []
    return [
        "Erosion rose most at:",
        *(
            f"  {rise.problem} / {rise.checkpoint}: {percent(rise.before):.1f}% at "
            f"{rise.previous} -> {percent(rise.after):.1f}% (+{rise.points:.1f} points)"
            for rise in rises
        ),
    ]


def _unmeasured_lines(result: RunResult) -> list[str]:
    """The checkpoints whose code-quality figures leave source files of the submission out, and
    the first files of each (their names escaped to one line when they were read)."""
    lines = []
    for problem, checkpoint in result.checkpoints():
        quality = checkpoint.quality
        left_out = None if quality is None or quality.measures is None else quality.unmeasured
        if left_out is None or left_out.count == 0:
            continue
        lines.append(
            f"  {problem.name} / {checkpoint.name}: {counted(left_out.count, 'file')} "
            f"({left_out.named(UNMEASURED_NAMED)})"
        )
    if not lines:
        return []
    return ["Source files the code-quality measure left out:", *lines[:LISTED], *_more(len(lines))]


def _more(count: int) -> list[str]:
    return [f"  … and {count - LISTED} more"] if count > LISTED else []


def _passed(passed: bool | None) -> str:
    return "passed" if passed else "failed"


def _checkpoint_lines(
    result: RunResult, problem: ProblemResult, checkpoint: CheckpointResult, alone: bool
) -> list[str | Coloured]:
    """`alone`: the run's only checkpoint, whose report is all of the first screen: its failing
    tests' main cause, as its summary says it."""
    verdict = "passed" if checkpoint.passed else "failed"
    reused = " (earlier result, unchanged)" if checkpoint.reused else ""
    heading = (
        f"{problem.name} / {checkpoint.name}: {verdict} in {checkpoint.duration_s:.1f} s{reused}"
    )
    lines: list[str | Coloured] = [Coloured(heading, checkpoint.passed)]
    lines.append(f"  {'group':<14}{'passed/total':>13}{'rate':>9}")
    for group in Group:
        lines.append(_row(group.value, checkpoint.groups[group]))
    lines.append(_row("all", checkpoint.counts))
    why = why_failed(checkpoint, result.policy)
    told = told_causes(result, problem.name, checkpoint) if alone else None
    if why is not None:
        lines.append(f"  why it failed: {why}")
    elif told is not None and told.failing:
        lines.append(
            f"  {counted(told.failing, 'failing test')} ({unneeded(result.policy, told.failing)})"
        )
    if told is not None:
        lines += _cause_lines(told, "    ")
    if checkpoint.failure is not None and checkpoint.failure.log_tail:
        lines += ["    " + line for line in checkpoint.failure.log_tail.splitlines()[-15:]]
    for warning in checkpoint.warnings:
        lines.append(f"  warning: {inert(warning, one_line=True)}")
    return [*lines, ""]


def _checkpoint_line(
    problem: str, checkpoint: CheckpointResult, why: str | None
) -> list[str | Coloured]:
    """One line, and one more saying why when it failed."""
    core = checkpoint.groups[Group.CORE]
    counts = checkpoint.counts
    verdict = "passed" if checkpoint.passed else "FAILED"
    reused = " (earlier result)" if checkpoint.reused else ""
    line = (
        f"{verdict:<7}{problem} / {checkpoint.name}: Core {passed_of(core)}, "
        f"all {passed_of(counts)}, {checkpoint.duration_s:.1f} s{reused}"
    )
    shown = Coloured(line, checkpoint.passed)
    return [shown] if why is None else [shown, f"       {why}"]


def _row(label: str, counts: GroupCounts) -> str:
    rate = "-" if counts.pass_rate is None else f"{counts.pass_rate:.1%}"
    fraction = f"{counts.passed}/{counts.total}"
    skipped = f"  {counts.skipped} skipped" if counts.skipped else ""
    return f"  {label:<14}{fraction:>13}{rate:>9}{skipped}"
