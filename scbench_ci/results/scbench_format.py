"""SCBench's own result files, in SCBench's exact format: one `evaluation.json` per evaluated
checkpoint and the rows of one `checkpoint_results.jsonl` per run, so that SCBench's metrics
tooling (SprocketLab/slop-code-bench) reads our output as if its own runner had written it. Each
in the format of the runner whose rules decided (`--scbench`): SCBench 1.0's (below, after the
paper's), or the paper's, each difference read from its own rule of `ScbenchRunner`
(`skipped_bucket`, `every_group_counted`, `collection_hash`, `strict_rates`, `bare_report`).

What the paper's SCBench (feeab5a) writes and reads, from its code (the code wins where its docs
differ):

- `evaluation.json` is `CorrectnessResults.to_output_dict()` (`src/slop_code/evaluation/report.py`):
  thirteen keys, in the model's order, `schema_version` first. The model forbids extra keys
  (`extra="forbid"`), so nothing of ours (timestamps, policy, verdict) may be added: SCBench's
  `CorrectnessResults(**data)` would reject the file. `tests` is the compact grouped form,
  `{"<checkpoint>-<GroupType>": {"passed": [ids], "failed": [ids]}}`, where "failed" holds every
  test that did not pass (skipped ones too).
- Beside it, `CorrectnessResults.save` writes `evaluation/stdout.txt`, `evaluation/stderr.txt`
  (the test command's two streams) and `evaluation/report.json` (pytest-json-report's report, as
  SCBench's runner has it written: `--json-report-omit` of traceback, streams, log, collectors and
  warnings, `src/slop_code/evaluation/pytest_runner.py` `_build_pytest_command`). SCBench's `eval`
  (`src/slop_code/entrypoints/commands/eval_run_dir.py`, `_is_evaluation_schema_current`) runs a
  checkpoint again unless `schema_version` is current, its required fields are there and the
  three files exist. Our log holds both streams in one (pytest's output is stdout; what the tests
  print to stderr, pytest captures): it is `stdout.txt` without the runner's own two lines, and
  `stderr.txt` is empty.
- Counts follow SCBench's runner (`src/slop_code/evaluation/pytest_runner.py`): pytest's
  `xfailed` is SCBench's `skipped` and `xpassed` is `passed`; every test counts in `total_counts`,
  only passed ones in `pass_counts`. That is what our `GroupCounts` holds (passed = passed and
  xpassed, total = every test), so the counts come from the checkpoint's groups.
- SCBench has no reruns and no flaky status: its runner runs each test once and files it under
  "passed" or "failed". A flaky test (failed, then passed on a rerun, or passed in only some of
  `--repeat`'s runs) is filed as failed, as the one run SCBench makes could have seen it (our
  first attempt, made as SCBench makes its run, did), unless flaky tests pass (`--flaky-passes`):
  then as passed. Either way it is filed where the checkpoint's counts have it, so the ids agree
  with `pass_counts` and SCBench's metrics read from our files are our own pass rates.
- A row of `checkpoint_results.jsonl` is built by `create_problem_reports`
  (`src/slop_code/entrypoints/evaluation/metrics.py`) from the problem's config, the checkpoint's
  position and `get_evaluation_metrics` (`src/slop_code/metrics/checkpoint/extractors.py`) applied
  to `evaluation.json`. Its other fields come from files we never have: `started`, `ended`,
  `elapsed`, `cost`, `steps` and the token counts from the agent's `inference_result.json`; `loc`,
  lint, complexity and the `delta.*` fields from `quality_analysis/`; `rubric_*` from
  `rubric.jsonl`. SCBench's extractors leave a missing file's keys out of the row, and its
  summary (`src/slop_code/metrics/summary/`) takes only the keys a row has (`chkpt[key] for ...
  if key in chkpt`, `chkpt.get(key, 0)`), so those keys are left out here too: a `null` would
  break its sums and means, a 0 would be a figure nobody measured.

What SCBench 1.0 (0a2e7bec) writes instead, from the same places of its code:

- `evaluation.json` has fourteen keys: `test_collection_hash` after `pytest_collected` (null
  without an inventory). `tests` files each test under `passed`, `failed` (failed and errors) or
  `skipped` (skipped and xfailed), in the order of the run's tests once its inventory is applied
  (`inventory.py`). `pass_counts` and `total_counts` hold all four groups, in `GroupType`'s order
  (Core, Functionality, Regression, Error), 0 included; `pytest_collected`,
  `test_collection_hash` and `infrastructure_failure` are SCBench 1.0's, as the checkpoint's
  `ScbenchRecord` holds them. `CorrectnessResults.from_dir` reads the grouped `tests` back.
- `evaluation/report.json` is pytest-json-report's report without what scbench-ci's runner adds
  to it (each test's `markers`, and with `--reruns` its `reruns` and `rerun_failure`).
- A row of `checkpoint_results.jsonl` (`get_evaluation_metrics`): `strict_pass_rate`,
  `core_pass_rate` and `isolated_pass_rate` (0.0 without tests, Regression left out of the
  isolated one), no `duration`, `total_tests` from `pytest_collected` when the counts hold no
  test; after a checkpoint of the problem that was evaluated before it, the `delta.*` fields
  SCBench computes without the quality files: `delta.loc`, `delta.ast_grep_violations`,
  `delta.churn_ratio`, each 0.0. Its scb-check fields (`_get_scb_check_metrics`) need the
  checkpoint's `snapshot/`, which our output has not: left out, as SCBench leaves them out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from scbench_ci.foundation.layout import PYTEST_LOG
from scbench_ci.foundation.scbench_runner import ScbenchRunner, scbench_runner
from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group, Problem
from scbench_ci.results.model import CheckpointResult, RunResult, TestResult, add_counts
from scbench_ci.results.policy import GroupCounts
from scbench_ci.standalone.pytest_runner import (
    COLLECTED_PREFIX,
    SEAL_PREFIX,
    START_PREFIX,
    read_regular,
)
from scbench_ci.trust.output_folder import write_file
from scbench_ci.trust.seal import MAX_REPORT_BYTES, read_report_files
from scbench_ci.trust.strict_json import JsonError, parse

EVALUATION_FILE = "evaluation.json"
EVALUATION_DIR = "evaluation"
"""SCBench's folder of the test command's output, beside `evaluation.json`."""
EVALUATION_SCHEMA_VERSION = 1
"""SCBench's `EVALUATION_SCHEMA_VERSION` (report.py): its `eval` runs again a checkpoint whose
`evaluation.json` has none or an older one."""
_OMITTED = ("collectors", "warnings")
"""What `--json-report-omit` leaves out of the report itself."""
_OMITTED_FROM_PHASES = ("traceback", "stdout", "stderr", "log")
"""What `--json-report-omit` leaves out of each test's setup, call and teardown."""
_RUNNER_ADDED = ("markers", "reruns", "rerun_failure")
"""What scbench-ci's runner adds to each test of pytest-json-report's report."""
COUNTED_GROUPS = (Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION, Group.ERROR)
"""SCBench's `GroupType` members, in their order: SCBench 1.0 counts each of them."""
DELTA_KEYS = ("delta.loc", "delta.ast_grep_violations", "delta.churn_ratio")
"""The `delta.*` fields SCBench 1.0 computes for a checkpoint after another without the quality
files (`metrics/checkpoint/delta.py`): each 0.0."""
CHECKPOINT_RESULTS_FILE = "checkpoint_results.jsonl"
UNKNOWN_STATE = "unknown"
"""The `state` SCBench writes for a checkpoint its agent run did not record (`run_info.yaml`)."""

