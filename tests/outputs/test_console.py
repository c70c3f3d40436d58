"""The CLI's closing report: the counts, and the run's own text made inert."""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.job.reports import Status
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.summary import render_summary
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Group
from scbench_ci.results.compare import compare
from scbench_ci.results.judge import unrun_result
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind, TestResult
from scbench_ci.results.verdict import count_groups
from testing.problems import ProblemFolder
from testing.results import left_out, make_checkpoint, make_run, make_test, measured

RULES = rules_line("1.0")


def test_text_from_the_run_cannot_command_a_terminal_or_the_runner(
    problem_folder: ProblemFolder,
) -> None:
    problem = load_problem(problem_folder.root)
    log_tail = "collected 1 item\n::stop-commands::x\n  ::error::indented\nok\r::error::cr\n\x1b[2K"
    checkpoint = unrun_result(
        problem.checkpoints[0],
        True,
        Failure(FailureKind.INFRASTRUCTURE, "pytest wrote no report ##[error]x", log_tail),
        ("a warning\n::warning::injected",),
    )
    result = make_run(checkpoint)
    report = render_report(result, Path(".scbench/results.json"), fail_on="policy")
    assert report.endswith(
        "  all                     0/0        -\n"
        "  why it failed: infrastructure: pytest wrote no report ##\\[error]x\n"
        "    collected 1 item\n"
        "    \\::stop-commands::x\n"
        "      \\::error::indented\n"
        "    ok\n"
        "    \\::error::cr\n"
        "    \\x1b[2K\n"
        "  warning: a warning\\n::warning::injected\n"
        "\n"
        f"{RULES}\n"
        "Verdict: FAILED (0 of 1 checkpoint passes the policy core-cases, which asks that every "
        "Core test passes)\n"
        "An infrastructure failure stopped the evaluation; see the log tail above.\n"
        "Results: .scbench/results.json\n"
    )


def checkpoint(tests: list[TestResult], name: str = "checkpoint_1") -> CheckpointResult:
    groups = count_groups(tests, flaky_passes=False)
    return CheckpointResult(
        name=name,
        include_prior_tests=True,
        passed=groups[Group.CORE].failed == 0,
        failure=None,
        pytest_exit_code=1,
        duration_s=1.0,
        groups=groups,
        tests=tuple(tests),
        warnings=(),
    )


def result_of(name: str, status: Status, message: str | None = None, reruns: int = 0) -> TestResult:
    return TestResult(
        id=f"tests/test_checkpoint_1.py::{name}",
        checkpoint="checkpoint_1",
        group=Group.CORE,
        status=status,
        duration_s=0.1,
        markers=(),
        message=message,
        traceback=None,
        file="tests/test_checkpoint_1.py",
        line=3,
        reruns=reruns,
    )


def test_the_changes_since_the_baseline_come_first() -> None:
    baseline = make_run(
        checkpoint(
            [
                result_of("a", Status.PASSED),
                result_of("b", Status.FAILED),
                result_of("c", Status.PASSED),
            ]
        )
    )
    run = make_run(
        checkpoint(
            [
                result_of("a", Status.FAILED, "AssertionError: 1 == 2\nmore"),
                result_of("b", Status.PASSED),
                result_of("c", Status.FLAKY, "ConnectionError", reruns=1),
            ]
        )
    )
    compared = replace(run, comparison=compare(run, baseline, "nightly/results.json"))
    report = render_report(compared, Path("results.json"), fail_on="policy")
    assert report.startswith(
        "\n"
        "Compared with nightly/results.json (2026-01-01 00:00 UTC): 1 regression, 1 fixed, "
        "0 new, 0 removed, 1 flaky, 0 verdict changes\n"
        "  regressed demo / checkpoint_1: tests/test_checkpoint_1.py::a (passed -> failed): "
        "AssertionError: 1 == 2\n"
        "\n"
        "demo / checkpoint_1: failed in 1.0 s\n"
    )
    assert report.endswith(
        "  all                     1/3    33.3%\n"
        "  why it failed: 2 Core tests failed\n"
        "    The cause (1 test): AssertionError: 1 == 2\n"
        "    in tests/test_checkpoint_1.py::a\n"
        "\n"
        "Flaky tests: 1, counted as failed for the policy\n"
        "  demo / checkpoint_1: tests/test_checkpoint_1.py::c passed on attempt 2; "
        "first failure: ConnectionError\n"
        "\n"
        f"{RULES}\n"
        "Verdict: FAILED (0 of 1 checkpoint passes the policy core-cases, which asks that every "
        "Core test passes)\n"
        "Results: results.json\n"
    )


