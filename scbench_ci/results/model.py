"""Per-checkpoint results: failure kind, test groups, counts, verdict; results.json."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from scbench_ci.executors.base import PYTEST_LOG, SETUP_LOG, ExecutionResult, ImageRecord
from scbench_ci.problem.model import Checkpoint, Group, Problem
from scbench_ci.reports import FAILING, PASSING, Reports, Status
from scbench_ci.results import policy
from scbench_ci.results.categorize import group_of, owning_checkpoint
from scbench_ci.results.comparison import Comparison
from scbench_ci.results.findings import CheckReport
from scbench_ci.results.history import History
from scbench_ci.results.policy import GroupCounts
from scbench_ci.trust.seal import Broken, Seal

LOG_TAIL_LINES = 40
LOG_TAIL_CHARS = 6000


class FailureKind(StrEnum):
    SETUP = "setup"
    TIMEOUT = "timeout"
    INFRASTRUCTURE = "infrastructure"
    """The tests could not run for a cause outside the submission."""
    COLLECTION = "collection"
    INTERRUPTED = "interrupted"
    NO_TESTS = "no_tests"
    USAGE = "usage"
    INTERNAL = "internal"
    TAMPERED = "tampered"
    """The reports are not the ones pytest's runner wrote: they were changed or forged."""
    ABORTED = "aborted"
    """The test runner was stopped (killed) before it sealed its reports."""
    RESOURCES = "resources"
    """A memory, process or disk limit ended the run before pytest could report."""
    REPORTS = "reports"
    """pytest's runner sealed a report that cannot be used (too large, malformed)."""
    MISSING = "missing"
    """The submission folder for the checkpoint does not exist."""


INFRASTRUCTURE_KINDS = frozenset({FailureKind.INFRASTRUCTURE, FailureKind.INTERNAL})


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    message: str
    log_tail: str | None = None


@dataclass(frozen=True)
class RepeatCount:
    """How often a test passed when its checkpoint was run several times (`--repeat`)."""

    passed: int
    runs: int


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest test class

    id: str
    checkpoint: str
    group: Group
    status: Status
    duration_s: float
    markers: tuple[str, ...]
    message: str | None
    details: str | None
    file: str
    line: int | None
    reruns: int = 0
    """Failed attempts rerun in the same session (`--reruns`) before the last one."""
    repeat: RepeatCount | None = None
    """With `--repeat`: in how many of the runs that ran the test it passed."""


@dataclass(frozen=True)
class CheckpointResult:
    name: str
    include_prior_tests: bool
    passed: bool
    failure: Failure | None
    pytest_exit_code: int | None
    duration_s: float
    groups: dict[Group, GroupCounts]
    tests: Sequence[TestResult]
    """In a run's results, read back from the checkpoint's own result file on each iteration,
    so a run of any size holds one checkpoint's tests in memory at a time."""
    warnings: tuple[str, ...]
    """What may explain an outcome (parts of the submission left out, limits reached)."""
    notices: tuple[str, ...] = ()
    """What the evaluator did as it always does, which no outcome depends on: in results.json
    and the log, never in the summary."""
    submission: str = ""
    """The submission folder evaluated."""
    artifacts: str = ""
    """The checkpoint's folder in the output folder (relative), holding its reports and logs."""
    started_at: str = ""
    fingerprint: str | None = None
    """What `--skip-existing` compares: a hash of the staged files, the command and settings."""
    reused: bool = False
    """Taken from an earlier run's output by `--skip-existing` instead of run again."""
    phases: Mapping[str, float] = field(default_factory=dict)
    """Seconds spent in each phase (staging, the executor's phases, reading reports)."""
    image: ImageRecord | None = None
    """The container image the tests ran in, and the versions of the tools in it."""

    @property
    def counts(self) -> GroupCounts:
        return add_counts(self.groups.values())

    @property
    def infrastructure_failure(self) -> bool:
        return self.failure is not None and self.failure.kind in INFRASTRUCTURE_KINDS


@dataclass(frozen=True)
class ProblemResult:
    name: str
    """The problem folder's name."""
    path: str
    version: int
    checkpoints: tuple[CheckpointResult, ...]
    checkpoint_order: tuple[str, ...] = ()
    """Every checkpoint of the problem in its order, evaluated or not: how merged shards
    are put back in order."""
    check: CheckReport | None = None
    """`scbench-ci check`'s findings; the checkpoints are then its oracle runs."""

    @property
    def passed(self) -> bool:
        """Every checkpoint passed; for a check, nothing is wrong with the problem."""
        if self.check is not None:
            return self.check.passed
        return bool(self.checkpoints) and all(c.passed for c in self.checkpoints)

    @property
    def infrastructure_failure(self) -> bool:
        stopped = self.check is not None and bool(self.check.infrastructure)
        return stopped or any(c.infrastructure_failure for c in self.checkpoints)


