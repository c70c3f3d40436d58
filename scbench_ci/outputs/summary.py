"""The markdown job summary of a run's results, kept under GitHub's size limit.

It renders the typed results (`results.RunResult`), as `results.file.load_results` also reads
them back from a results.json, so a results.json file gives the same summary. Its size follows
what went wrong, not how much ran: a headline with the numbers that matter, an overview (with
several problems, a matrix of problems x checkpoints that fits the page), the warnings once each,
the changes since a baseline (templates/changes.md.j2), the history of the last runs
(templates/history.md.j2), then a section only for each checkpoint
that `details` selects (by default those that failed or changed); summary_view.py makes what the
template lays out.
Every `{{ }}` of the templates is escaped unless it is `Markdown` (trust/markdown.py): the
environment's `finalize` does it, so no template can forget it; the filters and helpers below
that lay out markdown return Markdown, from our own words and escaped values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import islice
from pathlib import PurePath
from typing import Any

import jinja2

from scbench_ci.outputs.console import (
    baseline_date,
    change_counts,
    flaky_counting,
    flaky_meaning,
    flaky_outcome,
    flaky_tests,
    headline,
    passed_of,
)
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, run_headline
from scbench_ci.outputs.summary_view import (
    DEFAULT_DETAILS,
    LISTED_PLACES,
    cell_label,
    checkpoint_changes,
    detailed,
    history_date,
    history_view,
    matrix,
    numbers,
    run_warnings,
)
from scbench_ci.problem.model import Group
from scbench_ci.reports import FAILING, cap
from scbench_ci.results import policy
from scbench_ci.results.comparison import Comparison
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    ProblemResult,
    RunResult,
    TestResult,
    why_failed,
)
from scbench_ci.results.policy import GroupCounts
from scbench_ci.results.trends import NEWLY_FLAKY_RUNS
from scbench_ci.trust.markdown import (
    Markdown,
    code_span,
    cut,
    fenced,
    formatted,
    html_text,
    joined,
    link,
    literal,
    render,
    template_join,
    template_value,
)

SUMMARY_FILE = "summary.md"
TEMPLATE = "summary.md.j2"
MAX_BYTES = 1_000_000
"""GitHub refuses a step summary over 1 MiB; this leaves room for what others append."""
MIN_BYTES = 1024
MAX_WARNINGS = 10
MAX_NOTE_CHARS = 500
"""A note on how the runs' selections differ can name many checkpoints."""
DETAILS_TITLES = {
    "failed": "Checkpoints that failed",
    "changed": "Checkpoints that failed or changed",
    "all": "Every checkpoint",
}
FOCUSED_SECTIONS = 3
"""Up to this many checkpoints with a section, each is shown whole, every failing test with its
traceback; with more, each is a folded block listing its first LISTED_COMPACT failing tests."""
LISTED_COMPACT = 5
MAX_TEST_ID_CHARS = 80
"""A test id in a table cell: its end, which names the test and its parameters."""
GROUPS = tuple(group.value for group in Group)


@dataclass(frozen=True)
class Level:
    """How much a summary shows of the failing tests and logs. LEVELS go from most to least."""

    listed_per_group: int | None
    """How many failing tests of each group are listed; None: all of them."""
    test_chars: int
    """The cap on the text shown for one failing test."""
    tracebacks: bool
    log_lines: int
    log_chars: int
    """The cap on the end of a log shown with a failure kind."""
    left_out: str
    """What this level leaves out, for the note that says the summary was shortened."""
    listed_changes: int
    """How many entries of each list of changes (and of flaky tests) are shown; each list
    says how many more it leaves out."""


LEVELS = (
    Level(None, 2000, True, 40, 6000, "", 100),
    Level(
        None,
        500,
        False,
        40,
        6000,
        "tracebacks are left out and messages cut to 500 characters",
        100,
    ),
    Level(
        10,
        500,
        False,
        40,
        6000,
        "only the first 10 failing tests of each group are listed, without tracebacks",
        20,
    ),
    Level(0, 0, False, 10, 1000, "failing tests are not listed and logs are cut to their end", 5),
)