GROUP_TYPES: Mapping[Group, str] = {
    Group.CORE: "Core",
    Group.FUNCTIONALITY: "Functionality",
    Group.REGRESSION: "Regression",
    Group.ERROR: "Error",
}
"""SCBench's `GroupType` values for our groups."""

STATUSES: Mapping[Status, str] = {
    Status.PASSED: "passed",
    Status.FAILED: "failed",
    Status.ERROR: "error",
    Status.SKIPPED: "skipped",
    Status.XFAILED: "skipped",
    Status.XPASSED: "passed",
    Status.FLAKY: "failed",
}
"""SCBench's `TestResult.status` for each of our statuses, as its runner maps pytest's outcomes
(flaky: see the module's docstring)."""


def evaluation_json(
    problem: Problem,
    checkpoint: CheckpointResult,
    *,
    entrypoint: str,
    scbench: ScbenchRunner,
    flaky_passes: bool = False,
) -> dict[str, Any] | None:
    """SCBench's `evaluation.json` for one evaluated checkpoint of `problem`, as the runner
    `scbench` writes it; `entrypoint` is the command that runs the submission (what the tests
    got as `--entrypoint`); `flaky_passes` as the checkpoint's counts were made
    (`--flaky-passes`).

    None when pytest never ran to an exit code (the test runner did not start, or the session
    timeout killed it): SCBench requires an integer `pytest_exit_code`, and its own evaluation
    writes no `evaluation.json` for a checkpoint whose tests could not be run.
    `infrastructure_failure` is SCBench's "pytest execution itself failed, not just tests": true
    whenever our run has a failure, which includes SCBench's own cases (exit codes 2 to 5,
    nothing collected); SCBench 1.0's is its own (`ScbenchRecord`).
    """
    if checkpoint.pytest_exit_code is None:
        return None
    # Only SCBench 1.0's rules make a record (`judge_by_1_0`); the paper's take these from
    # the run.
    record = checkpoint.scbench
    buckets = ("passed", "failed", "skipped") if scbench.skipped_bucket else ("passed", "failed")
    pass_counts, total_counts = _counts(checkpoint, every_group=scbench.every_group_counted)
    document: dict[str, Any] = {
        "schema_version": EVALUATION_SCHEMA_VERSION,
        "problem_name": problem.name,
        "problem_version": problem.version,
        "checkpoint_name": checkpoint.name,
        "checkpoint_version": problem.checkpoint(checkpoint.name).version,
        "duration": checkpoint.duration_s,
        "entrypoint": entrypoint,
        "tests": _grouped_tests(checkpoint.tests, flaky_passes, buckets),
        "pass_counts": pass_counts,
        "total_counts": total_counts,
        "pytest_exit_code": checkpoint.pytest_exit_code,
        "pytest_collected": len(checkpoint.tests) if record is None else record.pytest_collected,
    }
    if scbench.collection_hash:
        document["test_collection_hash"] = None if record is None else record.collection_hash
    document["infrastructure_failure"] = (
        checkpoint.failure is not None if record is None else record.infrastructure_failure
    )
    return document


