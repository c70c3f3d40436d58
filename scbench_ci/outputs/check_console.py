"""The plain-text report `check` prints: one line per finding, as compilers write them
(`file:line: severity: [stage] message`), then each problem's verdict, then the run's.

Files are shown relative to the current folder where they are inside it, so a terminal or an
editor can open them. Like the evaluation's report, it is made inert.
"""

from __future__ import annotations

import os
from pathlib import Path

from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.outputs.console import UNMEASURED_NAMED
from scbench_ci.outputs.exit_status import run_headline
from scbench_ci.results import policy
from scbench_ci.results.findings import CheckReport, Finding, Stage
from scbench_ci.results.model import ProblemResult, RunResult
from scbench_ci.results.policy import counted
from scbench_ci.trust.terminal import inert


def render_check_report(run: RunResult, results_path: Path | None, *, fail_on: str) -> str:
    """`results_path`: None when no problem was checked (so none was written). `fail_on`: the
    run's, which its `Verdict:` line follows, as the exit code does."""
    lines = [""]
    for problem, report in checked(run):
        lines += [finding_line(problem, finding) for finding in report.findings]
        lines += [
            f"{problem.name}: infrastructure failure: {text}" for text in report.infrastructure
        ]
    if not run.problems:
        lines.append("No problem to check: none has files changed since the given ref.")
    else:
        lines.append("")
        width = max(len(problem.name) for problem in run.problems)
        lines += [f"{problem.name:<{width}}  {verdict(problem)}" for problem in run.problems]
        lines += quality_lines(run)
        lines.append("")
        lines.append(
            f"Oracle policy {run.policy}: {policy.describe(run.policy)}; "
            f"{counted(run.repeat, 'oracle run')} of each checkpoint; {run.duration_s:.1f} s"
        )
        lines.append(rules_line(run.scbench))
        lines.append(f"Verdict: {run_headline(run, fail_on).text}")
    if results_path is not None:
        lines.append(f"Results: {results_path}")
    return inert("\n".join(lines)) + "\n"


def quality_lines(run: RunResult) -> list[str]:
    """Each reference solution's code quality, where it was measured (or why not)."""
    measured = [(p, c) for p, c in run.checkpoints() if c.quality is not None]
    if not measured:
        return []
    width = max(len(f"{p.name}/{c.name}") for p, c in measured)
    lines = ["", "Reference solutions' code quality (scb-check):"]
    for problem, checkpoint in measured:
        assert checkpoint.quality is not None
        name = f"{problem.name}/{checkpoint.name}"
        found = checkpoint.quality.measures
        if found is None:
            lines.append(f"  {name:<{width}}  not measured: {checkpoint.quality.reason}")
        else:
            left_out = checkpoint.quality.unmeasured
            lines.append(
                f"  {name:<{width}}  verbosity {found.verbosity:.3f}  erosion "
                f"{found.erosion:.3f}  {counted(found.total_loc, 'line')}"
                + (
                    f"  ({counted(left_out.count, 'source file')} left out: "
                    f"{left_out.named(UNMEASURED_NAMED)})"
                    if left_out is not None and left_out.count
                    else ""
                )
            )
    return lines


def checked(run: RunResult) -> list[tuple[ProblemResult, CheckReport]]:
    return [(problem, problem.check) for problem in run.problems if problem.check is not None]


def finding_line(problem: ProblemResult, finding: Finding) -> str:
    where = shown_path(Path(problem.path).parent / finding.file)
    if finding.line is not None:
        where += f":{finding.line}"
    message = " ".join(finding.message.split())
    return f"{where}: {finding.severity}: [{finding.stage}] {message}"


def shown_path(path: Path) -> str:
    """Relative to the current folder when inside it, else as it is."""
    try:
        return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)
    except OSError:  # no current folder
        return str(path)


def verdict(problem: ProblemResult) -> str:
    """`passed`, or `FAILED`, then each stage's errors and warnings where it has some."""
    report = problem.check
    if report is None:
        return "not checked"
    parts = []
    for stage in Stage:
        counts = report.counts(stage)
        if counts is None:
            continue
        errors, warnings = counts
        found = [
            counted(errors, "error") if errors else "",
            counted(warnings, "warning") if warnings else "",
        ]
        if errors or warnings:
            parts.append(f"{stage} {', '.join(part for part in found if part)}")
    skipped = [str(stage) for stage in Stage if report.counts(stage) is None]
    if skipped:
        parts.append(f"not run: {', '.join(skipped)}")
    if report.infrastructure:
        parts.append("stopped by the infrastructure")
    word = "passed" if problem.passed else "FAILED"
    return f"{word}{': ' if parts else ''}{'; '.join(parts)}"
