"""A reward for a coding agent from scbench-ci's result of its submission (docs/api.md "A reward").

    python docs/examples/reward.py PROBLEM CHECKPOINT SUBMISSION [SUBMISSION ...] [--image IMAGE]

Evaluates each submission against the problem's checkpoint in Docker, each in a run of its own (a
run keeps one result per checkpoint of a problem), and prints one line per submission: its reward
(`-` when there is none) and the submission folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import scbench_ci
from scbench_ci import CheckpointResult, Group, Target


def reward(result: CheckpointResult) -> float | None:
    """1.0 when the checkpoint passes; else the share of its Core tests that passed (0.0 without
    any); None when the tests could not run for a cause outside the submission, which says
    nothing of the agent: retry it or leave the sample out."""
    if result.infrastructure_failure:
        return None
    if result.passed:
        return 1.0
    core = result.groups[Group.CORE]
    return core.passed / core.total if core.total else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description="Print a reward for each submission.")
    parser.add_argument("problem", type=Path)
    parser.add_argument("checkpoint")
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--image", help="the image the tests run in")
    args = parser.parse_args()
    for submission in args.submissions:
        try:
            evaluation = scbench_ci.evaluate(
                [Target(args.problem, args.checkpoint, submission)],
                executor="docker",
                image=args.image,
            )
        except scbench_ci.ScbenchError as error:
            print(f"reward.py: {error}", file=sys.stderr)
            return 2
        (result,) = evaluation.checkpoints
        value = reward(result)
        print(f"{'-' if value is None else f'{value:.3f}'} {submission}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