@dataclass(frozen=True)
class Explanation:
    title: str
    text: Markdown
    """What the failure means and what to do about it."""
    log: str
    """What the log tail shown below it is."""


FAILURE_KINDS = {
    FailureKind.SETUP.value: Explanation(
        "setup failed",
        literal(
            "A command that prepares the submission before the tests (such as installing its "
            "requirements.txt) failed, so no test ran. Check the submission's dependencies and the "
            "environment's setup commands."
        ),
        "The end of the setup log:",
    ),
    FailureKind.TIMEOUT.value: Explanation(
        "timed out",
        literal(
            "The run took longer than the session timeout and was stopped, so its results are "
            "incomplete. Look for a submission or test that hangs (waiting for input, a server "
            "that never exits), or raise `--session-timeout`."
        ),
        "The end of the log:",
    ),
    FailureKind.INFRASTRUCTURE.value: Explanation(
        "infrastructure failure",
        literal(
            "The tests could not be run for a cause outside the submission (Docker, the image, or "
            "installing pytest and its plugins): this says nothing about the submission. Run the "
            "job again; if it fails the same way, the log says why."
        ),
        "The end of the log:",
    ),
    FailureKind.COLLECTION.value: Explanation(
        "test collection failed",
        literal(
            "pytest could not import the test files, so no test ran. This is usually an error in "
            "the problem's tests or conftest.py, a test dependency missing from config.yaml, or a "
            "submission module the tests import that does not load."
        ),
        "The collection errors:",
    ),
    FailureKind.INTERRUPTED.value: Explanation(
        "pytest interrupted",
        literal(
            "pytest was interrupted (as by Ctrl-C) before its tests finished, so the results are "
            "incomplete. Something in the run, most likely the submission, sent it the signal."
        ),
        "The end of the log:",
    ),
    FailureKind.NO_TESTS.value: Explanation(
        "no tests collected",
        literal(
            "pytest found no test to run. Check that the problem has `tests/test_<checkpoint>.py` "
            "for this checkpoint and that extra pytest arguments (`-k`, `-m`) do not deselect "
            "every test."
        ),
        "The end of the log:",
    ),
    FailureKind.USAGE.value: Explanation(
        "pytest usage error",
        literal(
            "pytest rejected its command line. Check the extra pytest arguments given after `--` "
            "and the options the problem's conftest.py registers."
        ),
        "The end of the log:",
    ),
    FailureKind.INTERNAL.value: Explanation(
        "pytest internal error",
        literal(
            "pytest itself crashed, often in a plugin or a conftest.py hook of the problem's: the "
            "machinery around the tests failed, and this says nothing about the submission."
        ),
        "The end of the log:",
    ),
    FailureKind.TAMPERED.value: Explanation(
        "reports tampered with",
        literal(
            "The reports do not match the seal the test runner put on them when it wrote them: "
            "something in the run changed or replaced them afterwards, so no test outcome is "
            "believed. The submission's code is the likely cause."
        ),
        "The end of the log:",
    ),
    FailureKind.ABORTED.value: Explanation(
        "test runner stopped",
        literal(
            "The test runner was killed before it could write and seal its reports, so no test "
            "outcome is counted. Nothing outside the run does that: the submission's code is the "
            "likely cause."
        ),
        "The end of the log:",
    ),
    FailureKind.RESOURCES.value: Explanation(
        "resource limit reached",
        literal(
            "The run reached its memory, process or disk limit, and pytest could not finish or "
            "report. The message names the limit; the submission's code used it up."
        ),
        "The end of the log:",
    ),
    FailureKind.REPORTS.value: Explanation(
        "reports unusable",
        literal(
            "The test runner sealed a report that cannot be used (it is too large, or not the JSON "
            "pytest writes), so no test outcome is counted."
        ),
        "The end of the log:",
    ),
    FailureKind.MISSING.value: Explanation(
        "submission missing",
        literal(
            "No test ran. Check the `--submission` template (`{problem}` and `{checkpoint}` are "
            "replaced by each problem's folder name and each checkpoint's name)."
        ),
        "",
    ),
}


