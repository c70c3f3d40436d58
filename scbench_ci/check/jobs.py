"""The runs `check` makes of a problem, as evaluation jobs, and their results sorted back.

Each checkpoint gets up to four kinds of job, each in its own folder of the output folder
(`<problem>/<checkpoint>/<role>/`): its own tests collected only (`collect`), its reference
solution `solutions/<checkpoint>/` run `repeat` times (`oracle`, in `run-<n>` folders when
repeated), the reference solution once more with the network cut after setup (`offline`: the
tests whose outcome changes reach the network, which SCBench's runs have), and an empty
submission (`empty`). The collection and the empty submission run the
checkpoint's own tests only: earlier checkpoints' are collected in their own job, and are
Regression tests, never Core, here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial
from pathlib import Path

from scbench_ci.check.static import SOLUTIONS_DIR
from scbench_ci.job.plan import (
    Job,
    repeats,
    resolved_include_prior_tests,
    resolved_test_timeout,
)
from scbench_ci.problem.model import Checkpoint, Problem
from scbench_ci.results.model import CheckpointResult
from scbench_ci.trust.untrusted_tree import Kind, UntrustedTree

COLLECT_ONLY = "--collect-only"


class Role(StrEnum):
    """A run's folder name; `described`, what the run is, in its job's label."""

    COLLECT = "collect"
    ORACLE = "oracle"
    OFFLINE = "offline"
    EMPTY = "empty"

    @property
    def described(self) -> str:
        return _DESCRIBED[self]


_DESCRIBED = {
    Role.COLLECT: "tests collected only",
    Role.ORACLE: "reference solution",
    Role.OFFLINE: "reference solution without the network",
    Role.EMPTY: "empty submission",
}


@dataclass(frozen=True)
class CheckpointRuns:
    """A checkpoint's results, one per role; the oracle's over its repeats."""

    checkpoint: Checkpoint
    collect: tuple[Job, CheckpointResult]
    oracle: tuple[Job, CheckpointResult] | None
    """None when the problem ships no reference solutions."""
    empty: tuple[Job, CheckpointResult]
    offline: tuple[Job, CheckpointResult] | None = None
    """None without reference solutions, or when the network was not cut for it."""


def has_solutions(problem: Problem) -> bool:
    """Whether the problem has a solutions/ folder of its own (a symlink is not one)."""
    with UntrustedTree.opened(problem.root) as tree:
        return tree.kind(SOLUTIONS_DIR) is Kind.FOLDER


def check_jobs(
    problem: Problem,
    *,
    empty: Path,
    repeat: int,
    include_prior_tests: bool | None,
    test_timeout_s: float | None = None,
    offline: bool = False,
) -> list[Job]:
    """`empty`: an empty folder, the empty submission. `include_prior_tests`,
    `test_timeout_s`: as for an evaluation (None: each checkpoint's own setting), the first
    for the oracle runs. `offline`: whether the
    reference solution runs once more with the network cut (only an executor that can cut it,
    when the oracle's tests have it)."""
    solutions = has_solutions(problem)
    jobs = []
    for checkpoint in problem.checkpoints:
        job = partial(_job, problem, checkpoint, resolved_test_timeout(checkpoint, test_timeout_s))
        # Not resolved: staging walks it from the problem's root without following a link.
        solution = problem.root / SOLUTIONS_DIR / checkpoint.name
        # Tests may import the submission: they are collected with the solution where there
        # is one.
        collected = solution if solutions else empty
        jobs.append(job(Role.COLLECT, collected, (COLLECT_ONLY,)))
        if solutions:
            include = resolved_include_prior_tests(checkpoint, include_prior_tests)
            oracle = job(Role.ORACLE, solution)
            jobs += repeats(replace(oracle, include_prior_tests=include), repeat)
            if offline:
                cut = job(Role.OFFLINE, solution)
                jobs.append(replace(cut, include_prior_tests=include, cut_network=True))
        jobs.append(job(Role.EMPTY, empty))
    return jobs


def _job(
    problem: Problem,
    checkpoint: Checkpoint,
    test_timeout_s: float,
    role: Role,
    submission: Path,
    pytest_args: tuple[str, ...] = (),
) -> Job:
    return Job(
        problem=problem,
        checkpoint=checkpoint,
        include_prior_tests=False,
        submission=submission,
        artifacts=f"{problem.root.name}/{checkpoint.name}/{role}",
        test_timeout_s=test_timeout_s,
        pytest_args=pytest_args,
        role=role.described,
        quality=role is Role.ORACLE,
    )


def checkpoint_runs(
    problem: Problem, results: Sequence[tuple[Job, CheckpointResult]]
) -> list[CheckpointRuns]:
    """The problem's checkpoints' runs, in order, from the results of a run of its check jobs
    (and maybe other problems')."""
    by_role = {
        (job.checkpoint.name, job.role): (job, result)
        for job, result in results
        if job.problem.root == problem.root
    }
    return [
        CheckpointRuns(
            checkpoint,
            by_role[(checkpoint.name, Role.COLLECT.described)],
            by_role.get((checkpoint.name, Role.ORACLE.described)),
            by_role[(checkpoint.name, Role.EMPTY.described)],
            by_role.get((checkpoint.name, Role.OFFLINE.described)),
        )
        for checkpoint in problem.checkpoints
    ]
