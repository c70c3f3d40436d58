"""`evaluate`: plan the jobs, run them, compare with the baseline, carry its history forward,
write results.json and summary.md; once, or many times over one placement (`EvaluationSession`: the
Python API's session)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from scbench_ci.commands.channels import BaselineSource, Echo, Outcome, Warn, no_baseline, say
from scbench_ci.executors.base import EVALUATION_CACHE_SCOPE
from scbench_ci.job.plan import Plan
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.pipeline import evaluation
from scbench_ci.pipeline.placement import make_placement
from scbench_ci.problem.load import KeptProblems
from scbench_ci.results.baseline import baseline_durations, compared, test_times
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.model import RunResult


class EvaluationSession:
    """Evaluations over one placement, made from the options it is opened with (executor,
    engine, limits): its Docker client, the pre-flight that passed, the containers made ahead
    and the problems loaded are kept from one `run` to the next, which may be called from
    several threads at once; `close` removes what is left."""

    def __init__(self, options: EvaluationOptions, *, warn: Warn, open_ended: bool) -> None:
        """`open_ended`: an unknown number of evaluations will follow (a session): the next
        one's container is made ahead of it. Otherwise only the jobs of each call are."""
        self.placement = make_placement(options, warn, EVALUATION_CACHE_SCOPE)
        self._problems = KeptProblems()
        self._earlier: dict[str, dict[str, float]] = {}
        """Each checkpoint's tests' seconds in this one's earlier runs (`--shards` weights)."""
        self._earlier_lock = threading.Lock()
        if open_ended:
            self.placement.expect(None, 0)

    def run(
        self,
        options: EvaluationOptions,
        *,
        echo: Echo,
        baseline: BaselineSource = no_baseline,
        artifact_name: Callable[[RunResult], str | None] = lambda run: None,
        plan: Plan | None = None,
    ) -> Outcome:
        """One run of `options` (their placement's own are the opening ones'). `plan`: the
        jobs, when already planned from `options`."""
        plan = plan or evaluation.plan_evaluation(options, self._problems.load)
        earlier = baseline()
        from_baseline = test_times(earlier.run if earlier else None)

        def times(key: str) -> dict[str, float]:
            with self._earlier_lock:
                kept = self._earlier.get(key)
            return kept if kept is not None else from_baseline(key)

        with echo() as stream:
            run = evaluation.evaluate_plan(
                options,
                plan,
                self.placement,
                stream,
                durations=baseline_durations(earlier),
                test_times=times,
            )
            say(stream, self.placement.report())
        if options.test_shards != 1:
            ran = test_times(run)
            found = {f"{p.name}/{c.name}": ran(f"{p.name}/{c.name}") for p, c in run.checkpoints()}
            with self._earlier_lock:
                self._earlier.update({key: seen for key, seen in found.items() if seen})
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

    def close(self) -> None:
        self.placement.close()


def run_evaluate(
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
    evaluations = EvaluationSession(options, warn=warn, open_ended=False)
    try:
        return evaluations.run(
            options, echo=echo, baseline=baseline, artifact_name=artifact_name, plan=plan
        )
    finally:
        evaluations.close()