def checkpoint_results_row(
    problem: Problem,
    checkpoint: CheckpointResult,
    *,
    path: str,
    scbench: ScbenchRunner,
    state: str = UNKNOWN_STATE,
    after_another: bool = False,
) -> dict[str, Any]:
    """One line of SCBench's `checkpoint_results.jsonl` for an evaluated checkpoint of `problem`.

    `path`: SCBench's code writes the problem's folder of the run (the folder that holds the
    checkpoint folders); its docs show the checkpoint's folder instead. `idx` is the checkpoint's
    `order`, and `is_first`/`is_last` its place among all the problem's checkpoints (not only the
    evaluated ones), as SCBench computes them. The test fields are those SCBench derives from the
    checkpoint's `evaluation.json`, and are left out, as SCBench leaves them out, when there is
    none (see `evaluation_json`). `after_another`: a checkpoint of the problem before this one in
    its order was evaluated in the run (SCBench 1.0 then adds its `delta.*` fields).
    """
    return _row(
        problem.name,
        problem.version,
        checkpoint,
        order=tuple(c.name for c in problem.checkpoints),
        idx=problem.checkpoint(checkpoint.name).order,
        path=path,
        scbench=scbench,
        state=state,
        after_another=after_another,
    )


def merged_checkpoint_results_rows(run: RunResult, output_dir: Path) -> Iterator[dict[str, Any]]:
    """The rows of `checkpoint_results.jsonl` for a merged run (`merge`), made from its results
    as `checkpoint_results_row` makes them, `path` being the problem's folder in `output_dir`.

    `idx` is config.yaml's `order` for the checkpoint, which results.json does not hold: here it
    is the checkpoint's place (from 1) in the problem's order, the `order` config.yaml gives when
    it gives none or numbers the checkpoints 1, 2, 3...; other numbers (10, 20) are not known.
    """
    scbench = scbench_runner(run.scbench)
    for problem in run.problems:
        order = tuple(
            dict.fromkeys((*problem.checkpoint_order, *(c.name for c in problem.checkpoints)))
        )
        evaluated = {checkpoint.name for checkpoint in problem.checkpoints}
        for checkpoint in problem.checkpoints:
            position = order.index(checkpoint.name)
            yield _row(
                problem.name,
                problem.version,
                checkpoint,
                order=order,
                idx=position + 1,
                path=str(output_dir / problem.name),
                scbench=scbench,
                after_another=any(name in evaluated for name in order[:position]),
            )


