"""The small pieces of text the job summary's templates format: rates, durations, the changes
of a count since the baseline, a matrix cell, a checkpoint's verdict line, a row of counts, a
test id in a table cell. Plain strings are escaped by the templates' `finalize`; what lays out
markdown returns Markdown."""

from __future__ import annotations

from scbench_ci.outputs.failure_kinds import verdict
from scbench_ci.outputs.summary_view import cell_label
from scbench_ci.problem.model import Group
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import CheckpointResult
from scbench_ci.results.policy import GroupCounts
from scbench_ci.trust.markdown import Markdown, formatted, joined, literal

MAX_TEST_ID_CHARS = 80
"""A test id in a table cell: its end, which names the test and its parameters."""


def rate(value: float | None) -> str:
    return "\N{EN DASH}" if value is None else f"{value:.1%}"


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def cell(checkpoint: CheckpointResult | None) -> str:
    """A matrix cell: ✅, or ❌ with the Core tests passed or the kind of failure."""
    if checkpoint is None:
        return "\N{EN DASH}"
    if checkpoint.passed:
        return "✅"
    if checkpoint.failure is not None:
        return f"❌ {cell_label(checkpoint.failure.kind)}"
    core = checkpoint.groups[Group.CORE]
    return f"❌ {core.passed}/{core.total}"


def delta(difference: int) -> str:
    """How far a figure of the headline moved since the baseline: ` (+2)`, or ''."""
    return f" ({difference:+d})" if difference else ""


def test_id(value: str) -> str:
    """A test id for a table cell, where it cannot wrap: its end within MAX_TEST_ID_CHARS."""
    if len(value) <= MAX_TEST_ID_CHARS:
        return value
    return "…" + value[-(MAX_TEST_ID_CHARS - 1) :]


def changed(value: int, difference: int) -> str:
    """A count and, when it moved since the baseline, by how much: `7 (+2)`."""
    return f"{value} ({difference:+d})" if difference else str(value)


def group_deltas(comparison: Comparison) -> str:
    """The groups whose counts moved over the checkpoints both runs evaluated:
    `Core +2 passed; Error -1 passed, +1 tests`, or ''."""
    moved = []
    for group, (passed, total) in comparison.group_deltas().items():
        parts = [f"{passed:+d} passed" if passed else "", f"{total:+d} tests" if total else ""]
        if passed or total:
            moved.append(f"{group.value} {', '.join(part for part in parts if part)}")
    return "; ".join(moved)


def verdict_line(checkpoint: CheckpointResult) -> str:
    """`❌ failed in 1.2 s`, and whether the result is an earlier run's."""
    reused = " (earlier result, unchanged)" if checkpoint.reused else ""
    return f"{verdict(checkpoint)} in {duration(checkpoint.duration_s)}{reused}"


def passed_mark(passed: bool | None) -> str:
    return "\N{EN DASH}" if passed is None else ("✅" if passed else "❌")


def counts_cells(counts: GroupCounts, moved: tuple[int, int], flaky_column: bool) -> Markdown:
    """The cells of a row of a checkpoint's counts after its label: `7 (+2) | 1 | 0 | 8 | …`."""
    cells: list[object] = [
        changed(counts.passed, moved[0]),
        counts.failed,
        counts.skipped,
        changed(counts.total, moved[1]),
        rate(counts.pass_rate),
    ]
    if flaky_column:
        cells.append(counts.flaky)
    return formatted("{} |", joined(" | ", cells))


def test_cell(value: str, line: int | None) -> Markdown:
    """A test id in a table cell, in monospace, with its line."""
    if line:
        return formatted("<code>{}</code> (line {})", test_id(value), line)
    return formatted("<code>{}</code>", test_id(value))


def more(count: int, listed: int) -> Markdown:
    """Under a list that shows `listed` of `count` entries: how many it leaves out."""
    if count <= listed:
        return literal("")
    return formatted("\n… and {} more, not listed here.\n", count - listed)
