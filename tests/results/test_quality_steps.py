"""How a run's code quality moved: each checkpoint beside its problem's previous measured one and
the baseline's same checkpoint, in points of the shown percentages; the largest rises of erosion."""

from __future__ import annotations

from dataclasses import replace

from scbench_ci.job.reports import Status
from scbench_ci.results.compare import compare
from scbench_ci.results.model import CheckpointResult, ProblemResult
from scbench_ci.results.quality_steps import erosion_rises, points_change, quality_steps
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured

PASSED = make_test("a", Status.PASSED)


def checkpoint(name: str, verbosity: float, erosion: float) -> CheckpointResult:
    return measured(make_checkpoint(PASSED, name=name), verbosity, erosion)


def test_a_change_is_the_difference_of_the_shown_figures() -> None:
    # 7.14% shows as 7.1 and 6.46% as 6.5: the change is 0.6, as a reader subtracts them, not
    # the 0.7 of rounding 0.68.
    assert points_change(0.0714, 0.0646) == 0.6
    assert points_change(0.22, 0.34) == -12.0


def test_each_checkpoint_is_compared_with_the_previous_measured_one_of_its_problem() -> None:
    run = make_run(
        checkpoint("checkpoint_1", 0.066, 0.22),
        not_measured(make_checkpoint(PASSED, name="checkpoint_2"), "scb-check crashed"),
        make_checkpoint(PASSED, name="checkpoint_3"),
        checkpoint("checkpoint_4", 0.073, 0.34),
    )

    steps = list(quality_steps(run))

    assert [step.checkpoint for step in steps] == ["checkpoint_1", "checkpoint_2", "checkpoint_4"]
    assert [step.previous for step in steps] == [None, "checkpoint_1", "checkpoint_1"]
    assert [(s.verbosity_change(), s.erosion_change()) for s in steps] == [
        (None, None),
        (None, None),
        (0.7, 12.0),
    ]
    assert steps[1].outcome.reason == "scb-check crashed"


def test_problems_are_not_compared_with_each_other() -> None:
    run = make_run(checkpoint("checkpoint_1", 0.1, 0.1))
    other = ProblemResult("other", "/problems/other", 1, (checkpoint("checkpoint_2", 0.2, 0.5),))
    run = replace(run, problems=(*run.problems, other))

    assert [step.previous for step in quality_steps(run)] == [None, None]
    assert erosion_rises(run) == []


def test_the_change_since_the_baseline_is_of_the_same_checkpoint() -> None:
    baseline = make_run(
        checkpoint("checkpoint_1", 0.05, 0.30), checkpoint("checkpoint_2", 0.1, 0.2)
    )
    run = make_run(checkpoint("checkpoint_1", 0.06, 0.25), checkpoint("checkpoint_2", 0.1, 0.4))
    run = replace(run, comparison=compare(run, baseline, "base"))

    steps = list(quality_steps(run))

    assert [(s.verbosity_since_baseline(), s.erosion_since_baseline()) for s in steps] == [
        (1.0, -5.0),
        (0.0, 20.0),
    ]


def test_the_largest_rises_of_erosion_first_and_only_rises() -> None:
    run = make_run(
        checkpoint("checkpoint_1", 0.1, 0.10),
        checkpoint("checkpoint_2", 0.1, 0.15),
        checkpoint("checkpoint_3", 0.1, 0.40),
        checkpoint("checkpoint_4", 0.1, 0.30),
        checkpoint("checkpoint_5", 0.1, 0.32),
        checkpoint("checkpoint_6", 0.1, 0.33),
    )

    rises = erosion_rises(run)

    assert [(rise.checkpoint, rise.previous, rise.points) for rise in rises] == [
        ("checkpoint_3", "checkpoint_2", 25.0),
        ("checkpoint_2", "checkpoint_1", 5.0),
        ("checkpoint_5", "checkpoint_4", 2.0),
    ]