def _row(
    problem: str,
    version: int,
    checkpoint: CheckpointResult,
    *,
    order: tuple[str, ...],
    idx: int,
    path: str,
    scbench: ScbenchRunner,
    state: str = UNKNOWN_STATE,
    after_another: bool = False,
) -> dict[str, Any]:
    position = order.index(checkpoint.name)
    row: dict[str, Any] = {
        "problem": problem,
        "version": version,
        "checkpoint": checkpoint.name,
        "path": path,
        "idx": idx,
        "state": state,
        "is_first": position == 0,
        "is_last": position == len(order) - 1,
    }
    if scbench.strict_rates:
        if checkpoint.pytest_exit_code is not None:
            row.update(_evaluation_metrics_1_0(checkpoint))
        if after_another:
            row.update(dict.fromkeys(DELTA_KEYS, 0.0))
    elif checkpoint.pytest_exit_code is not None:
        row.update(_evaluation_metrics(checkpoint))
    return row


def write_evaluation(
    checkpoint_dir: Path,
    document: Mapping[str, Any],
    *,
    scbench: ScbenchRunner,
    stdout: str = "",
    report: Mapping[str, Any] | None = None,
) -> Path:
    """Write `document` as `checkpoint_dir/evaluation.json` and the `evaluation/` folder beside
    it, laid out as SCBench's `CorrectnessResults.save` writes them: `stdout` (the session's
    output), an empty `stderr.txt`, and pytest-json-report's `report` when there is one (as
    the runner `scbench` has it written)."""
    folder = f"{EVALUATION_DIR}/"
    write_file(checkpoint_dir, folder + "stdout.txt", stdout.encode())
    write_file(checkpoint_dir, folder + "stderr.txt", b"")
    if report is not None:
        slim = scbench_pytest_report(report, ours=not scbench.bare_report)
        report_json = json.dumps(slim, indent=2)
        write_file(checkpoint_dir, folder + "report.json", report_json.encode())
    return write_file(checkpoint_dir, EVALUATION_FILE, json.dumps(document, indent=2).encode())


def session_output(checkpoint_dir: Path) -> tuple[str, dict[str, Any] | None]:
    """What `write_evaluation` writes beside `evaluation.json`, from the checkpoint's folder as
    the evaluator filled it: the test session's output (its `pytest.log` without the runner's
    start and seal lines) and pytest-json-report's report (None when unreadable)."""
    log = read_regular(checkpoint_dir / PYTEST_LOG, MAX_REPORT_BYTES)
    text = log.decode("utf-8", errors="replace") if isinstance(log, bytes) else ""
    kept = [
        line
        for line in text.splitlines(keepends=True)
        if not line.startswith((START_PREFIX, SEAL_PREFIX, COLLECTED_PREFIX))
    ]
    data = read_report_files(checkpoint_dir).pytest
    try:
        report = parse(data) if data is not None else None
    except JsonError:
        report = None
    return "".join(kept), report if isinstance(report, dict) else None


def scbench_pytest_report(report: Mapping[str, Any], *, ours: bool = True) -> dict[str, Any]:
    """pytest-json-report's `report` as SCBench's runner has the plugin write it, with
    `--json-report-omit=traceback --json-report-omit=streams --json-report-omit=log
    --json-report-omit=collectors --json-report-omit=warnings`; without `ours`, without what
    scbench-ci's runner adds to each test."""
    slim = {key: value for key, value in report.items() if key not in _OMITTED}
    if isinstance(tests := slim.get("tests"), list):
        slim["tests"] = [
            _slim_test(test, ours) if isinstance(test, dict) else test for test in tests
        ]
    return slim


def _slim_test(test: Mapping[str, Any], ours: bool) -> dict[str, Any]:
    return {
        key: (
            {k: v for k, v in value.items() if k not in _OMITTED_FROM_PHASES}
            if key in ("setup", "call", "teardown") and isinstance(value, dict)
            else value
        )
        for key, value in test.items()
        if ours or key not in _RUNNER_ADDED
    }


