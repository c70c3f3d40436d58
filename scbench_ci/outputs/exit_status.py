"""The exit code of a run: its verdict, or only its regressions, as `--fail-on` says."""

from __future__ import annotations

from scbench_ci.errors import ExitCode
from scbench_ci.results.model import RunResult

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
