"""The markdown summary of a check (templates/check.md.j2): one row per problem with each stage's
verdict, then each problem's findings. Escaped as the evaluation's summary is, by the templates'
environment, and cut to the same size limit."""

from __future__ import annotations

from pathlib import PurePath

from scbench_ci.outputs.check_console import checked
from scbench_ci.outputs.exit_status import run_headline
from scbench_ci.outputs.markdown_templates import artifact_markdown, load_template
from scbench_ci.outputs.summary import MAX_BYTES, MIN_BYTES
from scbench_ci.results.fail_on import DEFAULT_FAIL_ON
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import RunResult
from scbench_ci.trust.markdown import Markdown, cut, render

TEMPLATE = "check.md.j2"
PASSED, FAILED, WARNED, NOT_RUN = "✅", "❌", "⚠️", "\N{EN DASH}"


def render_check_summary(
    run: RunResult,
    *,
    artifact_url: str | None = None,
    artifact_name: str | None = None,
    reports_folder: PurePath | None = None,
    max_bytes: int = MAX_BYTES,
    fail_on: str = DEFAULT_FAIL_ON,
) -> Markdown:
    """At most `max_bytes` UTF-8 bytes (the end cut off if need be); a ValueError for an
    artifact_url that is not http(s), or a max_bytes under MIN_BYTES. `reports_folder` and
    `fail_on` (which the headline follows) as render_summary's."""
    if max_bytes < MIN_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_BYTES}")
    problems = checked(run)
    findings = [finding for _, report in problems for finding in report.findings]
    context = {
        "run": run,
        "headline": run_headline(run, fail_on),
        "problems": problems,
        "stages": [stage.value.capitalize() for stage in Stage],
        "rows": [
            (problem, [cell(report, stage) for stage in Stage]) for problem, report in problems
        ],
        "errors": sum(finding.severity is Severity.ERROR for finding in findings),
        "warnings": sum(finding.severity is Severity.WARNING for finding in findings),
        "artifact": artifact_markdown(artifact_url, artifact_name, reports_folder),
        "mark": mark,
        "place": place,
    }
    return cut(render(load_template(TEMPLATE), context), max_bytes)


def cell(report: CheckReport, stage: Stage) -> str:
    """`✅`, `❌ 2` (with `⚠️ 1` when there are warnings too), `⚠️ 1`, or an en dash: not run."""
    counts = report.counts(stage)
    if counts is None:
        return NOT_RUN
    errors, warnings = counts
    parts = [f"{FAILED} {errors}" if errors else "", f"{WARNED} {warnings}" if warnings else ""]
    return " ".join(part for part in parts if part) or PASSED


def mark(finding: Finding) -> str:
    return FAILED if finding.severity is Severity.ERROR else WARNED


def place(finding: Finding) -> str:
    return f"{finding.file}:{finding.line}" if finding.line is not None else finding.file
