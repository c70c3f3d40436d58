"""`plan`: a GitHub Actions matrix of the checkpoints an evaluation would run: one entry per
checkpoint, or shards of balanced length."""

from __future__ import annotations

from typing import Any

from scbench_ci.commands.channels import BaselineSource, no_baseline
from scbench_ci.job.plan import plan_jobs
from scbench_ci.options import PlanOptions
from scbench_ci.pipeline.matrix import checkpoint_matrix, shard_matrix
from scbench_ci.results.baseline import baseline_durations


def run_plan(options: PlanOptions, *, baseline: BaselineSource = no_baseline) -> dict[str, Any]:
    """The matrix (`strategy.matrix`); the baseline's durations balance the shards."""
    planned = plan_jobs(
        options.problems,
        options.checkpoint,
        options.submission,
        options.output_dir,
        options.include_prior_tests,
        select=options.select,
        confine_submissions_to=options.confine_submissions_to,
    )
    if options.shards is None:
        return checkpoint_matrix(planned.jobs)
    return shard_matrix(planned.jobs, options.shards, baseline_durations(baseline()))
