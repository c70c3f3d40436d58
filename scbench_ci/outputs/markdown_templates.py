"""The templates of the markdown outputs (scbench_ci/outputs/templates: the job summary and the
check's summary) and the one environment that loads them.

Every `{{ }}` of a template is escaped unless it is `Markdown` (trust/markdown.py): the
environment's `finalize` does it, so no template can forget it; the filters and helpers that
lay out markdown return Markdown, from our own words and escaped values. Macros would give
plain strings (escaped again), so the templates call Python helpers instead.
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePath

import jinja2

from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.outputs import summary_format as fmt
from scbench_ci.outputs.console import (
    baseline_date,
    change_counts,
    flaky_outcome,
    headline,
    passed_of,
)
from scbench_ci.outputs.failing_view import (
    FOLDED_OVER,
    cause_title,
    tests_in,
    unneeded,
    unreached,
)
from scbench_ci.outputs.failure_kinds import FAILURE_KINDS, explained, verdict
from scbench_ci.outputs.summary_quality import (
    QUALITY_COLOR_NAMES,
    QUALITY_COLORS,
    baseline_cell,
    quality_line,
    quality_paragraph,
    trajectory_cell,
)
from scbench_ci.outputs.summary_sections import cause_block, told_cause
from scbench_ci.outputs.summary_view import LISTED_PLACES, cell_label, history_date
from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.model import why_failed
from scbench_ci.results.trends import NEWLY_FLAKY_RUNS
from scbench_ci.trust.markdown import (
    Markdown,
    code_span,
    fenced,
    formatted,
    html_text,
    link,
    literal,
    template_join,
    template_value,
)

MAX_WARNINGS = 10
MAX_NOTE_CHARS = 500
"""A note on how the runs' selections differ can name many checkpoints."""
DETAILS_TITLES = {
    "failed": "Checkpoints that failed",
    "changed": "Checkpoints that failed or changed",
    "all": "Every checkpoint",
}


def load_template(name: str) -> jinja2.Template:
    """A template of scbench_ci/outputs/templates, with the escaping filters."""
    return _environment().get_template(name)


@cache
def _environment() -> jinja2.Environment:
    # No HTML autoescape: the output is markdown. `finalize` escapes every `{{ }}` that is not
    # Markdown instead, and the filters that lay out markdown return Markdown.
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
        rate=fmt.rate,
        duration=fmt.duration,
        headline=headline,
        verdict=verdict,
        verdict_line=fmt.verdict_line,
        cell=fmt.cell,
        describe_policy=policy.describe,
        why_failed=why_failed,
        flaky_outcome=flaky_outcome,
        passed_of=passed_of,
        passed_mark=fmt.passed_mark,
        group_deltas=fmt.group_deltas,
        delta=fmt.delta,
        test_id=fmt.test_id,
        cell_label=cell_label,
        history_date=history_date,
        cause_block=cause_block,
        quality_line=quality_line,
        tests_in=tests_in,
        cause_title=cause_title,
        quality_paragraph=quality_paragraph,
        rules=rules_line,
    )
    environment.globals.update(
        change_counts=change_counts,
        baseline_date=baseline_date,
        counts_cells=fmt.counts_cells,
        explained=explained,
        told_cause=told_cause,
        unneeded=unneeded,
        unreached=unreached,
        folded_over=FOLDED_OVER,
        test_cell=fmt.test_cell,
        trajectory_cell=trajectory_cell,
        baseline_cell=baseline_cell,
        quality_colors=QUALITY_COLORS,
        quality_color_names=QUALITY_COLOR_NAMES,
        more=fmt.more,
        groups=tuple(group.value for group in Group),
        kinds=FAILURE_KINDS,
        details_title=DETAILS_TITLES,
        listed_places=LISTED_PLACES,
        max_note_chars=MAX_NOTE_CHARS,
        max_warnings=MAX_WARNINGS,
        newly_flaky_runs=NEWLY_FLAKY_RUNS,
    )
    return environment


def artifact_markdown(url: str | None, name: str | None, folder: PurePath | None) -> Markdown:
    """Where the full reports are, as markdown: the artifact, else the folder as it was given."""
    if url is not None:
        return link(name or literal("the workflow artifact"), url)
    if name:
        return formatted("the workflow artifact **{}**", name)
    if folder is None:
        return literal("the output folder")
    return formatted("the {} folder", code_span(str(folder).rstrip("/") + "/"))
