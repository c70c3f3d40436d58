"""A run against a baseline: which tests regressed, were fixed, are new, were removed, are flaky.

Tests are matched by (problem, checkpoint, test id). A checkpoint that something stopped (a
timeout, a collection error, an interrupted session) counts as failing every test of the other
run that it did not run, so a crash is a regression and its repair a fix, even when it ran some
tests before it stopped; only a checkpoint that ran to the end in both is compared for new and
removed tests. When the runs selected different checkpoints or tests (other
checkpoints, prior tests included or not), the comparison says so in `selection_notes`: a test
that was not selected is never a fix or a regression.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from scbench_ci.job.reports import FAILING, PASSING, Status
from scbench_ci.results.comparison_model import (
    NOT_RUN,
    Change,
    CheckpointDelta,
    Comparison,
    TestChange,
)
from scbench_ci.results.model import CheckpointResult, RunResult, TestResult
from scbench_ci.results.quality import QualityMeasures


def compare(run: RunResult, baseline: RunResult, source: str) -> Comparison:
    before = dict(_checkpoints(baseline))
    after = dict(_checkpoints(run))
    changes: dict[Change, list[TestChange]] = {change: [] for change in Change}
    flaky: list[TestChange] = []
    deltas: list[CheckpointDelta] = []
    notes: list[str] = []
    if run.scbench != baseline.scbench:
        notes.append(
            f"the baseline was judged by the rules of --scbench {baseline.scbench}, this run by "
            f"those of --scbench {run.scbench}"
        )
    for key in [*after, *(key for key in before if key not in after)]:
        old, new = before.get(key), after.get(key)
        measured = _measures(old)
        deltas.append(
            CheckpointDelta(
                problem=key[0],
                checkpoint=key[1],
                passed_before=old.passed if old else None,
                passed_after=new.passed if new else None,
                groups_before=dict(old.groups) if old else {},
                groups_after=dict(new.groups) if new else {},
                verbosity_before=measured.verbosity if measured else None,
                erosion_before=measured.erosion if measured else None,
            )
        )
        if old is None or new is None:
            continue
        if old.include_prior_tests != new.include_prior_tests:
            notes.append(
                f"{key[0]} / {key[1]}: earlier checkpoints' tests were "
                f"{_included(old.include_prior_tests)} in the baseline and "
                f"{_included(new.include_prior_tests)} now"
            )
        for change, test_change in _test_changes(key[0], old, new):
            (flaky if change is None else changes[change]).append(test_change)
    only_before = [f"{p} / {c}" for p, c in before if (p, c) not in after]
    only_after = [f"{p} / {c}" for p, c in after if (p, c) not in before]
    if only_before:
        notes.append(f"not evaluated in this run, only in the baseline: {', '.join(only_before)}")
    if only_after:
        notes.append(f"not evaluated in the baseline: {', '.join(only_after)}")
    if changes[Change.REMOVED] or changes[Change.NEW]:
        notes.append(
            f"{len(changes[Change.NEW])} test(s) new and {len(changes[Change.REMOVED])} removed "
            "in checkpoints both runs evaluated: the tests themselves changed"
        )
    return Comparison(
        baseline=source,
        baseline_started_at=baseline.started_at,
        regressions=tuple(changes[Change.REGRESSED]),
        fixed=tuple(changes[Change.FIXED]),
        new=tuple(changes[Change.NEW]),
        removed=tuple(changes[Change.REMOVED]),
        flaky=tuple(flaky),
        checkpoints=tuple(deltas),
        selection_notes=tuple(notes),
    )


def _checkpoints(run: RunResult) -> Iterator[tuple[tuple[str, str], CheckpointResult]]:
    for problem, checkpoint in run.checkpoints():
        yield (problem.name, checkpoint.name), checkpoint


def _test_changes(
    problem: str, old: CheckpointResult, new: CheckpointResult
) -> Iterator[tuple[Change | None, TestChange]]:
    """Each test's change between the two results of one checkpoint; None: flaky now."""
    old_tests = {test.id: test for test in old.tests}
    new_tests = {test.id: test for test in new.tests}
    old_ran, new_ran = _ran(old), _ran(new)

    def change(test: TestResult, before: str | None, after: str | None) -> TestChange:
        return TestChange(
            problem=problem,
            checkpoint=new.name,
            test=test.id,
            group=test.group,
            before=before,
            after=after,
            message=test.message if after not in (None, NOT_RUN) else None,
            file=test.file,
            line=test.line,
        )

    for test in new_tests.values():
        earlier = old_tests.get(test.id)
        if test.status is Status.FLAKY:
            yield None, change(test, earlier.status.value if earlier else None, test.status.value)
        elif earlier is not None or not old_ran:
            was = earlier.status if earlier else None
            if test.status in PASSING and (was is None or was in FAILING):
                yield Change.FIXED, change(test, was.value if was else NOT_RUN, test.status.value)
            elif test.status in FAILING and was is not None and was in PASSING:
                yield Change.REGRESSED, change(test, was.value, test.status.value)
        else:
            yield Change.NEW, change(test, None, test.status.value)
    for test in old_tests.values():
        if test.id in new_tests:
            continue
        if not new_ran:
            if test.status in PASSING:
                regression = change(test, test.status.value, NOT_RUN)
                yield Change.REGRESSED, _with_failure(regression, new)
        else:
            yield Change.REMOVED, change(test, test.status.value, None)


def _ran(result: CheckpointResult) -> bool:
    """Whether the checkpoint ran its tests to the end: one that a failure stopped (a timeout,
    an interrupted session) may have run some, but a test it did not run is not `removed`."""
    return result.failure is None


def _with_failure(change: TestChange, result: CheckpointResult) -> TestChange:
    if result.failure is None:
        return change
    return replace(change, message=f"{result.failure.kind}: {result.failure.message}")


def _measures(checkpoint: CheckpointResult | None) -> QualityMeasures | None:
    """The checkpoint's code-quality measures, when it was measured."""
    return None if checkpoint is None or checkpoint.quality is None else checkpoint.quality.measures


def _included(value: bool) -> str:
    return "included" if value else "left out"
