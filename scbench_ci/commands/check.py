"""`check`: each problem's static findings, then the runs of every problem without static errors
through the evaluation pipeline (all problems' jobs side by side), judged stage by stage; then
results.json and summary.md."""

from __future__ import annotations

from functools import partial
from typing import TextIO

from scbench_ci.check.changed import changed_problems
from scbench_ci.check.jobs import check_jobs
from scbench_ci.check.problem_report import has_errors, problem_result, refuse_unusable
from scbench_ci.check.static import static_findings
from scbench_ci.commands.channels import Echo, Outcome, Warn, say
from scbench_ci.executors.base import REVIEW_CACHE_SCOPE
from scbench_ci.foundation.scbench_runner import scbench_runner
from scbench_ci.job.plan import problem_folders
from scbench_ci.options import CheckOptions
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.pipeline.evaluation import RunStart, evaluate_jobs, run_result
from scbench_ci.pipeline.placement import Placement, make_placement
from scbench_ci.results.model import RunResult
from scbench_ci.trust.files import scratch_folder
from scbench_ci.trust.output_folder import prepare_output


def run_check(
    options: CheckOptions, *, echo: Echo, warn: Warn, artifact_name: str | None = None
) -> Outcome:
    """`echo` gets a progress line per run; `artifact_name` as `evaluate`'s. A
    run without problems: `changed_since` selected none."""
    runs = options.runs
    placement = make_placement(runs, warn, REVIEW_CACHE_SCOPE)
    with echo() as stream:
        try:
            result = _checked(options, placement, stream)
        finally:
            placement.close()
        say(stream, placement.report())
    results_path = write_run_files(
        result,
        runs.output_dir,
        render=partial(render_check_summary, fail_on=runs.fail_on),
        artifact_name=artifact_name,
    )
    return Outcome(result, results_path, exit_code(result, runs.fail_on))


def _checked(options: CheckOptions, placement: Placement, echo: TextIO | None) -> RunResult:
    started = RunStart()
    runs = options.runs
    folders = problem_folders(runs.problems)
    if options.changed_since is not None:
        folders = tuple(changed_problems(folders, options.changed_since))
    refuse_unusable(folders)
    if not runs.own_output:
        prepare_output(runs.output_dir, {folder: "the problem" for folder in folders})
    scbench = scbench_runner(runs.scbench)
    statics = [(folder, *static_findings(folder, scbench=scbench)) for folder in folders]
    sound = [
        problem
        for _, findings, problem in statics
        if problem is not None and not has_errors(findings)
    ]
    with scratch_folder("scbench-empty-") as empty:
        jobs = [
            job
            for problem in sound
            for job in check_jobs(
                problem,
                empty=empty,
                repeat=runs.repeat,
                include_prior_tests=runs.include_prior_tests,
                test_timeout_s=runs.test_timeout_s,
                offline=runs.executor_settings.can_cut_network(),
            )
        ]
        # Progress, not the runs' output: the empty submission's expected failures would drown
        # the findings (each run's output is in its log).
        evaluations = evaluate_jobs(runs, jobs, placement, echo, stream=False)
    problems = tuple(
        problem_result(folder, findings, problem, evaluations.results, runs)
        for folder, findings, problem in statics
    )
    return run_result(runs, placement, evaluations, started, problems)
