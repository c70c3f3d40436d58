"""What the first screen of a run's report says of its failing tests, in one model that the
console (outputs/console.py, terminal text) and the job summary (templates/summary.md.j2,
markdown) both render, each through its own escaper, in the same words.

For each checkpoint that fails the policy: why, and its main cause (results/causes.py): the
exception, how many of its failing tests it hit, and one of them. For each checkpoint that
passes with failing tests (a test outside what the policy asks): the same, so that a green run
never hides a red test. Failing tests that could not reach the network (results/network_causes.py)
are counted apart (`unreached`). Long lists name their first LISTED_CHECKPOINTS and count the
rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from scbench_ci.job.reports import FAILING
from scbench_ci.problem.model import Group
from scbench_ci.results.causes import Cause, cause_of
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import (
    CheckpointResult,
    NetworkFailures,
    ProblemResult,
    RunResult,
    TestResult,
    why_failed,
)
from scbench_ci.results.network_causes import MAX_HOSTS
from scbench_ci.results.policy import counted

LISTED_CHECKPOINTS = 5
"""How many checkpoints each list of the first screen names, with their main cause."""
FOLDED_OVER = 2
"""The summary folds its list of passing checkpoints with failing tests when it names more."""


@dataclass(frozen=True)
class CauseGroup:
    """The failing tests of a checkpoint that failed the same way."""

    cause: Cause
    tests: list[TestResult]
    """Those that newly fail since the baseline first."""
    regressed: int


def cause_groups(checkpoint: CheckpointResult, regressed: frozenset[str]) -> list[CauseGroup]:
    """The checkpoint's failing tests by cause: the cause that hit the most first, then in the
    order of their first test (newly failing first, then group by group)."""
    order = {group.value: index for index, group in enumerate(Group)}
    failing = [test for test in checkpoint.tests if test.status in FAILING]
    failing.sort(key=lambda test: (test.id not in regressed, order[test.group]))
    found: dict[str, tuple[Cause, list[TestResult]]] = {}
    for test in failing:
        cause = cause_of(test)
        found.setdefault(cause.text, (cause, []))[1].append(test)
    groups = [
        CauseGroup(cause, tests, sum(test.id in regressed for test in tests))
        for cause, tests in found.values()
    ]
    return sorted(groups, key=lambda group: -len(group.tests))


@dataclass(frozen=True)
class CheckpointCauses:
    """A checkpoint's failing tests as the first screen tells them."""

    where: str
    """`problem / checkpoint`, or the checkpoint alone in a run of one problem."""
    problem: str
    checkpoint: CheckpointResult
    why: str | None
    """Why it fails the policy (results.model.why_failed); None when it passes."""
    main_cause: CauseGroup | None
    """The cause of the most of its failing tests; None when none fails (it failed for its
    failure kind, or for tests skipped)."""
    failing: int
    """How many of its tests fail."""
    causes: int
    """How many causes they fail of."""

    @property
    def example(self) -> TestResult | None:
        """One test of the main cause: the first (newly failing first, then by group)."""
        return self.main_cause.tests[0] if self.main_cause is not None else None


def checkpoint_causes(
    run: RunResult, problem: str, checkpoint: CheckpointResult, groups: list[CauseGroup]
) -> CheckpointCauses:
    """`groups`: its cause_groups, the largest first."""
    failing = sum(len(group.tests) for group in groups)
    return CheckpointCauses(
        run.where(problem, checkpoint.name),
        problem,
        checkpoint,
        why_failed(checkpoint, run.policy),
        next(iter(groups), None),
        failing,
        len(groups),
    )


def cause_title(causes: CheckpointCauses) -> str:
    """What its main cause is called: the cause of all its failing tests, of the most of them,
    or (each failing its own way) the first failure."""
    cause = causes.main_cause
    if cause is None:
        return ""
    count = len(cause.tests)
    if count == causes.failing:
        return f"The cause ({counted(count, 'test')})"
    if count > 1:
        return f"The main cause ({count} of {causes.failing} failing tests)"
    return "The first failure"


