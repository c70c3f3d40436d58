"""`strategy.matrix` for GitHub Actions: one entry per checkpoint, or N shards balanced by time.

Each entry's `select` is what `evaluate --select` (the action's `select` input) takes, so a
matrix job evaluates exactly its part; `merge` puts the parts back together.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

from scbench_ci.foundation.errors import UsageError
from scbench_ci.job.plan import Job, estimated_durations

MAX_MATRIX_JOBS = 256
"""GitHub's limit on the jobs one matrix makes."""


def checkpoint_matrix(jobs: Sequence[Job]) -> dict[str, Any]:
    if len(jobs) > MAX_MATRIX_JOBS:
        raise UsageError(
            f"plan: {len(jobs)} checkpoints make more matrix jobs than GitHub allows "
            f"({MAX_MATRIX_JOBS}); use --shards"
        )
    return {
        "include": [
            {
                "name": f"{job.problem.root.name}-{job.checkpoint.name}",
                "problem": job.problem.root.name,
                "checkpoint": job.checkpoint.name,
                "select": job.key,
            }
            for job in jobs
        ]
    }


def shard_matrix(
    jobs: Sequence[Job], shards: int, durations: Mapping[str, float]
) -> dict[str, Any]:
    """`shards` entries (fewer when there are fewer checkpoints), the checkpoints dealt longest
    first to the least loaded shard (`estimated_durations`)."""
    if shards > MAX_MATRIX_JOBS:
        raise UsageError(f"plan: --shards {shards} is more than GitHub allows ({MAX_MATRIX_JOBS})")
    estimate = estimated_durations(jobs, durations)
    count = min(shards, len(jobs))
    loads = [(0.0, index) for index in range(count)]
    members: list[list[str]] = [[] for _ in range(count)]
    for key in sorted(estimate, key=lambda key: (-estimate[key], key)):
        load, index = heapq.heappop(loads)
        members[index].append(key)
        heapq.heappush(loads, (load + estimate[key], index))
    order = {job.key: position for position, job in enumerate(jobs)}
    return {
        "include": [
            {
                "name": f"shard-{index + 1}-of-{count}",
                "shard": index + 1,
                "select": " ".join(sorted(keys, key=order.__getitem__)),
                "checkpoints": len(keys),
                "estimated_s": round(sum(estimate[key] for key in keys), 1),
            }
            for index, keys in enumerate(members)
        ]
    }