@dataclass(frozen=True)
class FailingGroup:
    name: str
    tests: list[TestResult]
    """Those that newly fail since the baseline first."""
    regressed: int


@dataclass(frozen=True)
class Section:
    """One checkpoint, with its failing tests sorted by group."""

    problem: ProblemResult
    checkpoint: CheckpointResult
    failing: list[FailingGroup]
    deltas: dict[str, tuple[int, int]]
    """Per group and for "All", the change in passed and in total tests since the baseline;
    empty without one."""
    regressed: frozenset[str]
    """The ids of its tests that newly fail since the baseline."""
    title: str
    """`problem / checkpoint`, or the checkpoint alone in a run of one problem."""

    @property
    def failing_count(self) -> int:
        return sum(len(group.tests) for group in self.failing)

    @property
    def failing_tests(self) -> list[TestResult]:
        """Every failing test, those that newly fail first, then group by group."""
        tests = [test for group in self.failing for test in group.tests]
        return sorted(tests, key=lambda test: test.id not in self.regressed)


def render_summary(
    run: RunResult,
    *,
    artifact_url: str | None = None,
    artifact_name: str | None = None,
    reports_folder: PurePath | None = None,
    max_bytes: int = MAX_BYTES,
    fail_on: str = DEFAULT_FAIL_ON,
    details: str = DEFAULT_DETAILS,
) -> Markdown:
    """The markdown summary of a run, at most `max_bytes` UTF-8 bytes, its headline following
    `fail_on` (the run's `--fail-on`), a section for each checkpoint `details` selects
    (summary_view.DETAILS); `reports_folder`: where the reports are when no artifact is named
    (None: "the output folder").

    It shows as much as fits: each of LEVELS in turn, and when even the last one is too big,
    that one cut at a line. A ValueError for an artifact_url that is not http(s), or a max_bytes
    under MIN_BYTES.
    """
    if max_bytes < MIN_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_BYTES}")
    template = load_template(TEMPLATE)
    checkpoints = [checkpoint for _, checkpoint in run.checkpoints()]
    shown = detailed(run, details)
    context = {
        "run": run,
        "headline": run_headline(run, fail_on),
        "numbers": numbers(run),
        "checkpoints": checkpoints,
        "many_problems": len(run.problems) > 1,
        "many_checkpoints": len(checkpoints) > 1,
        "matrix": matrix(run),
        "warnings": run_warnings(run),
        "listed_places": LISTED_PLACES,
        "details": details,
        "hidden": len(checkpoints) - len(shown),
        "compact": len(shown) > FOCUSED_SECTIONS,
        "details_title": DETAILS_TITLES,
        "comparison": run.comparison,
        "changes": checkpoint_changes(run),
        "place": run.where,
        "history": history_view(run),
        "history_place": lambda key: run.where(*key.rsplit("/", 1)),
        "newly_flaky_runs": NEWLY_FLAKY_RUNS,
        "flaky_count": sum(checkpoint.counts.flaky for checkpoint in checkpoints),
        "flaky_meaning": flaky_meaning(run),
        "flaky_counting": flaky_counting(run),
        "max_note_chars": MAX_NOTE_CHARS,
        "artifact": artifact_markdown(artifact_url, artifact_name, reports_folder),
        "max_bytes": max_bytes,
        "groups": GROUPS,
        "kinds": FAILURE_KINDS,
        "max_warnings": MAX_WARNINGS,
    }
    for level in LEVELS[:-1]:
        markdown = render(template, {**context, **_read(run, level, shown)}, max_bytes)
        if markdown is not None:
            return markdown
    last = {**context, **_read(run, LEVELS[-1], shown)}
    return cut(render(template, last), max_bytes)


def _read(run: RunResult, level: Level, shown: set[tuple[str, str]]) -> dict[str, Any]:
    """What the template reads of the checkpoints' tests at a level: the sections read them as
    they are rendered, one checkpoint at a time."""
    return {
        "level": level,
        "listed_compact": 0 if level.listed_per_group == 0 else LISTED_COMPACT,
        "sections": _sections(run, shown),
        "flaky": list(islice(flaky_tests(run), level.listed_changes)),
    }