def example_word(causes: CheckpointCauses) -> str:
    """How the example test is introduced: `e.g.` when its cause hit several, else `in`."""
    cause = causes.main_cause
    return "e.g." if cause is not None and len(cause.tests) > 1 else "in"


def unneeded(policy_name: str, tests: int) -> str:
    """Why failing tests did not fail their checkpoint: `the policy core-cases does not need
    them to pass`."""
    return f"the policy {policy_name} does not need {'it' if tests == 1 else 'them'} to pass"


def unreached(network: NetworkFailures) -> str:
    """`3 failing tests could not reach the network (index.crates.io): SCBench counts them
    failed, though they say nothing of the answers`"""
    hosts = f" ({', '.join(network.hosts)})" if network.hosts else ""
    return (
        f"{counted(network.tests, 'failing test')} could not reach the network{hosts}: SCBench "
        f"counts {'it' if network.tests == 1 else 'them'} failed, though "
        f"{'it says' if network.tests == 1 else 'they say'} nothing of the answers"
    )


def run_network(run: RunResult) -> NetworkFailures | None:
    """The run's failing tests that could not reach the network, over its checkpoints."""
    tests = 0
    hosts: dict[str, None] = {}
    for _, checkpoint in run.checkpoints():
        if checkpoint.network is not None:
            tests += checkpoint.network.tests
            hosts |= dict.fromkeys(checkpoint.network.hosts)
    return NetworkFailures(tests, tuple(hosts)[:MAX_HOSTS]) if tests else None


@dataclass(frozen=True)
class ListedCheckpoints:
    listed: list[CheckpointCauses]
    """The first LISTED_CHECKPOINTS, in the run's order."""
    count: int
    """How many checkpoints the list is of."""
    tests: int
    """How many failing tests they have in all."""


def tests_in(found: ListedCheckpoints, checkpoints: int) -> str:
    """`9 tests in 2 of 9 checkpoints`"""
    return f"{counted(found.tests, 'test')} in {found.count} of {checkpoints} checkpoints"


def failing_checkpoints(run: RunResult) -> ListedCheckpoints:
    """The checkpoints that fail the policy."""
    return _listed(run, [(p, c) for p, c in run.checkpoints() if not c.passed])


def passing_with_failures(run: RunResult) -> ListedCheckpoints:
    """The checkpoints that pass the policy with failing tests (flaky ones aside: they have a
    list of their own)."""
    found = [(p, c) for p, c in run.checkpoints() if c.passed and failing_count(run, c)]
    return _listed(run, found)


def failing_count(run: RunResult, checkpoint: CheckpointResult) -> int:
    """Its failed tests and errors, from its counts (its tests are not read)."""
    counts = checkpoint.counts
    return counts.failed - (0 if run.flaky_passes else counts.flaky)


def told(run: RunResult, problem: str, checkpoint: CheckpointResult) -> CheckpointCauses:
    """One checkpoint of the run, as the first screen tells it."""
    regressed = regressed_tests(run.comparison).get((problem, checkpoint.name), frozenset())
    return checkpoint_causes(run, problem, checkpoint, cause_groups(checkpoint, regressed))


def _listed(
    run: RunResult, pairs: list[tuple[ProblemResult, CheckpointResult]]
) -> ListedCheckpoints:
    regressed = regressed_tests(run.comparison)
    listed = []
    for problem, checkpoint in islice(pairs, LISTED_CHECKPOINTS):
        groups = cause_groups(
            checkpoint, regressed.get((problem.name, checkpoint.name), frozenset())
        )
        listed.append(checkpoint_causes(run, problem.name, checkpoint, groups))
    tests = sum(failing_count(run, checkpoint) for _, checkpoint in pairs)
    return ListedCheckpoints(listed, len(pairs), tests)


def regressed_tests(comparison: Comparison | None) -> dict[tuple[str, str], frozenset[str]]:
    """Per checkpoint, the ids of its tests that newly fail."""
    found: dict[tuple[str, str], set[str]] = {}
    for change in comparison.regressions if comparison is not None else ():
        found.setdefault((change.problem, change.checkpoint), set()).add(change.test)
    return {key: frozenset(ids) for key, ids in found.items()}