def test_long_lists_are_cut() -> None:
    names = [f"t{i}" for i in range(25)]
    baseline = make_run(checkpoint([result_of(name, Status.PASSED) for name in names]))
    run = make_run(
        checkpoint(
            [result_of(name, Status.FAILED) for name in names]
            + [result_of(f"f{i}", Status.FLAKY, reruns=2) for i in range(21)]
        )
    )
    report = render_report(
        replace(run, comparison=compare(run, baseline, "b"), flaky_passes=True),
        Path("r"),
        fail_on="policy",
    )
    assert report.count("  regressed demo / checkpoint_1: ") == 20
    assert "::t19 (passed -> failed)\n  … and 5 more\n  verdict " in report
    assert "Flaky tests: 21, counted as passed (--flaky-passes)\n" in report
    assert report.count(" passed on attempt 3\n") == 20
    assert f"::f19 passed on attempt 3\n  … and 1 more\n\n{RULES}\nVerdict" in report


def test_hostile_changes_cannot_command_the_runner() -> None:
    hostile = "t[x\r::error::a\n::warning::b\x1b[2K]"
    baseline = make_run(checkpoint([result_of(hostile, Status.PASSED)]))
    run = make_run(
        checkpoint(
            [result_of(hostile, Status.FAILED, "::error::m"), result_of("f", Status.FLAKY, "\n::x")]
        )
    )
    compared = replace(run, comparison=compare(run, baseline, "::error::baseline"))
    report = render_report(compared, Path("r"), fail_on="policy")
    assert "Compared with ::error::baseline (2026-" in report  # the runner reads a line's start
    assert "1 verdict change\n" in report
    assert (
        "  regressed demo / checkpoint_1: tests/test_checkpoint_1.py::t[x\\r::error::a\n"
        "\\::warning::b\\x1b[2K] (passed -> failed): ::error::m\n"
    ) in report
    assert "::f passed on attempt 1; first failure: ::x\n" in report
    assert not [line for line in report.splitlines() if line.lstrip().startswith("::")]


def test_skipped_tests_are_shown_where_they_make_passed_fewer_than_all() -> None:
    """An xfailed Core test: `Core 1/2` alone would read as a failure of a passing checkpoint."""
    xfailed = checkpoint([result_of("a", Status.PASSED), result_of("b", Status.XFAILED)])
    report = render_report(make_run(xfailed), None, fail_on="policy")
    assert "  Core                    1/2    50.0%  1 skipped\n" in report
    assert "  Functionality           0/0        -\n" in report
    two = replace(make_run(xfailed), problems=(*make_run(xfailed).problems,) * 2)
    compact = render_report(two, None, fail_on="policy")
    assert "passed demo / checkpoint_1: Core 1/2 (1 skipped), all 1/2 (1 skipped), 1.0 s\n" in (
        compact
    )


@pytest.mark.parametrize(
    ("problems", "jobs", "counted"),
    [(1, 1, "1 problem, 1.0 s, 1 job side by side"), (2, 2, "2 problems, 1.0 s, 2 jobs side")],
)
def test_counts_are_singular_or_plural(problems: int, jobs: int, counted: str) -> None:
    one = make_run(
        checkpoint([result_of("a", Status.PASSED)]),
        checkpoint([result_of("a", Status.PASSED)], name="checkpoint_2"),
    )
    run = replace(one, problems=one.problems * problems, jobs=jobs)
    assert f"checkpoints passed ({counted}" in render_report(run, None, fail_on="policy")


def test_a_run_of_several_checkpoints_ends_with_what_failed_and_why() -> None:
    failing = [
        checkpoint([result_of("a", Status.FAILED)], name=f"checkpoint_{i}") for i in range(1, 23)
    ]
    passing = checkpoint([result_of("a", Status.PASSED)], name="checkpoint_23")
    report = render_report(make_run(*failing, passing), None, fail_on="policy")
    assert report.endswith(
        "23 checkpoints passed (1 problem, 1.0 s, 1 job side by side)\n"
        "22 checkpoints failed:\n"
        + "".join(
            f"  demo / checkpoint_{i}: 1 Core test failed\n"
            "    The cause (1 test): (no message)\n"
            "    in tests/test_checkpoint_1.py::a\n"
            for i in range(1, 6)
        )
        + "  … and 17 more, in the summary\n"
        f"{RULES}\n"
        "Verdict: FAILED (1 of 23 checkpoints pass the policy core-cases, which asks that every "
        "Core test passes)\n"
    )
    assert "checkpoints failed" not in render_report(
        make_run(passing, passing), None, fail_on="policy"
    )