@dataclass(frozen=True)
class RunResult:
    """Everything one `scbench-ci evaluate` run found: the content of results.json."""

    policy: str
    executor: str
    jobs: int
    started_at: str
    duration_s: float
    problems: tuple[ProblemResult, ...]
    tool_versions: dict[str, str]
    reruns: int = 0
    """Times a failing test was rerun in its session (`--reruns`)."""
    repeat: int = 1
    """Times each checkpoint was run whole (`--repeat`)."""
    flaky_passes: bool = False
    """Whether a flaky test counts as passed for the policy (else as failed)."""
    comparison: Comparison | None = None
    """The run against a baseline (`--baseline`), when it was given one."""
    history: History | None = None
    """The runs before it that its baseline carried, and this one last (`--history`)."""

    @property
    def passed(self) -> bool:
        return bool(self.problems) and all(p.passed for p in self.problems)

    @property
    def infrastructure_failure(self) -> bool:
        return any(p.infrastructure_failure for p in self.problems)

    def checkpoints(self) -> Iterator[tuple[ProblemResult, CheckpointResult]]:
        for problem in self.problems:
            for checkpoint in problem.checkpoints:
                yield problem, checkpoint

    def where(self, problem: str, checkpoint: str) -> str:
        """A checkpoint as the reports name it: `problem / checkpoint`, or the checkpoint alone
        in a run of one problem."""
        return f"{problem} / {checkpoint}" if len(self.problems) > 1 else checkpoint

    def group_totals(self) -> dict[Group, GroupCounts]:
        """Each group's counts added up over the evaluated checkpoints."""
        return {
            group: add_counts(c.groups[group] for _, c in self.checkpoints()) for group in Group
        }


def judge_checkpoint(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    tested: tuple[Checkpoint, ...],
    include_prior_tests: bool,
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    log_dir: Path,
    policy_name: str,
    session_timeout_s: float,
    warnings: tuple[str, ...],
    flaky_passes: bool = False,
) -> CheckpointResult:
    """Outcomes count only from sealed reports: `reports` is ignored unless `seal` is a Seal; as
    a string, it says why there are no outcomes."""
    trusted = reports if isinstance(seal, Seal) and isinstance(reports, Reports) else None
    tests = tuple(
        TestResult(
            id=outcome.node_id,
            checkpoint=(owner := owning_checkpoint(outcome.file, tested, checkpoint)).name,
            group=group_of(outcome.markers, owner, checkpoint, problem.markers),
            status=outcome.status,
            duration_s=outcome.duration_s,
            markers=outcome.markers,
            message=outcome.message,
            details=outcome.details,
            file=outcome.file,
            line=outcome.line,
            reruns=outcome.reruns,
        )
        for outcome in (trusted.tests if trusted else ())
    )
    groups = count_groups(tests, flaky_passes)
    failure = detect_failure(execution, seal, reports, log_dir, session_timeout_s)
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=verdict(policy_name, failure, groups),
        failure=failure,
        pytest_exit_code=execution.exit_code,
        duration_s=round(execution.duration_s, 3),
        groups=groups,
        tests=tests,
        warnings=(
            *warnings,
            *execution.limits_hit,
            *_execution_warnings(execution),
            *(trusted.problems if trusted else ()),
        ),
        image=execution.image,
    )


def verdict(policy_name: str, failure: Failure | None, groups: policy.Counts) -> bool:
    """Whether a checkpoint passes: it ran without a failure and its counts pass the policy."""
    return failure is None and policy.passes(policy_name, groups)


def why_failed(checkpoint: CheckpointResult, policy_name: str) -> str | None:
    """In words, why a checkpoint failed under the policy: its failure kind and message, or
    what its counts lack (`policy.shortfall`); None when it passed."""
    if checkpoint.passed:
        return None
    if checkpoint.failure is not None:
        return f"{checkpoint.failure.kind.value}: {checkpoint.failure.message}"
    return policy.shortfall(policy_name, checkpoint.groups)


def _execution_warnings(execution: ExecutionResult) -> tuple[str, ...]:
    warnings = []
    if execution.setup_exit_code is not None:
        # SCBench's entry script goes on too: its setup commands are lines without `set -e`.
        warnings.append(
            f"a setup command failed with exit code {execution.setup_exit_code} (see "
            f"{SETUP_LOG}); the tests ran all the same, as under SCBench"
        )
    if execution.leftover_processes and execution.timed_out_in is None:
        warnings.append(
            f"{execution.leftover_processes} process(es) were still running after their "
            "command ended and were killed"
        )
    return tuple(warnings)


