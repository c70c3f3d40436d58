"""`merge`: the results.json of many jobs (a matrix's shards) as one run, compared with the
baseline, with the history the baseline (or else the shards) carried and each checkpoint's
reports; then results.json, summary.md and SCBench's checkpoint_results.jsonl, as an evaluation
of all of them writes them."""

from __future__ import annotations

from scbench_ci.commands.channels import BaselineSource, Outcome, no_baseline
from scbench_ci.options import MergeOptions
from scbench_ci.outputs.exit_status import exit_code
from scbench_ci.outputs.run_files import write_run_files
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.pipeline.merge import copy_reports, load_shards, merge_runs
from scbench_ci.results.baseline import compared
from scbench_ci.results.carried_history import carried, carried_by_shards, with_history
from scbench_ci.results.scbench_format import (
    CHECKPOINT_RESULTS_FILE,
    merged_checkpoint_results_rows,
    write_checkpoint_results,
)
from scbench_ci.trust.output_folder import prepare_output


def run_merge(options: MergeOptions, *, baseline: BaselineSource = no_baseline) -> Outcome:
    shards = load_shards(options.results)
    earlier = baseline()
    before = (
        carried(earlier.run)
        if earlier is not None
        else carried_by_shards(shard.run for shard in shards)
    )
    result = with_history(
        compared(merge_runs(shards), earlier), options.history, options.commit, before
    )
    output_dir = prepare_output(options.output_dir)
    copy_reports(shards, output_dir)
    write_checkpoint_results(
        output_dir / CHECKPOINT_RESULTS_FILE, merged_checkpoint_results_rows(result, output_dir)
    )
    results_path = write_run_files(
        result,
        output_dir,
        render=summary_renderer(options),
        artifact_name=options.artifact_name,
    )
    return Outcome(result, results_path, exit_code(result, options.fail_on))
