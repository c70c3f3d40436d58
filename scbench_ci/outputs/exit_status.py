"""The exit code of a run: its verdict, or only its regressions, as `--fail-on` says; and the
headline that says it, the one the console report and the summary both show."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.foundation.errors import ExitCode
from scbench_ci.results import policy
from scbench_ci.results.fail_on import IF_MEASURED, fail_on_mode, quality_limits
from scbench_ci.results.model import RunResult
from scbench_ci.results.policy import counted
from scbench_ci.results.quality import QualityOutcome

_NAMED = 3
"""How many files left out a line of the verdict names."""


def over_limits(run: RunResult, fail_on: str) -> list[str]:
    """What fails the quality limits, checkpoint by checkpoint, in words:
    `problem/checkpoint erosion 0.620 > 0.5` for each measure above its limit,
    `problem/checkpoint erosion rose 0.080 > 0.05 since the baseline` for each rise above its
    limit; and unless `if-measured`, each checkpoint the limits cannot judge: its measure missing
    (`problem/checkpoint not measured: <why>`), source files it left out (named), a rise whose
    baseline checkpoint was not measured. A checkpoint the baseline does not hold has nothing
    to rise from."""
    limits = quality_limits(fail_on)
    if not limits:
        return []
    lenient = IF_MEASURED in fail_on.split()
    before = _baseline_measures(run)
    failing = []
    for problem, checkpoint in run.checkpoints():
        where = f"{problem.name}/{checkpoint.name}"
        quality = checkpoint.quality
        gap = _unjudged(quality)
        if gap is not None and not lenient:
            failing.append(f"{where} {gap}")
            continue
        if quality is None or quality.measures is None:
            continue
        for limit in limits:
            value = getattr(quality.measures, limit.measure)
            if not limit.rise:
                if value > limit.most:
                    failing.append(f"{where} {limit.measure} {value:.3f} > {limit.most:g}")
                continue
            key = (problem.name, checkpoint.name, limit.measure)
            if key not in before:
                continue
            earlier = before[key]
            if earlier is None:
                if not lenient:
                    failing.append(
                        f"{where} {limit.measure}: its baseline checkpoint was not measured, so "
                        "no rise can be judged"
                    )
            elif value - earlier > limit.most:
                failing.append(
                    f"{where} {limit.measure} rose {value - earlier:.3f} > {limit.most:g} since "
                    "the baseline"
                )
    return failing


def _unjudged(quality: QualityOutcome | None) -> str | None:
    """Why the limits cannot judge the checkpoint's figures, in words; None when they can."""
    if quality is None:
        return "not measured (the quality measure was off, or the result predates it)"
    if quality.measures is None:
        # Its first line: a reason read back from a file may hold more.
        lines = [line.strip() for line in (quality.reason or "").splitlines() if line.strip()]
        return f"not measured: {lines[0] if lines else 'no reason given'}"
    if quality.unmeasured is None:
        return "measured, but which source files were measured is not recorded"
    count = quality.unmeasured.count
    if count == 0:
        return None
    return (
        f"left {counted(count, 'source file')} of the submission unmeasured: "
        f"{quality.unmeasured.named(_NAMED)}"
    )


def _baseline_measures(run: RunResult) -> dict[tuple[str, str, str], float | None]:
    """The baseline's figures by problem, checkpoint and measure, for each checkpoint it holds:
    None where it was not measured."""
    if run.comparison is None:
        return {}
    figures: dict[tuple[str, str, str], float | None] = {}
    for delta in run.comparison.checkpoints:
        if delta.passed_before is None:
            continue
        for measure, value in (
            ("verbosity", delta.verbosity_before),
            ("erosion", delta.erosion_before),
        ):
            figures[(delta.problem, delta.checkpoint, measure)] = value
    return figures


def exit_code(run: RunResult, fail_on: str) -> ExitCode:
    """An infrastructure failure is exit 3 whatever `fail_on` says: it is not a verdict. A run
    without problems (a check that `--changed-since` left nothing to check) passes. A quality
    limit fails the run whatever the mode."""
    if not run.problems:
        return ExitCode.PASSED
    if run.infrastructure_failure:
        return ExitCode.INFRASTRUCTURE
    if over_limits(run, fail_on):
        return ExitCode.FAILED
    mode = fail_on_mode(fail_on)
    if mode == "never":
        return ExitCode.PASSED
    if mode == "regressions":
        regressed = run.comparison is not None and bool(run.comparison.regressions)
        return ExitCode.FAILED if regressed else ExitCode.PASSED
    return ExitCode.PASSED if run.passed else ExitCode.FAILED


@dataclass(frozen=True)
class Headline:
    """`✅ no regressions (5 of 7 checkpoints pass the policy)`: its mark (✅ when the exit code
    is 0, ❌ when not, none when the run neither passed nor failed), its verdict and a note."""

    mark: str
    verdict: str
    note: str
    note_is_policy: bool
    """The note only describes the policy, which the summary says on a line of its own."""

    @property
    def text(self) -> str:
        """For the console's `Verdict:` line."""
        return f"{self.verdict} ({self.note})"

    @property
    def heading(self) -> str:
        """For the summary's heading."""
        shown = self.verdict if self.note_is_policy else self.text
        return f"{self.mark} {shown}".strip()


def run_headline(run: RunResult, fail_on: str) -> Headline:
    """What decides the exit code, in words: the policy's verdict (and an infrastructure
    failure, whatever `fail_on`), the regressions, or with `never` the policy's outcome, not
    claimed as a failure of the run. A check's outcome is its problems found sound."""
    passed = exit_code(run, fail_on) is ExitCode.PASSED
    mark = "✅" if passed else "❌"
    over = [] if run.infrastructure_failure else over_limits(run, fail_on)
    fail_on = fail_on_mode(fail_on)
    checked = any(problem.check is not None for problem in run.problems)
    if checked:
        outcome = (
            f"{sum(problem.passed for problem in run.problems)} of "
            f"{counted(len(run.problems), 'problem')} sound"
        )
    else:
        checkpoints = [checkpoint for _, checkpoint in run.checkpoints()]
        outcome = (
            f"{sum(checkpoint.passed for checkpoint in checkpoints)} of {len(checkpoints)} "
            f"checkpoint{'s pass' if len(checkpoints) != 1 else ' passes'} the policy"
        )
    if over:
        shown = "; ".join(over[:3]) + (f"; {len(over) - 3} more" if len(over) > 3 else "")
        return Headline(mark, "FAILED", f"code quality fails the --fail-on limits: {shown}", False)
    if fail_on == "regressions" and not run.infrastructure_failure:
        if run.comparison is None:
            return Headline(
                mark, "no regressions", f"no baseline to compare with; {outcome}", False
            )
        regressions = len(run.comparison.regressions)
        verdict = counted(regressions, "regression") if regressions else "no regressions"
        return Headline(mark, verdict, outcome, False)
    if fail_on == "never" and not run.infrastructure_failure:
        note = "not failing the run: --fail-on never"
        return Headline("✅" if run.passed else "", outcome, note, False)
    verdict = "PASSED" if passed else "FAILED"
    if checked:
        return Headline(mark, verdict, outcome, False)
    # The count is the reason; the policy's rule follows it, so it is not read as the reason.
    rule = f"{outcome} {run.policy}, which asks that {policy.describe(run.policy)}"
    return Headline(mark, verdict, rule, True)