def unrun_result(
    checkpoint: Checkpoint,
    include_prior_tests: bool,
    failure: Failure,
    warnings: tuple[str, ...] = (),
) -> CheckpointResult:
    """The result of a checkpoint whose tests could not be run at all."""
    return CheckpointResult(
        name=checkpoint.name,
        include_prior_tests=include_prior_tests,
        passed=False,
        failure=failure,
        pytest_exit_code=None,
        duration_s=0.0,
        groups={group: GroupCounts() for group in Group},
        tests=(),
        warnings=warnings,
    )


def detect_failure(
    execution: ExecutionResult,
    seal: Seal | Broken,
    reports: Reports | str,
    log_dir: Path,
    session_timeout_s: float,
) -> Failure | None:
    """What stopped the run from being an ordinary pass/fail of its tests, if anything did.

    Only the first two kinds below are infrastructure: once the test runner has started, the
    submission's code may have run, and whatever goes wrong from then on is a fail that says what
    happened.
    """
    pytest_log = log_dir / PYTEST_LOG
    if execution.runner_exit_code is not None:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            "installing the test runner (pytest, its plugins and the test dependencies) failed "
            f"with exit code {execution.runner_exit_code}",
            log_tail(log_dir / SETUP_LOG),
        )
    if execution.timed_out_in is not None:
        log = log_dir / (SETUP_LOG if execution.timed_out_in == "setup" else PYTEST_LOG)
        return Failure(
            FailureKind.TIMEOUT,
            f"the session timeout of {session_timeout_s:g} s stopped the {execution.timed_out_in}",
            log_tail(log),
        )
    code = execution.exit_code
    if seal is Broken.NOT_STARTED:
        return Failure(
            FailureKind.INFRASTRUCTURE,
            f"the test runner did not start (exit code {code})",
            log_tail(pytest_log),
        )
    limits = "; ".join(execution.limits_hit)
    if seal is Broken.UNSEALED:
        if limits:
            return Failure(
                FailureKind.RESOURCES,
                f"the test runner ended without reporting (exit code {code}): {limits}",
                log_tail(pytest_log),
            )
        return Failure(
            FailureKind.ABORTED,
            f"the test runner was stopped before it sealed its reports (exit code {code}): "
            "no test outcome is counted",
            log_tail(pytest_log),
        )
    if seal is Broken.MISMATCH:
        return Failure(
            FailureKind.TAMPERED,
            f"{seal.value}: something changed them after they were written, so no test outcome "
            "is counted",
            log_tail(pytest_log),
        )
    if code == 4:
        return Failure(
            FailureKind.USAGE,
            "pytest rejected its command line (usage error)",
            log_tail(pytest_log),
        )
    if isinstance(reports, str):
        if limits:
            return Failure(
                FailureKind.RESOURCES,
                f"pytest's report could not be used ({reports}): {limits}",
                log_tail(pytest_log),
            )
        return Failure(
            FailureKind.REPORTS,
            f"pytest's report could not be used: {reports}",
            log_tail(pytest_log),
        )
    if code == 2 and reports.collection_errors:
        names = ", ".join(e.node_id or "(session)" for e in reports.collection_errors)
        text = "\n\n".join(e.message for e in reports.collection_errors)
        return Failure(FailureKind.COLLECTION, f"errors collecting {names}", text)
    if code == 2:
        return Failure(
            FailureKind.INTERRUPTED, "pytest was interrupted (exit code 2)", log_tail(pytest_log)
        )
    if code == 3 and limits:
        return Failure(
            FailureKind.RESOURCES,
            f"pytest stopped with an internal error: {limits}",
            log_tail(pytest_log),
        )
    if code == 5:
        return Failure(FailureKind.NO_TESTS, "pytest collected no tests", log_tail(pytest_log))
    if code not in (0, 1):
        return Failure(
            FailureKind.INTERNAL,
            f"pytest hit an internal error (exit code {code})",
            log_tail(pytest_log),
        )
    return None


def log_tail(path: Path) -> str | None:
    if not path.is_file():
        return None
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - LOG_TAIL_CHARS * 4))
        text = stream.read().decode("utf-8", errors="replace")
    tail = "\n".join(text.splitlines()[-LOG_TAIL_LINES:])
    return tail[-LOG_TAIL_CHARS:]


def count_groups(tests: Iterable[TestResult], flaky_passes: bool) -> dict[Group, GroupCounts]:
    """Each group's counts; a flaky test counts as failed unless flaky tests pass."""
    counts = {group: GroupCounts() for group in Group}
    for test in tests:
        flaky = test.status is Status.FLAKY
        passed = test.status in PASSING or (flaky and flaky_passes)
        failed = test.status in FAILING or (flaky and not flaky_passes)
        counts[test.group] += GroupCounts(
            passed=int(passed),
            failed=int(failed),
            skipped=int(not passed and not failed),
            total=1,
            flaky=int(flaky),
        )
    return counts


def add_counts(counts: Iterable[GroupCounts]) -> GroupCounts:
    return sum(counts, GroupCounts())
