"""`evaluate`: plan the jobs, run them, compare with the baseline, carry its history forward,
write results.json and summary.md."""

from __future__ import annotations

from collections.abc import Callable

from scbench_ci import evaluation
from scbench_ci.commands.channels import BaselineSource, Echo, Outcome, Warn, no_baseline, say
from scbench_ci.executors.base import EVALUATION_CACHE_SCOPE
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.placement import make_placement
from scbench_ci.results.baseline import baseline_durations, compared
from scbench_ci.results.model import RunResult
from scbench_ci.results.run_history import carried, with_history


def evaluate(
    options: EvaluationOptions,
    *,
    echo: Echo,
    warn: Warn,
    baseline: BaselineSource = no_baseline,
    artifact_name: Callable[[RunResult], str | None] = lambda run: None,
) -> Outcome:
    """`artifact_name`: the artifact the output folder is uploaded as, named once the run's
    problems are known (summary.md names it; None: it names the folder)."""
    plan = evaluation.plan_evaluation(options)
    earlier = baseline()
    placement = make_placement(options, warn, EVALUATION_CACHE_SCOPE)
    with echo() as stream:
        try:
            run = evaluation.evaluate(
                options, plan, placement, stream, durations=baseline_durations(earlier)
            )
        finally:
            placement.close()
        say(stream, placement.report())
    result = with_history(
        compared(run, earlier),
        options.history,
        options.commit,
        carried(earlier.run if earlier else None),
    )
    results_path = write_run_files(
        result,
        options.output_dir,
        render=summary_renderer(options),
        artifact_name=artifact_name(result),
    )
    return Outcome(result, results_path, exit_code(result, options.fail_on))
