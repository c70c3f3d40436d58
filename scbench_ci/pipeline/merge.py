"""Many runs' results (the shards of a matrix) as the one run that would have evaluated them all.

Each problem's checkpoints are put back in the problem's order, problems in name order (as a
folder of problems is evaluated); two shards that both evaluated one checkpoint, or that were
judged by different rules (policy, reruns, repeat, flaky tests passing, SCBench's runner), cannot
be merged, nor can a `check` run's results (its verdict is the problem's findings, not its
checkpoints').
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from scbench_ci.foundation.errors import UsageError
from scbench_ci.results.file import load_results
from scbench_ci.results.model import CheckpointResult, ProblemResult, RunResult
from scbench_ci.trust.output_folder import write_file
from scbench_ci.trust.untrusted_tree import Kind, UntrustedTree, UntrustedTreeError


@dataclass(frozen=True)
class Shard:
    source: str
    """The results.json it was read from."""
    run: RunResult


def load_shards(files: Sequence[Path]) -> list[Shard]:
    """Each results file once, however it is named."""
    unique = dict.fromkeys(file.resolve() for file in files)
    return [Shard(str(file), load_results(file)) for file in unique]


def copy_reports(shards: Sequence[Shard], output_dir: Path) -> None:
    """Each checkpoint's folder of reports, copied from beside its shard's results.json."""
    for shard in shards:
        for _, checkpoint in shard.run.checkpoints():
            if checkpoint.artifacts:
                _copy_folder(Path(shard.source).parent, output_dir, checkpoint.artifacts)


def _copy_folder(source_root: Path, target_root: Path, relative: str) -> None:
    """The regular files below `source_root/relative`, read through the guarded tree reader
    (never through a link, within its depth and size caps); a folder that is not a plain
    relative path below both roots (a results.json from an artifact names it) is not copied."""
    parts = Path(relative).parts
    if Path(relative).is_absolute() or not parts or ".." in parts:
        return
    if source_root.resolve() == target_root.resolve():
        return
    with UntrustedTree.opened(source_root) as tree:
        if tree.kind(relative) is not Kind.FOLDER:
            return
        try:
            for entry in tree.walk(relative):
                if entry.kind is not Kind.FILE:
                    continue
                with entry.content() as (content, _):
                    write_file(target_root, entry.path, iter(lambda: content.read(_CHUNK), b""))
        except UntrustedTreeError:
            return  # what is past a cap is not copied; the reports' folder is a courtesy


_CHUNK = 1024 * 1024


def merge_runs(shards: Sequence[Shard]) -> RunResult:
    if not shards:
        raise UsageError("merge: no results to merge")
    for shard in shards:
        if any(problem.check is not None for problem in shard.run.problems):
            raise UsageError(
                f"merge: {shard.source} is a `check` run's results; merge merges evaluations"
            )
    first = shards[0]
    for shard in shards[1:]:
        for rule in ("policy", "reruns", "repeat", "flaky_passes", "scbench"):
            if getattr(shard.run, rule) != getattr(first.run, rule):
                raise UsageError(
                    f"merge: {shard.source} was judged with {rule} "
                    f"{getattr(shard.run, rule)!r}, {first.source} with "
                    f"{getattr(first.run, rule)!r}: the runs cannot be merged"
                )
    problems: dict[str, list[ProblemResult]] = {}
    owners: dict[tuple[str, str], str] = {}
    for shard in shards:
        for problem in shard.run.problems:
            problems.setdefault(problem.name, []).append(problem)
            for checkpoint in problem.checkpoints:
                key = (problem.name, checkpoint.name)
                if key in owners:
                    raise UsageError(
                        f"merge: {problem.name} / {checkpoint.name} is in both {owners[key]} "
                        f"and {shard.source}"
                    )
                owners[key] = shard.source
    starts = [datetime.fromisoformat(shard.run.started_at) for shard in shards]
    ends = [
        start + timedelta(seconds=shard.run.duration_s)
        for start, shard in zip(starts, shards, strict=True)
    ]
    executors = dict.fromkeys(shard.run.executor for shard in shards)
    return RunResult(
        policy=first.run.policy,
        executor="+".join(executors),
        jobs=sum(shard.run.jobs for shard in shards),
        started_at=min(starts).isoformat(timespec="seconds"),
        duration_s=round((max(ends) - min(starts)).total_seconds(), 3),
        problems=tuple(_merged_problem(problems[name]) for name in sorted(problems)),
        tool_versions=first.run.tool_versions,
        reruns=first.run.reruns,
        repeat=first.run.repeat,
        flaky_passes=first.run.flaky_passes,
        scbench=first.run.scbench,
    )


def _merged_problem(parts: list[ProblemResult]) -> ProblemResult:
    order = next((p.checkpoint_order for p in parts if p.checkpoint_order), ())
    checkpoints: list[CheckpointResult] = [c for part in parts for c in part.checkpoints]
    position = {name: index for index, name in enumerate(order)}
    checkpoints.sort(key=lambda c: (position.get(c.name, len(position)), c.name))
    first = parts[0]
    return ProblemResult(
        name=first.name,
        path=first.path,
        version=first.version,
        checkpoints=tuple(checkpoints),
        checkpoint_order=order,
    )
