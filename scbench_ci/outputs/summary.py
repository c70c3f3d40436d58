"""The markdown job summary of a run's results, kept under GitHub's size limit.

It renders the typed results (`results.RunResult`), as `results.file.load_results` also reads
them back from a results.json, so a results.json file gives the same summary. Its size follows
what went wrong, not how much ran: a headline with the numbers that matter, an overview (with
several problems, a matrix of problems x checkpoints that fits the page), the warnings once each,
the changes since a baseline (templates/changes.md.j2), the history of the last runs
(templates/history.md.j2), then a section only for each checkpoint
that `details` selects (by default those that failed or changed); summary_view.py makes what the
template lays out.
Every value that came from the submission or the tests passes one of the escaping filters
below; the templates say which one where.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import islice
from pathlib import PurePath
from typing import Any
from urllib.parse import quote, urlsplit

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
    FailureKind,
    ProblemResult,
    RunResult,
    TestResult,
    why_failed,
)
from scbench_ci.results.trends import NEWLY_FLAKY_RUNS

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
    text: str
    """What the failure means and what to do about it."""
    log: str
    """What the log tail shown below it is."""


FAILURE_KINDS = {
    FailureKind.SETUP.value: Explanation(
        "setup failed",
        "A command that prepares the submission before the tests (such as installing its "
        "requirements.txt) failed, so no test ran. Check the submission's dependencies and the "
        "environment's setup commands.",
        "The end of the setup log:",
    ),
    FailureKind.TIMEOUT.value: Explanation(
        "timed out",
        "The run took longer than the session timeout and was stopped, so its results are "
        "incomplete. Look for a submission or test that hangs (waiting for input, a server that "
        "never exits), or raise `--session-timeout`.",
        "The end of the log:",
    ),
    FailureKind.INFRASTRUCTURE.value: Explanation(
        "infrastructure failure",
        "The tests could not be run for a cause outside the submission (Docker, the image, or "
        "installing pytest and its plugins): this says nothing about the submission. Run the job "
        "again; if it fails the same way, the log says why.",
        "The end of the log:",
    ),
    FailureKind.COLLECTION.value: Explanation(
        "test collection failed",
        "pytest could not import the test files, so no test ran. This is usually an error in "
        "the problem's tests or conftest.py, a test dependency missing from config.yaml, or a "
        "submission module the tests import that does not load.",
        "The collection errors:",
    ),
    FailureKind.INTERRUPTED.value: Explanation(
        "pytest interrupted",
        "pytest was interrupted (as by Ctrl-C) before its tests finished, so the results are "
        "incomplete. Something in the run, most likely the submission, sent it the signal.",
        "The end of the log:",
    ),
    FailureKind.NO_TESTS.value: Explanation(
        "no tests collected",
        "pytest found no test to run. Check that the problem has `tests/test_<checkpoint>.py` "
        "for this checkpoint and that extra pytest arguments (`-k`, `-m`) do not deselect "
        "every test.",
        "The end of the log:",
    ),
    FailureKind.USAGE.value: Explanation(
        "pytest usage error",
        "pytest rejected its command line. Check the extra pytest arguments given after `--` "
        "and the options the problem's conftest.py registers.",
        "The end of the log:",
    ),
    FailureKind.INTERNAL.value: Explanation(
        "pytest internal error",
        "pytest itself crashed, often in a plugin or a conftest.py hook of the problem's: the "
        "machinery around the tests failed, and this says nothing about the submission.",
        "The end of the log:",
    ),
    FailureKind.TAMPERED.value: Explanation(
        "reports tampered with",
        "The reports do not match the seal the test runner put on them when it wrote them: "
        "something in the run changed or replaced them afterwards, so no test outcome is "
        "believed. The submission's code is the likely cause.",
        "The end of the log:",
    ),
    FailureKind.ABORTED.value: Explanation(
        "test runner stopped",
        "The test runner was killed before it could write and seal its reports, so no test "
        "outcome is counted. Nothing outside the run does that: the submission's code is the "
        "likely cause.",
        "The end of the log:",
    ),
    FailureKind.RESOURCES.value: Explanation(
        "resource limit reached",
        "The run reached its memory, process or disk limit, and pytest could not finish or "
        "report. The message names the limit; the submission's code used it up.",
        "The end of the log:",
    ),
    FailureKind.REPORTS.value: Explanation(
        "reports unusable",
        "The test runner sealed a report that cannot be used (it is too large, or not the JSON "
        "pytest writes), so no test outcome is counted.",
        "The end of the log:",
    ),
    FailureKind.MISSING.value: Explanation(
        "submission missing",
        "No test ran. Check the `--submission` template (`{problem}` and `{checkpoint}` are "
        "replaced by each problem's folder name and each checkpoint's name).",
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
) -> str:
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
        markdown = _render_within(template, {**context, **_read(run, level, shown)}, max_bytes)
        if markdown is not None:
            return markdown
    last = {**context, **_read(run, LEVELS[-1], shown)}
    return cut_markdown(template.render(last), max_bytes)


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
    # No autoescape: the output is markdown, not HTML. The filters escape each value for the
    # place it goes, which HTML autoescaping cannot know.
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("scbench_ci.outputs", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(
        md=markdown_text,
        html=html_text,
        fenced=fenced,
        rate=_rate,
        duration=_duration,
        headline=headline,
        tail=_tail,
        failure_text=_failure_text,
        verdict=_verdict,
        cell=_cell,
        describe_policy=policy.describe,
        why_failed=why_failed,
        changed=_changed,
        flaky_outcome=flaky_outcome,
        passed_of=passed_of,
        group_deltas=_group_deltas,
        delta=_delta,
        test_id=_test_id,
        cell_label=cell_label,
        history_date=history_date,
    )
    environment.globals.update(change_counts=change_counts, baseline_date=baseline_date)
    return environment


def _render_within(
    template: jinja2.Template, context: dict[str, Any], max_bytes: int
) -> str | None:
    """The rendered template, or None as soon as it grows over max_bytes."""
    chunks = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk.encode())
        if size > max_bytes:
            return None
        chunks.append(chunk)
    return "".join(chunks)


def cut_markdown(markdown: str, max_bytes: int) -> str:
    """The markdown, or when it is too big its first whole lines, an open code fence closed."""
    data = markdown.encode()
    if len(data) <= max_bytes:
        return markdown
    note = f"\n✂️ The summary is cut here to stay under {max_bytes:,} bytes.\n"
    longest_fence = max((len(f) for f in re.findall(r"^`{3,}", markdown, re.MULTILINE)), default=0)
    budget = max(0, max_bytes - len(note.encode()) - longest_fence - 1)
    kept = data[:budget].decode(errors="ignore")
    kept = kept[: kept.rfind("\n") + 1]
    fence = _open_fence(kept)
    return kept + (f"{fence}\n" if fence else "") + note


def _open_fence(markdown: str) -> str:
    """The code fence still open at the end of the markdown, or ''."""
    fence = ""
    for line in markdown.split("\n"):
        run = re.match(r"`{3,}", line)
        if run is None:
            continue
        if not fence:
            fence = run.group()
        elif len(run.group()) >= len(fence) and not line[len(run.group()) :].strip():
            fence = ""
    return fence


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


def artifact_markdown(url: str | None, name: str | None, folder: PurePath | None) -> str:
    """Where the full reports are, as markdown: the artifact, else the folder as it was given."""
    if url is not None:
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        # Percent-encode what could end the link target: spaces, parentheses, angle brackets.
        target = quote(url, safe="/:?#[]@!$&'*+,;=%~")
        return f"[{markdown_text(name or 'the workflow artifact')}]({target})"
    if name:
        return f"the workflow artifact **{markdown_text(name)}**"
    if folder is None:
        return "the output folder"
    return f"the {code_span(str(folder).rstrip('/') + '/')} folder"


# Escaping filters.

_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]#~|])")
# Where a backslash keeps text from starting a list: before `-`/`+`, after the digits of `1.`/`1)`.
_LIST_START = re.compile(r"^(\d+(?=[.)])|(?=[-+]))")
_BACKTICKS = re.compile(r"`+")
# Where GFM makes a link of plain text: `scheme://` and `www.` (an e-mail address still becomes
# a mailto: link, which no escape prevents).
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)")
# In a pull request comment `@name` notifies that user and `@org/team` a team: a zero-width space
# after the `@` keeps the text and notifies no one.
_MENTION = "@\u200b"


def html_text(value: object) -> str:
    """One line of text for inside HTML (a <summary>): no markdown is parsed there."""
    text = _LINE_BREAKS.sub(" ", str(value)).strip().replace("@", _MENTION)
    return html.escape(text, quote=True)


def markdown_text(value: object) -> str:
    """One line of plain text for markdown: a table cell, a heading, a list item; no web link."""
    text = _LINE_BREAKS.sub(" ", str(value)).strip().replace("@", _MENTION)
    # Backslashes first: escaping after html.escape would break its `&#x27;`.
    text = _LIST_START.sub(r"\1\\", _MARKDOWN_SPECIALS.sub(r"\\\1", text), count=1)
    return html.escape(_AUTOLINK.sub(r"\\\g<0>", text), quote=True)


def code_span(text: str) -> str:
    """One line of text as inline code: its backticks cannot close it."""
    text = _LINE_BREAKS.sub(" ", text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def fenced(text: str) -> str:
    """A code block no line of the text can close: its fence is longer than any backtick run."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


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
