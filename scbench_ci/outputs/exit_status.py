"""The exit code of a run: its verdict, or only its regressions, as `--fail-on` says; and the
headline that says it, the one the console report and the summary both show."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.errors import ExitCode
from scbench_ci.results import policy
from scbench_ci.results.model import RunResult
from scbench_ci.results.policy import counted

FAIL_ON = ("policy", "regressions", "never")
DEFAULT_FAIL_ON = "policy"
FAIL_ON_HELP = (
    "policy: fail when a checkpoint fails its policy; regressions: only when a test that passed "
    "in the baseline fails now (for suites that never pass completely); never: only on an "
    "infrastructure failure"
)


def exit_code(run: RunResult, fail_on: str) -> ExitCode:
    """An infrastructure failure is exit 3 whatever `fail_on` says: it is not a verdict. A run
    without problems (a check that `--changed-since` left nothing to check) passes."""
    if not run.problems:
        return ExitCode.PASSED
    if run.infrastructure_failure:
        return ExitCode.INFRASTRUCTURE
    if fail_on == "never":
        return ExitCode.PASSED
    if fail_on == "regressions":
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