def _sections(run: RunResult, shown: set[tuple[str, str]]) -> Iterator[Section]:
    deltas = _checkpoint_deltas(run.comparison)
    regressed = _regressed(run.comparison)
    for problem, checkpoint in run.checkpoints():
        key = (problem.name, checkpoint.name)
        if key not in shown:
            continue
        newly = regressed.get(key, frozenset())
        yield Section(
            problem,
            checkpoint,
            _failing_groups(checkpoint, newly),
            deltas.get(key, {}),
            newly,
            run.where(*key),
        )


def _regressed(comparison: Comparison | None) -> dict[tuple[str, str], frozenset[str]]:
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


# Rendering.


def load_template(name: str) -> jinja2.Template:
    """A template of scbench_ci/outputs/templates, with the escaping filters."""
    return _environment().get_template(name)


@cache
def _environment() -> jinja2.Environment:
    # No HTML autoescape: the output is markdown. `finalize` escapes every `{{ }}` that is not
    # Markdown instead, and the filters that lay out markdown return Markdown. Macros would
    # give plain strings (escaped again), so the templates call Python helpers instead.
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("scbench_ci.outputs", "templates"),
        autoescape=False,
        finalize=template_value,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(
        join=template_join,
        html=html_text,
        code=code_span,
        fenced=fenced,
        rate=_rate,
        duration=_duration,
        headline=headline,
        tail=_tail,
        failure_text=_failure_text,
        verdict=_verdict,
        verdict_line=_verdict_line,
        cell=_cell,
        describe_policy=policy.describe,
        why_failed=why_failed,
        changed=_changed,
        flaky_outcome=flaky_outcome,
        passed_of=passed_of,
        passed_mark=_passed_mark,
        group_deltas=_group_deltas,
        delta=_delta,
        test_id=_test_id,
        cell_label=cell_label,
        history_date=history_date,
    )
    environment.globals.update(
        change_counts=change_counts,
        baseline_date=baseline_date,
        counts_cells=_counts_cells,
        explained=_explained,
        test_cell=_test_cell,
        more=_more,
    )
    return environment


def _failing_groups(checkpoint: CheckpointResult, regressed: frozenset[str]) -> list[FailingGroup]:
    by_group: dict[str, list[TestResult]] = {group: [] for group in GROUPS}
    for test in checkpoint.tests:
        if test.status in FAILING:
            by_group[test.group].append(test)
    return [
        FailingGroup(
            name,
            sorted(tests, key=lambda test: test.id not in regressed),
            sum(test.id in regressed for test in tests),
        )
        for name, tests in by_group.items()
        if tests
    ]


def artifact_markdown(url: str | None, name: str | None, folder: PurePath | None) -> Markdown:
    """Where the full reports are, as markdown: the artifact, else the folder as it was given."""
    if url is not None:
        return link(name or literal("the workflow artifact"), url)
    if name:
        return formatted("the workflow artifact **{}**", name)
    if folder is None:
        return literal("the output folder")
    return formatted("the {} folder", code_span(str(folder).rstrip("/") + "/"))


