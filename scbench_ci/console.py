"""The compact plain-text report the CLI (and the action) prints at the end of a run.

Names, messages, warnings and log tails in it come from the problem and the submission: the
report is made inert, so neither a terminal nor GitHub's runner reading it takes any of that for
an escape sequence or a workflow command.
"""

from __future__ import annotations

from pathlib import Path

from scbench_ci import policy
from scbench_ci.github.workflow import inert
from scbench_ci.policy import GroupCounts
from scbench_ci.problem import Group
from scbench_ci.results import CheckpointResult, RunResult


def render_report(result: RunResult, results_path: Path) -> str:
    lines = [""]
    compact = len(result.problems) > 1
    for problem, checkpoint in result.checkpoints():
        show = _checkpoint_line if compact else _checkpoint_lines
        lines += show(problem.name, checkpoint)
    if compact:
        lines.append("")
    checkpoints = [checkpoint for _, checkpoint in result.checkpoints()]
    if len(checkpoints) > 1:
        passed = sum(checkpoint.passed for checkpoint in checkpoints)
        lines.append(
            f"{passed} of {len(checkpoints)} checkpoints passed "
            f"({len(result.problems)} problem(s), {result.duration_s:.1f} s, "
            f"{result.jobs} job(s) side by side)"
        )
    verdict = "PASSED" if result.passed else "FAILED"
    lines.append(f"Verdict: {verdict} (policy {result.policy}: {policy.describe(result.policy)})")
    if result.infrastructure_failure:
        lines.append("An infrastructure failure stopped the evaluation; see the log tail above.")
    lines.append(f"Results: {results_path}")
    return inert("\n".join(lines)) + "\n"


def _checkpoint_lines(problem: str, checkpoint: CheckpointResult) -> list[str]:
    verdict = "passed" if checkpoint.passed else "failed"
    reused = " (earlier result, unchanged)" if checkpoint.reused else ""
    lines = [f"{problem} / {checkpoint.name}: {verdict} in {checkpoint.duration_s:.1f} s{reused}"]
    lines.append(f"  {'group':<14}{'passed/total':>13}{'rate':>9}")
    for group in Group:
        lines.append(_row(group.value, checkpoint.groups[group]))
    lines.append(_row("all", checkpoint.counts))
    if checkpoint.failure is not None:
        lines.append(f"  failure ({checkpoint.failure.kind.value}): {checkpoint.failure.message}")
        if checkpoint.failure.log_tail:
            lines += ["    " + line for line in checkpoint.failure.log_tail.splitlines()[-15:]]
    for warning in checkpoint.warnings:
        lines.append(f"  warning: {warning}")
    return [*lines, ""]


def _checkpoint_line(problem: str, checkpoint: CheckpointResult) -> list[str]:
    """One line (two when it failed for a reason other than its tests)."""
    core = checkpoint.groups[Group.CORE]
    counts = checkpoint.counts
    verdict = "passed" if checkpoint.passed else "FAILED"
    reused = " (earlier result)" if checkpoint.reused else ""
    line = (
        f"{verdict:<7}{problem} / {checkpoint.name}: Core {core.passed}/{core.total}, "
        f"all {counts.passed}/{counts.total}, {checkpoint.duration_s:.1f} s{reused}"
    )
    if checkpoint.failure is None:
        return [line]
    return [line, f"       {checkpoint.failure.kind.value}: {checkpoint.failure.message}"]


def _row(label: str, counts: GroupCounts) -> str:
    rate = "-" if counts.pass_rate is None else f"{counts.pass_rate:.1%}"
    fraction = f"{counts.passed}/{counts.total}"
    return f"  {label:<14}{fraction:>13}{rate:>9}"