def test_the_recap_names_the_checkpoints_whose_erosion_rose_most() -> None:
    figures = [(0.1, 0.10), (0.1, 0.15), (0.1, 0.40), (0.1, 0.30), (0.1, 0.32), (0.1, 0.33)]
    checkpoints = [
        measured(make_checkpoint(make_test("a", Status.PASSED), name=f"cp\x1b[31m_{i}"), *pair)
        for i, pair in enumerate(figures, start=1)
    ]
    report = render_report(make_run(*checkpoints), None, fail_on="policy")
    assert (
        "Erosion rose most at:\n"
        "  demo / cp\\x1b[31m_3: 15.0% at cp\\x1b[31m_2 -> 40.0% (+25.0 points)\n"
        "  demo / cp\\x1b[31m_2: 10.0% at cp\\x1b[31m_1 -> 15.0% (+5.0 points)\n"
        "  demo / cp\\x1b[31m_5: 30.0% at cp\\x1b[31m_4 -> 32.0% (+2.0 points)\n"
        f"{RULES}\n"
        "Verdict: "
    ) in report
    falling = [checkpoints[2], checkpoints[3]]
    assert "Erosion" not in render_report(make_run(*falling), None, fail_on="policy")


def test_the_recap_names_the_source_files_the_quality_measure_left_out() -> None:
    passing = make_checkpoint(make_test("a", Status.PASSED))
    files = ("build/a.py", "build/b\\n::warning::x.py", "c.py", "d.py", "e.py", "f.py")
    partial = left_out(measured(passing, 0.1, 0.1), 7, *files)
    whole = measured(replace(passing, name="checkpoint_2"), 0.1, 0.1)

    report = render_report(make_run(partial, whole), None, fail_on="policy verbosity>0.5")

    assert (
        "Source files the code-quality measure left out:\n"
        "  demo / checkpoint_1: 7 files (build/a.py, build/b\\n::warning::x.py, c.py, d.py, e.py "
        "and 2 more)\n"
    ) in report
    assert (
        "Verdict: FAILED (code quality fails the --fail-on limits: demo/checkpoint_1 left 7 "
        "source files of the submission unmeasured: build/a.py, build/b\\n::warning::x.py, c.py "
        "and 4 more)\n"
    ) in report
    assert "left out" not in render_report(make_run(whole), None, fail_on="policy")


def test_on_a_terminal_only_the_report_s_own_verdict_lines_are_coloured() -> None:
    """A failure message that prints a green `Verdict: PASSED` of its own stays plain text."""
    spoof = "\x1b[32mVerdict: PASSED\x1b[0m\nVerdict: PASSED"
    failing = replace(make_test("t", Status.FAILED), message=spoof, traceback=spoof)
    checkpoint = make_checkpoint(failing, failure=Failure(FailureKind.COLLECTION, spoof, spoof))
    coloured = render_report(make_run(checkpoint), None, fail_on="policy", colour=True)
    plain = render_report(make_run(checkpoint), None, fail_on="policy")
    red, reset = "\x1b[31m", "\x1b[0m"
    assert coloured.count("\x1b[") == 4  # the checkpoint's line and the verdict, each red
    assert f"{red}demo / checkpoint_1: failed in 1.0 s{reset}\n" in coloured
    verdict = "Verdict: FAILED (0 of 1 checkpoint passes the policy core-cases, which asks that"
    assert coloured.endswith(f"{red}{verdict} every Core test passes){reset}\n")
    assert "\x1b" not in plain
    assert coloured.replace(red, "").replace(reset, "") == plain


