"""The CLI's closing report: the counts, and the run's own text made inert."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.console import render_report
from scbench_ci.problem import load_problem
from scbench_ci.results import Failure, FailureKind, unrun_result
from tests.conftest import ProblemFolder, make_run


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
    report = render_report(result, Path(".scbench/results.json"))
    assert report.endswith(
        "  all                     0/0        -\n"
        "  failure (infrastructure): pytest wrote no report ##\\[error]x\n"
        "    collected 1 item\n"
        "    \\::stop-commands::x\n"
        "      \\::error::indented\n"
        "    ok\n"
        "    \\::error::cr\n"
        "    \\x1b[2K\n"
        "  warning: a warning\n"
        "\\::warning::injected\n"
        "\n"
        "Verdict: FAILED (policy core-cases: there are Core tests and none of them fails)\n"
        "An infrastructure failure stopped the evaluation; see the log tail above.\n"
        "Results: .scbench/results.json\n"
    )
