"""One result for a checkpoint run several times (`--repeat`): per-test pass counts, flaky tests.

A test that passed in some runs and failed in others is flaky; one with the same outcome in
every run keeps that outcome (and the first run's record of it). A run that something stopped
(a timeout, a collection error) makes the checkpoint fail with that run's failure; its tests,
where it has any, still count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from scbench_ci.job.reports import FAILING, PASSING, Status
from scbench_ci.results.model import CheckpointResult, RepeatCount, TestResult
from scbench_ci.results.network_causes import network_failures
from scbench_ci.results.verdict import count_groups, verdict


def combine_runs(
    runs: Sequence[CheckpointResult], policy_name: str, flaky_passes: bool
) -> CheckpointResult:
    """The checkpoint's result over its runs, in order; the first run's fields where one
    run's are needed (submission, fingerprint, started_at)."""
    first = runs[0]
    seen: dict[str, list[tuple[int, TestResult]]] = {}
    for number, run in enumerate(runs, 1):
        for test in run.tests:
            seen.setdefault(test.id, []).append((number, test))
    tests = tuple(_combine_test(records) for records in seen.values())
    groups = count_groups(tests, flaky_passes)
    stopped = next(
        ((number, run) for number, run in enumerate(runs, 1) if run.failure is not None), None
    )
    failure = None
    if stopped is not None:
        number, run = stopped
        assert run.failure is not None
        failure = replace(
            run.failure, message=f"run {number} of {len(runs)}: {run.failure.message}"
        )
    phases: dict[str, float] = {}
    for run in runs:
        for name, seconds in run.phases.items():
            phases[name] = phases.get(name, 0.0) + seconds
    return replace(
        first,
        passed=verdict(policy_name, failure, groups),
        failure=failure,
        pytest_exit_code=stopped[1].pytest_exit_code if stopped else first.pytest_exit_code,
        duration_s=round(sum(run.duration_s for run in runs), 3),
        groups=groups,
        tests=tests,
        network=network_failures(tests),
        warnings=tuple(dict.fromkeys(w for run in runs for w in run.warnings)),
        notices=tuple(dict.fromkeys(n for run in runs for n in run.notices)),
        reused=all(run.reused for run in runs),
        phases=phases,
        # The same files each run, measured in the first (job_evaluation).
        quality=next(
            (run.quality for run in runs if run.quality and run.quality.measures),
            first.quality,
        ),
    )


def _combine_test(records: list[tuple[int, TestResult]]) -> TestResult:
    """One test over the runs that ran it: its duration the longest of them."""
    first = records[0][1]
    passed = sum(1 for _, t in records if t.status in PASSING or t.status is Status.FLAKY)
    failing = [(number, t) for number, t in records if t.status in FAILING]
    longest = max(t.duration_s for _, t in records)
    count = RepeatCount(passed=passed, runs=len(records))
    if passed and failing:
        number, failed = failing[0]
        return replace(
            failed,
            status=Status.FLAKY,
            duration_s=longest,
            message=f"run {number}: {failed.message or failed.status.value}",
            repeat=count,
        )
    flaky = next((t for _, t in records if t.status is Status.FLAKY), None)
    return replace(flaky or first, duration_s=longest, repeat=count)
