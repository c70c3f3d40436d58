"""One checkpoint's tests over several runs (`--shards`): what each shard is told, and the shards'
runs merged into the one run an unsharded evaluation would have made.

Each shard is a whole run of the checkpoint (the same workspace, image, user, setup and command)
whose test runner keeps only its part of the collection (`pytest_runner.SHARD_OPTION`): every
shard collects every test and deals the units (a test file, or an outer class of one) alike,
weighted by the seconds they took before when known (`unit_weights`). Merged, the shards' tests
are the collection's, each once, in the order one session runs them; a shard's failure is the
checkpoint's, named by the shard. When the shards' reports do not add up to one collection (they
collected different tests, a test ran in two shards or in none), the shards are not the checkpoint
and `merge_shards` says why: the caller runs it whole instead.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.executors.base import ExecutionResult
from scbench_ci.foundation.layout import TESTS_DIR, WORKSPACE_TESTS_DIR
from scbench_ci.job.reports import Reports, TestOutcome
from scbench_ci.results.failure_detection import detect_failure
from scbench_ci.results.model import Failure, FailureKind
from scbench_ci.standalone.pytest_runner import MAX_SHARDS, SHARD_OPTION
from scbench_ci.trust.seal import Broken, Seal

MAX_WEIGHTS_CHARS = 64 * 1024
"""The weights a shard is told fit one argument of its command line (Linux takes 128 KiB): past
this, only each file's weight is told."""
NO_TESTS_EXIT_CODE = 5
"""pytest's exit code when a session runs no test: a shard dealt no unit."""
_CLASS_LINE = re.compile(rb"^class\s", re.MULTILINE)
_PARALLEL_OPTIONS = (
    "-x",
    "--exitfirst",
    "--maxfail",
    "--sw",
    "--stepwise",
    "--stepwise-skip",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--nf",
    "--new-first",
)
"""pytest options under which a test's run depends on the tests before it: not sharded."""


TestTimes = Callable[[str], Mapping[str, float]]
"""The seconds each test of a checkpoint (by `Job.key`) took before, by test id."""


@dataclass(frozen=True)
class Sharding:
    """How a run's checkpoints are sharded."""

    lease: Callable[[int], AbstractContextManager[int]] = lambda wanted: contextlib.nullcontext(1)
    """Given how many runs a checkpoint could use, how many it gets, held while it runs
    (`--shards N`: at most N; `auto`: `engines.admission.IdleCores`)."""
    durations: TestTimes = lambda key: {}
    """Its baseline's, or an earlier call's of the session."""


def fixed_count(count: int) -> Callable[[int], AbstractContextManager[int]]:
    """`--shards N`: N runs, or as many as there are units when fewer."""
    return lambda wanted: contextlib.nullcontext(max(1, min(count, wanted)))


FINISH_PROJECT = ("uv", "run", "/bin/true")
"""What an earlier test's `uv run` does to the workspace under SCBench's default environment: it
builds the project (`Building workspace ...` on stderr, where a test reading stderr sees it), so
every later `uv run` prints nothing. A shard whose first test is not the collection's runs it
first (`pytest_runner.SHARD_OPTION`), as the cached setup finishes a workspace with a
requirements.txt (`cache_use._RESTORE_DEPENDENCIES`)."""


def shard_argument(
    index: int, count: int, weights: Mapping[str, float], warm_up: Sequence[str] = ()
) -> str:
    """The runner's option that makes a run shard `index` (from 1) of `count`; `warm_up`: what
    it runs first when the collection's first test is another shard's."""
    if not 1 <= index <= count <= MAX_SHARDS:
        raise ValueError(f"shard {index} of {count}")
    told = {"index": index, "count": count, "warm_up": list(warm_up)}
    text = json.dumps({**told, "weights": dict(weights)})
    if len(text) > MAX_WEIGHTS_CHARS:
        files = {unit: seconds for unit, seconds in weights.items() if "::" not in unit}
        text = json.dumps({**told, "weights": files})
    if len(text) > MAX_WEIGHTS_CHARS:
        text = json.dumps(told)
    return f"{SHARD_OPTION}{text}"


def warm_up_for(default_environment: bool, entrypoint: str) -> tuple[str, ...]:
    """What a shard runs before its tests when the collection's first test is another shard's:
    FINISH_PROJECT under SCBench's default environment, where the tests start the submission
    with `uv run`; else nothing."""
    words = entrypoint.split()
    return FINISH_PROJECT if default_environment and words[:2] == ["uv", "run"] else ()


