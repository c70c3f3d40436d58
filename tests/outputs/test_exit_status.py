"""`--fail-on`'s quality limits: parsed strictly, off by default, a measure above its limit (or
risen by more than its limit since the baseline) fails the run whatever the mode, and a checkpoint
not measured never does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scbench_ci.errors import ExitCode
from scbench_ci.option_values import BadValue
from scbench_ci.outputs.exit_status import exit_code, parse_fail_on, run_headline
from scbench_ci.reports import Status
from scbench_ci.results.compare import compare
from scbench_ci.results.model import CheckpointResult, RunResult
from scbench_ci.results.quality import QualityOutcome
from testing.results import make_checkpoint, make_run, make_test
from testing.results import measured as with_measures


def measured(erosion: float, verbosity: float, name: str = "checkpoint_1") -> CheckpointResult:
    passing = make_checkpoint(make_test("test_a", Status.PASSED), name=name)
    return with_measures(passing, verbosity, erosion)


def run_of(*checkpoints: CheckpointResult) -> RunResult:
    return make_run(*checkpoints)


@pytest.mark.parametrize(
    ("given", "normalized"),
    [
        ("policy", "policy"),
        ("never", "never"),
        ("erosion>0.5", "policy erosion>0.5"),
        ("regressions  verbosity>0.20 erosion>0.4", "regressions verbosity>0.2 erosion>0.4"),
        ("erosion>0.5 erosion>+0.05", "policy erosion>0.5 erosion>+0.05"),
    ],
)
def test_rules_are_read_and_normalized(given: str, normalized: str) -> None:
    assert parse_fail_on("--fail-on", given) == normalized


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("sometimes", "'sometimes' is not one of policy, regressions, never"),
        ("policy never", "give one of policy, regressions, never, not policy and never"),
        ("complexity>0.5", "'complexity' is not a measure a limit can be set on"),
        ("erosion>1.5", "'erosion>1.5': the limit must be from 0 to less than 1"),
        ("erosion>0.1.2", "'0.1.2' in 'erosion>0.1.2' is not a number"),
        ("erosion>0.2 erosion>0.3", "a quality limit is given twice for one measure"),
        ("erosion>+0.1 erosion>+0.2", "a quality limit is given twice for one measure"),
        ("erosion>+1", "'erosion>+1': the limit must be from 0 to less than 1"),
        ("erosion>-0.1", "nor a quality limit such as erosion>0.5"),
        ("erosion<0.5", "nor a quality limit such as erosion>0.5"),
        ("erosion>nan", "nor a quality limit"),
    ],
)
def test_a_bad_rule_is_refused_in_words(given: str, reason: str) -> None:
    with pytest.raises(BadValue, match="--fail-on: ") as refused:
        parse_fail_on("--fail-on", given)
    assert reason in str(refused.value)


def test_no_limit_by_default_whatever_the_measures() -> None:
    run = run_of(measured(erosion=0.9, verbosity=0.9))

    assert exit_code(run, "policy") is ExitCode.PASSED


def test_a_measure_above_its_limit_fails_the_run_whatever_the_mode() -> None:
    run = run_of(measured(0.3, 0.05), measured(0.62, 0.05, name="checkpoint_2"))

    assert exit_code(run, "policy erosion>0.5") is ExitCode.FAILED
    assert exit_code(run, "never erosion>0.5") is ExitCode.FAILED
    assert exit_code(run, "policy erosion>0.7 verbosity>0.1") is ExitCode.PASSED
    headline = run_headline(run, "policy erosion>0.5")
    assert headline.heading == (
        "❌ FAILED (code quality over the --fail-on limits: demo/checkpoint_2 erosion 0.620 > 0.5)"
    )


def test_a_checkpoint_not_measured_never_trips_a_limit() -> None:
    passing = make_checkpoint(make_test("test_a", Status.PASSED))
    failed = replace(passing, quality=QualityOutcome(None, reason="scb-check timed out"))
    run = run_of(passing, replace(failed, name="checkpoint_2"))

    assert exit_code(run, "policy erosion>0 verbosity>0") is ExitCode.PASSED


def test_a_rise_since_the_baseline_above_its_limit_fails_the_run() -> None:
    baseline = run_of(measured(0.30, 0.05), measured(0.40, 0.10, name="checkpoint_2"))
    now = run_of(measured(0.33, 0.05), measured(0.50, 0.10, name="checkpoint_2"))
    run = replace(now, comparison=compare(now, baseline, "baseline/results.json"))

    assert exit_code(run, "policy erosion>+0.05") is ExitCode.FAILED
    assert exit_code(run, "policy erosion>+0.2 verbosity>+0") is ExitCode.PASSED
    assert run_headline(run, "policy erosion>+0.05").heading == (
        "❌ FAILED (code quality over the --fail-on limits: demo/checkpoint_2 erosion rose 0.100 "
        "> 0.05 since the baseline)"
    )


def test_a_rise_is_never_over_without_a_measured_baseline() -> None:
    now = run_of(measured(0.9, 0.9))
    unmeasured = run_of(make_checkpoint(make_test("test_a", Status.PASSED)))

    assert exit_code(now, "policy erosion>+0") is ExitCode.PASSED
    compared = replace(now, comparison=compare(now, unmeasured, "baseline/results.json"))
    assert exit_code(compared, "policy erosion>+0") is ExitCode.PASSED
