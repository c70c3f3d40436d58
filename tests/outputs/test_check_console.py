"""What a check shows: console lines, the summary, annotations and the exit code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.check.problem_report import DYNAMIC_STAGES
from scbench_ci.cli.main import main
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.foundation.scbench_runner import rules_line
from scbench_ci.outputs.check_console import finding_line, render_check_report
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.github.annotations import MAX_ANNOTATIONS, finding_annotations
from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.results.fail_on import DEFAULT_FAIL_ON
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import ProblemResult, RunResult
from scbench_ci.results.quality import QualityMeasures, QualityOutcome
from testing.results import make_checkpoint, make_run

TEST_ID = "tests/test_checkpoint_1.py::test_a"
ORACLE = Finding(
    Stage.ORACLE,
    Severity.ERROR,
    "demo/tests/test_checkpoint_1.py",
    12,
    f"{TEST_ID} failed with the reference solution: assert 'a|b' == 'A'\nnext line",
    checkpoint="checkpoint_1",
    test=TEST_ID,
)
SLOW = Finding(Stage.TIME, Severity.WARNING, "demo/tests/test_checkpoint_1.py", 5, "slow")
STATIC = Finding(Stage.STATIC, Severity.ERROR, "bad_config/config.yaml", 4, "timeout: *soon*")


def check_run(*problems: tuple[str, CheckReport]) -> RunResult:
    return replace(
        make_run(policy="all-cases"),
        problems=tuple(
            ProblemResult(name, f"/repo/problems/{name}", 1, (), check=report)
            for name, report in problems
        ),
    )


RUN = check_run(
    ("demo", CheckReport((ORACLE, SLOW))),
    ("bad_config", CheckReport((STATIC,), skipped=DYNAMIC_STAGES)),
    ("fine", CheckReport((SLOW,))),
)


def test_a_finding_on_one_line_where_it_is() -> None:
    problem = RUN.problems[0]
    assert finding_line(problem, ORACLE) == (
        f"/repo/problems/demo/tests/test_checkpoint_1.py:12: error: [oracle] {TEST_ID} failed "
        "with the reference solution: assert 'a|b' == 'A' next line"
    )
    whole_file = replace(SLOW, line=None)
    assert finding_line(problem, whole_file).startswith(
        "/repo/problems/demo/tests/test_checkpoint_1.py: warning: [time] "
    )


def test_the_report_lists_the_findings_then_each_problem_s_verdict() -> None:
    report = render_check_report(RUN, Path("out/results.json"), fail_on=DEFAULT_FAIL_ON)
    lines = report.splitlines()
    assert lines[1].startswith("/repo/problems/demo/tests/test_checkpoint_1.py:12: error:")
    assert "demo        FAILED: oracle 1 error; time 1 warning" in lines
    assert (
        "bad_config  FAILED: static 1 error; not run: collection, oracle, empty, flaky, time"
    ) in lines
    assert "fine        passed: time 1 warning" in lines
    assert lines[-4:] == [
        "Oracle policy all-cases: every test passes; 1 oracle run of each checkpoint; 1.0 s",
        rules_line("1.0"),
        "Verdict: FAILED (1 of 3 problems sound)",
        "Results: out/results.json",
    ]


def test_the_summary_has_a_row_per_problem_and_escapes_what_the_problems_say() -> None:
    summary = render_check_summary(RUN)
    assert summary.startswith("## ❌ FAILED (1 of 3 problems sound)\n")
    assert "2 errors, 2 warnings." in summary
    assert "| demo | ✅ | ✅ | ❌ 1 | ✅ | ✅ | ⚠️ 1 |" in summary
    assert "| bad\\_config | ❌ 1 |" in summary
    assert "| fine | ✅ | ✅ | ✅ | ✅ | ✅ | ⚠️ 1 |" in summary
    assert "- ❌ **static** bad\\_config/config.yaml:4: timeout: \\*soon\\*" in summary
    assert "assert &#x27;a\\|b&#x27; == &#x27;A&#x27; next line" in summary
    assert "### fine: ✅ sound" in summary


def test_nothing_to_check(tmp_path: Path) -> None:
    run = check_run()
    assert write_run_files(run, tmp_path, render=render_check_summary) is None
    assert (tmp_path / "summary.md").read_text().startswith("## ✅ Nothing to check\n")
    assert "No problem to check" in render_check_report(run, None, fail_on=DEFAULT_FAIL_ON)
    assert exit_code(run, DEFAULT_FAIL_ON) is ExitCode.PASSED


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (CheckReport((SLOW,)), ExitCode.PASSED),
        (CheckReport((SLOW, ORACLE)), ExitCode.FAILED),
        (CheckReport((ORACLE,), infrastructure=("demo / checkpoint_1 oracle: x",)), 3),
    ],
)
def test_the_exit_code(report: CheckReport, expected: ExitCode) -> None:
    assert exit_code(check_run(("demo", report)), DEFAULT_FAIL_ON) == expected


# fail_on -> (exit code, the console's Verdict line, the summary's heading) of RUN: the same
# words as an evaluation's (exit_status.run_headline), following the exit code.
HEADLINES = {
    "policy": (
        1,
        "Verdict: FAILED (1 of 3 problems sound)",
        "## ❌ FAILED (1 of 3 problems sound)",
    ),
    "regressions": (
        0,
        "Verdict: no regressions (no baseline to compare with; 1 of 3 problems sound)",
        "## ✅ no regressions (no baseline to compare with; 1 of 3 problems sound)",
    ),
    "never": (
        0,
        "Verdict: 1 of 3 problems sound (not failing the run: --fail-on never)",
        "## 1 of 3 problems sound (not failing the run: --fail-on never)",
    ),
}


@pytest.mark.parametrize("fail_on", list(HEADLINES))
def test_the_headlines_follow_the_exit_code(fail_on: str) -> None:
    code, verdict, heading = HEADLINES[fail_on]
    assert exit_code(RUN, fail_on) == code
    assert verdict in render_check_report(RUN, None, fail_on=fail_on).splitlines()
    assert render_check_summary(RUN, fail_on=fail_on).splitlines()[0] == heading


def test_an_infrastructure_failure_is_not_a_pass() -> None:
    stopped = check_run(("demo", CheckReport((), infrastructure=("demo / checkpoint_1: x",))))
    assert exit_code(stopped, "never") is ExitCode.INFRASTRUCTURE
    report = render_check_report(stopped, None, fail_on="never")
    assert "Verdict: FAILED (0 of 1 problem sound)" in report.splitlines()
    assert render_check_summary(stopped, fail_on="never").startswith(
        "## ❌ FAILED (0 of 1 problem sound)\n"
    )


def test_annotations_point_into_the_workspace_errors_first_within_github_s_limits() -> None:
    many = tuple(replace(ORACLE, line=n) for n in range(1, 13))
    run = check_run(
        ("demo", CheckReport((SLOW, *many), infrastructure=("demo / checkpoint_1 oracle: x",)))
    )
    lines = finding_annotations(run, Path("/repo"))
    assert len(lines) == MAX_ANNOTATIONS + 1
    assert lines[0] == "::error title=demo · infrastructure::demo / checkpoint_1 oracle: x"
    assert lines[1] == (
        "::error title=demo · oracle,file=problems/demo/tests/test_checkpoint_1.py,line=1::"
        f"{TEST_ID} failed with the reference solution: assert 'a|b' == 'A'%0Anext line"
    )
    assert lines[-1] == (
        "::warning title=demo · time,file=problems/demo/tests/test_checkpoint_1.py,line=5::slow"
    )
    outside = finding_annotations(run, Path("/elsewhere"))
    assert "file=" not in outside[1]


def test_the_summary_command_renders_a_check_s_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_run_files(RUN, tmp_path, render=render_check_summary)
    assert path is not None
    assert main(["summary", str(path)]) == 0
    assert capsys.readouterr().out == render_check_summary(RUN, reports_folder=tmp_path)


def test_the_report_gives_each_reference_solution_s_code_quality() -> None:
    measures = QualityMeasures(0.0727, 0.4322, 0.73, 743, 46, 54, 4, 6, "0.2.0", 1.5)
    first = replace(make_checkpoint(), quality=QualityOutcome(measures))
    second = replace(
        make_checkpoint(name="checkpoint_2"),
        quality=QualityOutcome(None, reason="scb-check did not finish within its time limit"),
    )
    demo = ProblemResult("demo", "/repo/problems/demo", 1, (first, second), check=CheckReport(()))
    run = replace(make_run(policy="all-cases"), problems=(demo,))

    lines = render_check_report(run, None, fail_on=DEFAULT_FAIL_ON).splitlines()

    start = lines.index("Reference solutions' code quality (scb-check):")
    assert lines[start + 1 : start + 3] == [
        "  demo/checkpoint_1  verbosity 0.073  erosion 0.432  743 lines",
        "  demo/checkpoint_2  not measured: scb-check did not finish within its time limit",
    ]


def test_no_quality_lines_when_nothing_was_measured() -> None:
    report = render_check_report(RUN, None, fail_on=DEFAULT_FAIL_ON)
    assert "code quality" not in report