def unit_weights(durations: Mapping[str, float]) -> dict[str, float]:
    """Each unit's seconds, by every name the runner may give it (`pytest_runner.units_of`:
    `folder/`, `file`, `file::Class`, `file::`), from the seconds each test took before (by its
    id in results.json: `tests/<file>::...`)."""
    weights: dict[str, float] = {}
    for test_id, seconds in durations.items():
        parts = workspace_node_id(test_id).split("[", 1)[0].split("::")
        file = parts[0]
        folder = file.rsplit("/", 1)[0] if "/" in file else ""
        outer = parts[1] if len(parts) > 2 else ""
        for unit in (f"{folder}/", file, f"{file}::{outer}"):
            weights[unit] = weights.get(unit, 0.0) + max(0.0, seconds)
    return {unit: round(seconds, 3) for unit, seconds in weights.items()}


def workspace_node_id(test_id: str) -> str:
    """A test's id as the workspace names it: the inverse of `reports.problem_node_id`."""
    prefix = f"{TESTS_DIR}/"
    if test_id.startswith(prefix):
        return f"{WORKSPACE_TESTS_DIR}/{test_id[len(prefix) :]}"
    return test_id


def most_units(test_files: Iterable[bytes]) -> int:
    """At most how many units the runner can deal from these test files: each file's tests
    outside a class, and each class at the start of a line (a bound: what shares a wider
    fixture is dealt as one)."""
    return sum(1 + len(_CLASS_LINE.findall(source)) for source in test_files)


def unshardable(pytest_args: Sequence[str]) -> str | None:
    """Why tests run with these extra pytest arguments cannot be sharded, if they cannot: each
    test's run would depend on the tests before it (`-x`, `--maxfail`, ...)."""
    for arg in pytest_args:
        name = arg.split("=", 1)[0]
        short = arg.startswith("-") and not arg.startswith("--") and "x" in arg[1:]
        if name in _PARALLEL_OPTIONS or short:
            return f"the pytest argument {arg[:100]!r} makes a test's run depend on those before it"
    return None


@dataclass(frozen=True)
class ShardRun:
    """One shard's run, as the run of a whole checkpoint is judged."""

    execution: ExecutionResult
    seal: Seal | Broken
    reports: Reports | str
    log_dir: Path
    """Its logs' folder (the failure's log tail is read from it)."""
    inventory: bytes | None = None
    """SCBench 1.0's inventory its runner took (of the whole collection, as every shard's)."""


@dataclass(frozen=True)
class MergedRun:
    """The shards as one run: what a whole checkpoint's run is judged from."""

    execution: ExecutionResult
    seal: Seal | Broken
    reports: Reports | str
    log_dir: Path
    deciding: int | None
    """The shard (from 1) whose failure is the checkpoint's, when one failed: the run is then
    that shard's (a session that failed counts no test of the others either, as one session
    would not)."""
    inventory: bytes | None = None
    """The checkpoint's inventory: the shards', which are one."""


def merge_shards(runs: Sequence[ShardRun], session_timeout_s: float) -> MergedRun | str:
    """The shards' runs, in their order, as one run; or why they do not add up to one."""
    if not runs:
        raise ValueError("no shard to merge")
    failing = _failing_shard(runs, session_timeout_s)
    if failing is not None:
        run = runs[failing]
        return MergedRun(
            run.execution, run.seal, run.reports, run.log_dir, failing + 1, run.inventory
        )
    every = [run.reports for run in runs]
    reports = [one for one in every if isinstance(one, Reports)]
    if len(reports) != len(runs):  # a failure, found above
        raise ValueError("an unreadable report is a failure")
    ordered = _ordered_tests(reports, len(runs))
    if isinstance(ordered, str):
        return ordered
    inventory = _one_inventory([run.inventory for run in runs])
    if isinstance(inventory, str):
        return inventory
    ran = [run for run, one in zip(runs, reports, strict=True) if not _empty(one)]
    executions = [run.execution for run in ran] or [runs[0].execution]
    codes = [one.exit_code for one in reports if not _empty(one)]
    exit_code = 1 if 1 in codes else 0
    first = reports[0]
    merged = Reports(
        tests=ordered,
        exit_code=exit_code,
        collection_errors=first.collection_errors,
        problems=tuple(dict.fromkeys(problem for one in reports for problem in one.problems)),
    )
    killed = sum(run.seal.killed for run in runs if isinstance(run.seal, Seal))
    return MergedRun(
        _merged_execution([run.execution for run in runs], executions, exit_code),
        Seal(killed=killed),
        merged,
        runs[0].log_dir,
        None,
        inventory,
    )


