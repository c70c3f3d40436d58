"""The markdown job summary of a run's results, kept under GitHub's size limit.

It renders the typed results (`results.RunResult`), as `results.file.load_results` also reads
them back from a results.json, so a results.json file gives the same summary. It reads in the
order a person asks: the verdict and why (for several checkpoints, the failing ones with their
main cause) in the first screen; then the overview (a matrix of problems x checkpoints that
fits the page, or the checkpoints' table beside their code quality's trajectory,
templates/quality.md.j2) and the warnings once each; then what failed, a
section for each checkpoint `details` selects, its failing tests grouped by cause
(summary_sections.py); then what changed since a baseline (templates/changes.md.j2); then the
history of the last runs (templates/history.md.j2). Its size follows what went wrong, not how
much ran: summary_levels.LEVELS, from most to least.

The parts: summary_context.py (what the template reads, in groups along its sections),
markdown_templates.py (the templates' escaping environment), summary_view.py (the
headline's numbers, the matrix, the warnings, the history), summary_quality.py (the code quality
of each checkpoint and its trajectory), summary_sections.py (the causes),
failure_kinds.py (what a failure kind means), summary_format.py (the small pieces of text).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol

from scbench_ci.outputs.markdown_templates import artifact_markdown, load_template
from scbench_ci.outputs.summary_context import (
    Page,
    changes,
    chosen_details,
    code_quality,
    flaky,
    footer,
    overview,
)
from scbench_ci.outputs.summary_levels import LEVELS, Level
from scbench_ci.outputs.summary_sections import sections
from scbench_ci.outputs.summary_view import history_view
from scbench_ci.results.details import DEFAULT_DETAILS
from scbench_ci.results.fail_on import DEFAULT_FAIL_ON
from scbench_ci.results.model import RunResult
from scbench_ci.trust.markdown import Markdown, cut, render

SUMMARY_FILE = "summary.md"
TEMPLATE = "summary.md.j2"
MAX_BYTES = 1_000_000
"""GitHub refuses a step summary over 1 MiB; this leaves room for what others append."""
MIN_BYTES = 1024


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
    (results.details.DETAILS); `reports_folder`: where the reports are when no artifact is named
    (None: "the output folder").

    It shows as much as fits: each of LEVELS in turn, and when even the last one is too big,
    that one cut at a line. A ValueError for an artifact_url that is not http(s), or a max_bytes
    under MIN_BYTES.
    """
    if max_bytes < MIN_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_BYTES}")
    template = load_template(TEMPLATE)
    chosen = chosen_details(run, details)
    context = {
        "run": run,
        "overview": overview(run, fail_on),
        "quality": code_quality(run),
        "details": chosen,
        "changes": changes(run),
        "flaky": flaky(run),
        "history": history_view(run),
        "footer": footer(run),
        "page": Page(artifact_markdown(artifact_url, artifact_name, reports_folder), max_bytes),
    }
    for level in LEVELS[:-1]:
        markdown = render(template, {**context, **_read(run, level, chosen.shown)}, max_bytes)
        if markdown is not None:
            return markdown
    last = {**context, **_read(run, LEVELS[-1], chosen.shown)}
    return cut(render(template, last), max_bytes)


def _read(run: RunResult, level: Level, shown: set[tuple[str, str]]) -> dict[str, object]:
    """What the template reads of the checkpoints' tests at a level: the sections read them as
    they are rendered, one checkpoint at a time."""
    return {"level": level, "sections": sections(run, shown)}


class SummaryChoices(Protocol):
    """What a command's options choose of the summary (its `--fail-on` and `--details`)."""

    @property
    def fail_on(self) -> str: ...

    @property
    def details(self) -> str: ...


@dataclass(frozen=True)
class SummaryRenderer:
    """render_summary with a command's choices, called as `render(run, artifact_name=...)`
    by whatever writes or publishes the summary."""

    fail_on: str = DEFAULT_FAIL_ON
    details: str = DEFAULT_DETAILS

    def __call__(
        self,
        run: RunResult,
        *,
        artifact_url: str | None = None,
        artifact_name: str | None = None,
        reports_folder: PurePath | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> Markdown:
        return render_summary(
            run,
            artifact_url=artifact_url,
            artifact_name=artifact_name,
            reports_folder=reports_folder,
            max_bytes=max_bytes,
            fail_on=self.fail_on,
            details=self.details,
        )


def summary_renderer(choices: SummaryChoices) -> SummaryRenderer:
    return SummaryRenderer(choices.fail_on, choices.details)