def write_checkpoint_results(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write `rows` as a `checkpoint_results.jsonl` file, one JSON object a line.

    SCBench keys the rows of a run by (problem, checkpoint) and keeps only the last of a key, so
    two rows with the same key (two submissions of one checkpoint) are refused: they belong in
    two files.
    """
    lines = []
    seen: set[tuple[Any, Any]] = set()
    for row in rows:
        key = (row["problem"], row["checkpoint"])
        if key in seen:
            raise ValueError(
                f"two rows for problem {key[0]!r}, checkpoint {key[1]!r}: SCBench keeps one"
            )
        seen.add(key)
        lines.append(json.dumps(row) + "\n")
    return write_file(path.parent, path.name, "".join(lines).encode())


def _counts(
    checkpoint: CheckpointResult, *, every_group: bool
) -> tuple[dict[str, int], dict[str, int]]:
    """`pass_counts` and `total_counts`: with `every_group` (SCBench 1.0), all four groups in
    `GroupType`'s order, 0 included; else a key for each group that has tests, as the paper's
    SCBench has them. Its runner leaves a group with no passing test out of `pass_counts`; it is
    written here with 0, which SCBench's model and readers take as they take a missing key, and
    without which one of its reader versions (iterating over `pass_counts`) would drop that
    group's tests."""
    groups = checkpoint.groups
    empty = GroupCounts()
    counted = (
        {GROUP_TYPES[group]: groups.get(group, empty) for group in COUNTED_GROUPS}
        if every_group
        else {GROUP_TYPES[group]: counts for group, counts in groups.items() if counts.total}
    )
    return (
        {name: counts.passed for name, counts in counted.items()},
        {name: counts.total for name, counts in counted.items()},
    )


def _grouped_tests(
    tests: Iterable[TestResult],
    flaky_passes: bool,
    buckets: tuple[str, ...] = ("passed", "failed"),
) -> dict[str, dict[str, list[str]]]:
    """SCBench's compact `tests`: ids by `<checkpoint>-<GroupType>`, then by `buckets`: passed or
    not, or (SCBench 1.0) passed, failed (failed and errors) or skipped. The id is the node id
    without its file, as SCBench's runner takes it."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for test in tests:
        filed = grouped.setdefault(
            f"{test.checkpoint}-{GROUP_TYPES[test.group]}", {bucket: [] for bucket in buckets}
        )
        status = STATUSES[test.status]
        if status == "passed" or (flaky_passes and test.status is Status.FLAKY):
            bucket = "passed"
        elif status == "skipped" and "skipped" in buckets:
            bucket = "skipped"
        else:
            bucket = "failed"
        filed[bucket].append(test.id.split("::", 1)[-1])
    return grouped


def _evaluation_metrics(checkpoint: CheckpointResult) -> dict[str, Any]:
    """The fields SCBench's `get_evaluation_metrics` derives from `evaluation.json`, in its
    order. `checkpoint_pass_rate` leaves Regression tests out."""
    groups = checkpoint.groups
    empty = GroupCounts()
    total = checkpoint.counts
    own = add_counts(counts for group, counts in groups.items() if group is not Group.REGRESSION)
    metrics: dict[str, Any] = {
        "pass_rate": _rate(total),
        "core_pass_rate": _rate(groups.get(Group.CORE, empty)),
        "checkpoint_pass_rate": _rate(own),
        "duration": checkpoint.duration_s,
        "total_tests": total.total,
        "passed_tests": total.passed,
    }
    for group in (Group.CORE, Group.FUNCTIONALITY, Group.ERROR, Group.REGRESSION):
        counts = groups.get(group, empty)
        metrics[f"{group.value.lower()}_total"] = counts.total
        metrics[f"{group.value.lower()}_passed"] = counts.passed
    return metrics


def _evaluation_metrics_1_0(checkpoint: CheckpointResult) -> dict[str, Any]:
    """The fields SCBench 1.0's `get_evaluation_metrics` derives from its `evaluation.json`."""
    groups = checkpoint.groups
    record = checkpoint.scbench
    passed = sum(groups[group].passed for group in COUNTED_GROUPS)
    total = sum(groups[group].total for group in COUNTED_GROUPS)
    if total == 0 and record is not None and record.pytest_collected:
        total = record.pytest_collected
    regression = groups[Group.REGRESSION]
    own_total = total - regression.total
    core = groups[Group.CORE]
    metrics: dict[str, Any] = {
        "strict_pass_rate": passed / total if total > 0 else 0.0,
        "core_pass_rate": core.passed / core.total if core.total > 0 else 0.0,
        "isolated_pass_rate": (passed - regression.passed) / own_total if own_total > 0 else 0.0,
        "total_tests": total,
        "passed_tests": passed,
    }
    for group in (Group.CORE, Group.FUNCTIONALITY, Group.ERROR, Group.REGRESSION):
        metrics[f"{group.value.lower()}_total"] = groups[group].total
        metrics[f"{group.value.lower()}_passed"] = groups[group].passed
    return metrics


def _rate(counts: GroupCounts) -> float:
    """SCBench's pass rate, which is not `GroupCounts.pass_rate`: unrounded (its summary counts a
    checkpoint solved when the rate is close to 1.0, which rounding would make 0.99995), and 0,
    not None, without tests (its summary cannot take a null)."""
    return counts.passed / counts.total if counts.total else 0