def _one_inventory(inventories: Sequence[bytes | None]) -> bytes | str | None:
    """The shards' inventory, when each took the same passes over the same collection (how each
    took them, in its session or by running them, may differ); else why they are not one."""
    if all(each is None for each in inventories):
        return None
    found = []
    for each in inventories:
        try:
            document = json.loads(each) if each is not None else None
        except (ValueError, RecursionError):
            document = None
        if not isinstance(document, dict):
            return "a shard's inventory of the tests is missing or unreadable"
        found.append((document.get("collected"), document.get("passes")))
    if any(one != found[0] for one in found[1:]):
        return "the shards' inventories of the tests differ"
    return inventories[0]


def named_failure(failure: Failure, shard: int, count: int) -> Failure:
    """A shard's failure as the checkpoint's, naming the shard."""
    return Failure(failure.kind, f"shard {shard} of {count}: {failure.message}", failure.log_tail)


def _failing_shard(runs: Sequence[ShardRun], session_timeout_s: float) -> int | None:
    """The first shard whose run failed (the reports unsealed or unusable, pytest stopped,
    timed out, ...), a shard dealt no test aside."""
    for index, run in enumerate(runs):
        failure = detect_failure(
            run.execution, run.seal, run.reports, run.log_dir, session_timeout_s
        )
        if failure is None:
            continue
        if failure.kind == FailureKind.NO_TESTS and _dealt_nothing(run.reports):
            continue
        return index
    return None


def _dealt_nothing(reports: Reports | str) -> bool:
    """A shard whose runner dealt it no unit of a collection that has tests."""
    return (
        isinstance(reports, Reports)
        and reports.shard is not None
        and bool(reports.shard.items)
        and not reports.tests
    )


def _empty(reports: Reports) -> bool:
    return _dealt_nothing(reports) and reports.exit_code == NO_TESTS_EXIT_CODE


def _ordered_tests(reports: Sequence[Reports], count: int) -> tuple[TestOutcome, ...] | str:
    """Every shard's tests, in the collection's order; or why the shards are not one
    collection dealt once."""
    records = []
    for index, one in enumerate(reports, start=1):
        record = one.shard
        if record is None or (record.index, record.count) != (index, count):
            return f"shard {index}'s report does not say it ran shard {index} of {count}"
        records.append(record)
    collection = records[0].items
    position = {test_id: place for place, test_id in enumerate(collection)}
    if len(position) != len(collection):
        return "the collection holds a test id twice"
    for record in records[1:]:
        if set(record.items) != set(collection) or len(record.items) != len(collection):
            differs = sorted(set(record.items) ^ set(collection))
            return (
                f"shards 1 and {record.index} collected different tests "
                f"({_few(differs)}): the collection changes from one session to the next"
            )
    seen: dict[str, int] = {}
    for index, one in enumerate(reports, start=1):
        for test in one.tests:
            if test.node_id in seen:
                return f"{test.node_id} ran in shards {seen[test.node_id]} and {index}"
            seen[test.node_id] = index
    if missing := [test_id for test_id in collection if test_id not in seen]:
        return f"collected but reported by no shard: {_few(missing)}"
    if extra := sorted(test_id for test_id in seen if test_id not in position):
        return f"reported but not collected: {_few(extra)}"
    tests = [test for one in reports for test in one.tests]
    return tuple(sorted(tests, key=lambda test: position[test.node_id]))


def _merged_execution(
    every: Sequence[ExecutionResult], ran: Sequence[ExecutionResult], exit_code: int
) -> ExecutionResult:
    """The shards' executions as one: the longest phase of each, what any of them hit."""
    phases: dict[str, float] = {}
    for execution in every:
        for phase, seconds in execution.phases.items():
            phases[phase] = max(phases.get(phase, 0.0), seconds)
    first = every[0]
    return ExecutionResult(
        exit_code=exit_code,
        setup_exit_code=next(
            (e.setup_exit_code for e in ran if e.setup_exit_code is not None), None
        ),
        timed_out_in=None,
        duration_s=max(execution.duration_s for execution in every),
        leftover_processes=sum(execution.leftover_processes for execution in every),
        limits_hit=tuple(dict.fromkeys(hit for e in every for hit in e.limits_hit)),
        phases=phases,
        image=first.image,
        quality=next((e.quality for e in every if e.quality is not None), None),
    )


def _few(test_ids: Sequence[str]) -> str:
    shown = ", ".join(test_ids[:3])
    return shown if len(test_ids) <= 3 else f"{shown} and {len(test_ids) - 3} more"