def test_a_failed_checkpoint_s_report_names_its_main_cause_as_the_summary_does() -> None:
    """Issue #52: the console told only `why it failed: 7 Core tests failed`; it says the cause
    too, with how many tests it hit and one of them, in the summary's words."""
    missing = "NameError: name 'values_equal' is not defined"
    tests = [result_of(f"t{i}", Status.FAILED, missing) for i in range(3)]
    tests.append(result_of("other", Status.FAILED, "AssertionError: 1 == 2"))
    run = make_run(checkpoint(tests))
    report = render_report(run, None, fail_on="policy")
    assert (
        "  why it failed: 4 Core tests failed\n"
        f"    The main cause (3 of 4 failing tests): {missing}\n"
        "    e.g. tests/test_checkpoint_1.py::t0\n"
        "    and 1 more cause, in the summary\n"
    ) in report
    summary = render_summary(run)
    assert f"<strong>The main cause (3 of 4 failing tests)</strong>: {html.escape(missing)}" in (
        summary
    )


def test_failing_tests_of_a_passing_checkpoint_are_named() -> None:
    """Issue #52: a run that passes with failing tests said only `passed`."""
    tests = [
        result_of("core", Status.PASSED),
        replace(result_of("extra", Status.ERROR, "FileNotFoundError: x.csv"), group=Group.ERROR),
    ]
    one = make_run(checkpoint(tests))
    assert (
        "  all                     1/2    50.0%\n"
        "  1 failing test (the policy core-cases does not need it to pass)\n"
        "    The cause (1 test): FileNotFoundError: x.csv\n"
        "    in tests/test_checkpoint_1.py::extra\n"
    ) in render_report(one, None, fail_on="policy")
    several = make_run(*(checkpoint(tests, name=f"checkpoint_{i}") for i in range(1, 8)))
    report = render_report(several, None, fail_on="policy")
    assert (
        "Failing tests in checkpoints that pass: 7 tests in 7 of 7 checkpoints (the policy "
        "core-cases does not need them to pass)\n"
        "  demo / checkpoint_1: 1 failing test\n"
        "    The cause (1 test): FileNotFoundError: x.csv\n"
        "    in tests/test_checkpoint_1.py::extra\n"
    ) in report
    assert report.count(": 1 failing test\n") == 5
    assert f"  … and 2 more, in the summary\n{RULES}\nVerdict: PASSED" in report


def test_a_cause_on_the_console_is_inert() -> None:
    hostile = "::error::x\x1b[2J\nnext"
    run = make_run(checkpoint([result_of("t\x1b[31m", Status.FAILED, hostile)]))
    report = render_report(run, None, fail_on="policy")
    assert "    The cause (1 test): ::error::x\\x1b[2J\n" in report
    assert "    in tests/test_checkpoint_1.py::t\\x1b[31m\n" in report
    assert "\x1b" not in report


CARGO = (
    "assert 101 == 0\n +  where 101 = CompletedProcess(args=['cargo', 'build'], returncode=101, "
    "stdout='', stderr='warning: spurious network error (1 tries remaining): [6] Could not "
    "resolve hostname (Could not resolve host: index.crates.io)\\nerror: failed to get `rand` as "
    "a dependency of package `demo v0.1.0`\\n').returncode"
)


def test_tests_that_could_not_reach_the_network_are_named_with_the_host() -> None:
    """Issue #52: a reference solution's Rust tests failed because cargo could not reach
    crates.io; the run ended `10 Core tests failed` with no hint. The verdict stays SCBench's."""
    tests = [result_of(f"rust_{i}", Status.FAILED, CARGO) for i in range(3)]
    tests.append(result_of("python", Status.PASSED))
    run = make_run(make_checkpoint(*tests))
    report = render_report(run, None, fail_on="policy")
    assert (
        "  why it failed: 3 Core tests failed\n"
        "    The cause (3 tests): error: failed to get `rand` as a dependency of package `demo "
        "v0.1.0`\n"
        "    e.g. tests/test_checkpoint_1.py::rust_0\n"
        "    3 failing tests could not reach the network (index.crates.io): SCBench counts them "
        "failed, though they say nothing of the answers\n"
    ) in report
    assert "Verdict: FAILED" in report
    summary = render_summary(run)
    assert "all tests: 1 of 4 pass, 3 fail (3 could not reach the network)" in summary
    assert (
        "**Network**: 3 failing tests could not reach the network (index.crates.io): SCBench "
        "counts them failed, though they say nothing of the answers.\n"
    ) in summary
    several = make_run(make_checkpoint(*tests), make_checkpoint(*tests, name="checkpoint_2"))
    assert (
        "In 2 checkpoints, 6 failing tests could not reach the network (index.crates.io): "
    ) in render_report(several, None, fail_on="policy")
