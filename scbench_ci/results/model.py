"""The result types: a run's problems, their checkpoints and tests, and what stopped a run.

Plain data, and in words why a checkpoint failed: judging a run (`judge.py`), the counts and
verdict (`verdict.py`) and reading or writing results.json (`file.py`) are the stage's other
modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from scbench_ci.executors.base import ImageRecord
from scbench_ci.foundation.scbench_runner import DEFAULT_SCBENCH
from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.findings import CheckReport
from scbench_ci.results.history_model import History
from scbench_ci.results.policy import GroupCounts
from scbench_ci.results.quality import QualityOutcome


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
    UNREPORTED = "unreported"
    """Tests were collected that the run never reported (SCBench 1.0's rules make that an
    infrastructure failure): the session ended early, or deselected them."""


INFRASTRUCTURE_KINDS = frozenset({FailureKind.INFRASTRUCTURE, FailureKind.INTERNAL})


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    message: str
    log_tail: str | None = None


@dataclass(frozen=True)
class ScbenchRecord:
    """What SCBench 1.0 records of a checkpoint besides its tests (`CorrectnessResults`), as its
    rules compute it from this run (`--scbench 1.0`)."""

    infrastructure_failure: bool
    """SCBench's `infrastructure_failure`: a pytest exit code other than 0 and 1, more tests
    collected than reported, a `--collect-only` pass that failed, or a collected test never
    reported. Beside the checkpoint's own failure kind, which says what happened."""
    pytest_collected: int
    """SCBench's `pytest_collected`: the inventory's tests, or pytest's `collected N items`."""
    collection_hash: str | None
    """SCBench's `test_collection_hash` (None without an inventory)."""
    inventory: bool
    """The inventory was applied: groups from it, tests collected and never reported failed,
    every test counted in its group's total. Without one (a `-k` filter), skipped tests are not
    in the totals."""


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
    traceback: str | None
    file: str
    line: int | None
    reruns: int = 0
    """Failed attempts rerun in the same session (`--reruns`) before the last one."""
    repeat: RepeatCount | None = None
    """With `--repeat`: in how many of the runs that ran the test it passed."""


@dataclass(frozen=True)
class NetworkFailures:
    """A checkpoint's failing tests that could not reach the network (`network_causes.py`):
    counted failed as SCBench counts them, and apart, since they say nothing of the answers."""

    tests: int
    hosts: tuple[str, ...]
    """The outside hosts they named, in the order met (at most network_causes.MAX_HOSTS)."""


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
    quality: QualityOutcome | None = None
    """The submission's code-quality measures, or why they are missing; None when not measured
    (turned off, or no test ran)."""
    network: NetworkFailures | None = None
    """Its failing tests that could not reach the network, derived from its tests; None when
    none."""
    scbench: ScbenchRecord | None = None
    """What SCBench 1.0 records beside its tests, when its rules decided and pytest ran."""

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
    """The most evaluations that ran side by side (at most `--jobs`): named `jobs` as
    results.json's field and the API's attribute, both published."""
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
    scbench: str = DEFAULT_SCBENCH
    """Whose rules decided (`--scbench`): the name of an SCBench runner."""
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


def why_failed(checkpoint: CheckpointResult, policy_name: str) -> str | None:
    """In words, why a checkpoint failed under the policy: its failure kind and message, or
    what its counts lack (`policy.shortfall`); None when it passed."""
    if checkpoint.passed:
        return None
    if checkpoint.failure is not None:
        return f"{checkpoint.failure.kind.value}: {checkpoint.failure.message}"
    return policy.shortfall(policy_name, checkpoint.groups)


def add_counts(counts: Iterable[GroupCounts]) -> GroupCounts:
    return sum(counts, GroupCounts())