def _failure_text(test: TestResult, level: Level) -> str:
    """The message, then the end of the traceback, within level.test_chars."""
    message = (test.message or "").strip()
    details = (test.details or "").strip() if level.tracebacks else ""
    if not details:
        return cap(message, level.test_chars) or "(no message)"
    head = cap(message, level.test_chars // 2) or ""
    return f"{head}\n\n{_end_of(details, level.test_chars - len(head))}".strip()


def _tail(log: str, level: Level) -> str:
    return _end_of("\n".join(log.splitlines()[-level.log_lines :]), level.log_chars)


def _end_of(text: str, limit: int) -> str:
    """The last whole lines of the text within about `limit` characters, saying what was cut."""
    if len(text) <= limit:
        return text
    end = text[-limit:]
    end = end[end.find("\n") + 1 :]
    return f"[{len(text) - len(end)} earlier characters cut] …\n{end}"


def _rate(rate: float | None) -> str:
    return "\N{EN DASH}" if rate is None else f"{rate:.1%}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _verdict(checkpoint: CheckpointResult) -> str:
    if checkpoint.passed:
        return "✅ passed"
    failure = checkpoint.failure
    return "❌ failed" if failure is None else f"❌ {FAILURE_KINDS[failure.kind].title}"


def _cell(checkpoint: CheckpointResult | None) -> str:
    """A matrix cell: ✅, or ❌ with the Core tests passed or the kind of failure."""
    if checkpoint is None:
        return "\N{EN DASH}"
    if checkpoint.passed:
        return "✅"
    if checkpoint.failure is not None:
        return f"❌ {cell_label(checkpoint.failure.kind)}"
    core = checkpoint.groups[Group.CORE]
    return f"❌ {core.passed}/{core.total}"


def _delta(difference: int) -> str:
    """How far a figure of the headline moved since the baseline: ` (+2)`, or ''."""
    return f" ({difference:+d})" if difference else ""


def _test_id(test_id: str) -> str:
    """A test id for a table cell, where it cannot wrap: its end within MAX_TEST_ID_CHARS."""
    if len(test_id) <= MAX_TEST_ID_CHARS:
        return test_id
    return "…" + test_id[-(MAX_TEST_ID_CHARS - 1) :]


def _changed(value: int, difference: int) -> str:
    """A count and, when it moved since the baseline, by how much: `7 (+2)`."""
    return f"{value} ({difference:+d})" if difference else str(value)


def _group_deltas(comparison: Comparison) -> str:
    """The groups whose counts moved over the checkpoints both runs evaluated:
    `Core +2 passed; Error -1 passed, +1 tests`, or ''."""
    moved = []
    for group, (passed, total) in comparison.group_deltas().items():
        parts = [f"{passed:+d} passed" if passed else "", f"{total:+d} tests" if total else ""]
        if passed or total:
            moved.append(f"{group.value} {', '.join(part for part in parts if part)}")
    return "; ".join(moved)


# Helpers the templates call where a macro would return a plain string.


def _verdict_line(checkpoint: CheckpointResult) -> str:
    """`❌ failed in 1.2 s`, and whether the result is an earlier run's."""
    reused = " (earlier result, unchanged)" if checkpoint.reused else ""
    return f"{_verdict(checkpoint)} in {_duration(checkpoint.duration_s)}{reused}"


def _passed_mark(passed: bool | None) -> str:
    return "\N{EN DASH}" if passed is None else ("✅" if passed else "❌")


def _counts_cells(counts: GroupCounts, delta: tuple[int, int], flaky_column: bool) -> Markdown:
    """The cells of a row of a checkpoint's counts after its label: `7 (+2) | 1 | 0 | 8 | …`."""
    cells: list[object] = [
        _changed(counts.passed, delta[0]),
        counts.failed,
        counts.skipped,
        _changed(counts.total, delta[1]),
        _rate(counts.pass_rate),
    ]
    if flaky_column:
        cells.append(counts.flaky)
    return formatted("{} |", joined(" | ", cells))


def _explained(failure: Failure, caption: str, level: Level) -> Markdown:
    """A failure's kind, what it means, and the end of its log under `caption`."""
    kind = FAILURE_KINDS[failure.kind]
    parts = [formatted("\n**{}**. {}\n", kind.title.capitalize(), kind.text)]
    if failure.log_tail:
        if caption:
            parts.append(formatted("\n{}\n", caption))
        parts.append(formatted("\n{}\n", fenced(_tail(failure.log_tail, level))))
    return joined("", parts)


def _test_cell(test_id: str, line: int | None) -> Markdown:
    """A test id in a table cell, in monospace, with its line."""
    if line:
        return formatted("<code>{}</code> (line {})", _test_id(test_id), line)
    return formatted("<code>{}</code>", _test_id(test_id))


def _more(count: int, listed: int) -> Markdown:
    """Under a list that shows `listed` of `count` entries: how many it leaves out."""
    if count <= listed:
        return literal("")
    return formatted("\n… and {} more, not listed here.\n", count - listed)
