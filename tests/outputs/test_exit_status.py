"""`--fail-on`'s quality limits: parsed strictly, off by default, a measure above its limit (or
risen by more than its limit since the baseline) fails the run whatever the mode, and so does a
checkpoint the limits cannot judge (not measured, source files left out, no baseline figure for a
rise), in words, unless `if-measured` says otherwise."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scbench_ci.foundation.errors import ExitCode
from scbench_ci.foundation.option_values import BadValue
from scbench_ci.job.reports import Status
from scbench_ci.outputs.exit_status import exit_code, over_limits, run_headline
from scbench_ci.results.compare import compare
from scbench_ci.results.fail_on import parse_fail_on
from scbench_ci.results.model import CheckpointResult, RunResult
from scbench_ci.results.quality import QualityOutcome, Unmeasured
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
        ("if-measured never verbosity>0.2", "never verbosity>0.2 if-measured"),
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
        ("policy if-measured", "if-measured qualifies quality limits, and none is given"),
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
        "❌ FAILED (code quality fails the --fail-on limits: demo/checkpoint_2 erosion 0.620 > 0.5)"
    )


def test_a_checkpoint_not_measured_fails_a_limit_and_says_why() -> None:
    passing = make_checkpoint(make_test("test_a", Status.PASSED))
    failed = replace(passing, quality=QualityOutcome(None, reason="scb-check timed out"))
    run = run_of(measured(0.1, 0.1), replace(failed, name="checkpoint_2"))

    assert exit_code(run, "policy") is ExitCode.PASSED
    assert exit_code(run, "policy erosion>0.5 verbosity>0.5") is ExitCode.FAILED
    assert over_limits(run, "never verbosity>0.5") == [
        "demo/checkpoint_2 not measured: scb-check timed out"
    ]
    forged = replace(passing, quality=QualityOutcome(None, reason="\n timed out\n::error::x"))
    assert over_limits(run_of(forged), "policy erosion>0.5") == [
        "demo/checkpoint_1 not measured: timed out"
    ]
    assert over_limits(run_of(passing), "policy erosion>0.5") == [
        "demo/checkpoint_1 not measured (the quality measure was off, or the result predates it)"
    ]


def test_a_checkpoint_that_left_source_files_unmeasured_fails_a_limit_naming_them() -> None:
    left_out = Unmeasured(5, ("build/a.py", "build/b.py", "dist/c.js", "env/d.py", "gen.py"))
    partial = measured(0.0, 0.0)
    assert partial.quality is not None
    run = run_of(replace(partial, quality=replace(partial.quality, unmeasured=left_out)))

    assert exit_code(run, "policy verbosity>0.2") is ExitCode.FAILED
    assert run_headline(run, "policy verbosity>0.2").heading == (
        "❌ FAILED (code quality fails the --fail-on limits: demo/checkpoint_1 left 5 source "
        "files of the submission unmeasured: build/a.py, build/b.py, dist/c.js and 2 more)"
    )
    unknown = replace(partial, quality=replace(partial.quality, unmeasured=None))
    assert over_limits(run_of(unknown), "policy erosion>0.5") == [
        "demo/checkpoint_1 measured, but which source files were measured is not recorded"
    ]


def test_if_measured_holds_the_limits_to_what_was_measured() -> None:
    passing = make_checkpoint(make_test("test_a", Status.PASSED))
    failed = replace(passing, quality=QualityOutcome(None, reason="scb-check timed out"))
    over = measured(0.6, 0.1, name="checkpoint_3")
    assert over.quality is not None
    partial = replace(over, quality=replace(over.quality, unmeasured=Unmeasured(1, ("b/a.py",))))
    run = run_of(passing, replace(failed, name="checkpoint_2"))

    assert exit_code(run, "policy erosion>0.5 if-measured") is ExitCode.PASSED
    assert over_limits(run_of(partial), "policy erosion>0.5 if-measured") == [
        "demo/checkpoint_3 erosion 0.600 > 0.5"
    ]


def test_a_rise_since_the_baseline_above_its_limit_fails_the_run() -> None:
    baseline = run_of(measured(0.30, 0.05), measured(0.40, 0.10, name="checkpoint_2"))
    now = run_of(measured(0.33, 0.05), measured(0.50, 0.10, name="checkpoint_2"))
    run = replace(now, comparison=compare(now, baseline, "baseline/results.json"))

    assert exit_code(run, "policy erosion>+0.05") is ExitCode.FAILED
    assert exit_code(run, "policy erosion>+0.2 verbosity>+0") is ExitCode.PASSED
    assert run_headline(run, "policy erosion>+0.05").heading == (
        "❌ FAILED (code quality fails the --fail-on limits: demo/checkpoint_2 erosion rose 0.100 "
        "> 0.05 since the baseline)"
    )


def test_a_rise_needs_the_baseline_s_figure_where_the_baseline_has_the_checkpoint() -> None:
    now = run_of(measured(0.9, 0.9))
    unmeasured = run_of(make_checkpoint(make_test("test_a", Status.PASSED)))
    elsewhere = run_of(measured(0.1, 0.1, name="checkpoint_9"))

    # No baseline, or one without the checkpoint: nothing to rise from.
    assert exit_code(now, "policy erosion>+0") is ExitCode.PASSED
    other = replace(now, comparison=compare(now, elsewhere, "baseline/results.json"))
    assert exit_code(other, "policy erosion>+0") is ExitCode.PASSED
    compared = replace(now, comparison=compare(now, unmeasured, "baseline/results.json"))
    assert over_limits(compared, "policy erosion>+0") == [
        "demo/checkpoint_1 erosion: its baseline checkpoint was not measured, so no rise can be "
        "judged"
    ]
    assert exit_code(compared, "policy erosion>+0 if-measured") is ExitCode.PASSED
