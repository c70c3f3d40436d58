"""What SCBench 1.0's inventory costs: a checkpoint's wall-clock time under SCBench 1.0's flow
(its `--collect-only` passes, each in a container of its own after the setup commands, then the
run, as `collect_checkpoint_tc` and `PytestRunner.run` do them: re-created by
testing/fidelity/scbench_collection.py and scbench_flow.py), under scbench-ci with nothing
configured (SCBench 1.0's rules: the inventory taken in the run's own session) and under
`--scbench paper` (no inventory). Rounds alternate the three; each figure is the median of its
rounds, with the load average the machine had.

    python benchmarks/inventory_wall.py PROBLEM CHECKPOINT [--rounds N]

The submission is the problem's reference solution (solutions/<checkpoint>); the image SCBench's
evaluation image (scbench-ci's default, as scbench-ci has it here); scbench-ci runs without the
quality measure (SCBench's flow has none).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scbench_ci.executors.docker.image_build import default_image
from testing.fidelity import scbench_collection, scbench_flow


def scbench_1_0_wall(problem: Path, checkpoint: str, image: str) -> float:
    """Staging, every pass in a container of its own (each after the setup), then the run."""
    config = yaml.safe_load((problem / "config.yaml").read_text())
    checkpoints = config["checkpoints"]
    order = sorted(checkpoints, key=lambda name: (checkpoints[name].get("order", 0), name))
    with_prior = checkpoints[checkpoint].get("include_prior_tests", True)
    markers = {name: str(m.get("description", "")) for name, m in config.get("markers", {}).items()}
    entrypoint = f"uv run {config['entry_file']}.py"
    dependencies = list(config.get("test_dependencies") or [])
    prior = order[: order.index(checkpoint)] if with_prior else []
    passes = [(m, checkpoint) for m in scbench_collection.MARKERS] + [(None, p) for p in prior]
    commands = [
        scbench_collection.collect_command(
            checkpoint=name, entrypoint=entrypoint, marker=marker, test_dependencies=dependencies
        )
        for marker, name in passes
    ]
    timeout = checkpoints[checkpoint].get("timeout") or config.get("timeout") or 30
    commands.append(
        scbench_flow.pytest_command(
            entrypoint=entrypoint,
            checkpoint=checkpoint,
            timeout=int(timeout),
            test_dependencies=dependencies,
        )
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="scbench-1.0-") as scratch:
        for index, command in enumerate(commands):
            workspace = Path(scratch) / f"workspace-{index}"
            scbench_flow.stage(
                problem,
                order,
                checkpoint,
                problem / "solutions" / checkpoint,
                workspace,
                markers,
                include_prior_tests=with_prior,
            )
            scbench_flow.run(workspace, image, command, {})
    return time.monotonic() - started


def scbench_ci_wall(problem: Path, checkpoint: str, *options: str) -> float:
    with tempfile.TemporaryDirectory(prefix="scbench-ci-") as output:
        started = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "scbench_ci",
                "evaluate",
                *("--problem", str(problem), "--checkpoint", checkpoint),
                *("--submission", str(problem / "solutions" / checkpoint)),
                *("--output", output, "--no-quality", "--quiet", *options),
            ],
            capture_output=True,
            check=False,
        )
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("checkpoint")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    problem = args.problem.resolve()
    client = docker.from_env()
    image = default_image(client, None).reference
    client.close()
    flows = {
        "SCBench 1.0's flow": lambda: scbench_1_0_wall(problem, args.checkpoint, image),
        "scbench-ci (1.0)": lambda: scbench_ci_wall(problem, args.checkpoint),
        "scbench-ci --scbench paper": lambda: scbench_ci_wall(
            problem, args.checkpoint, "--scbench", "paper"
        ),
    }
    walls: dict[str, list[float]] = {name: [] for name in flows}
    loads = []
    for round_ in range(1, args.rounds + 1):
        for name, flow in flows.items():
            walls[name].append(flow())
            loads.append(os.getloadavg()[0])
            print(f"round {round_}: {name}: {walls[name][-1]:.1f} s", flush=True)
    print(
        f"{problem.name} / {args.checkpoint}, {args.rounds} rounds, load average "
        f"{min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores:"
    )
    for name, seconds in walls.items():
        print(
            f"  {name}: median {statistics.median(seconds):.1f} s "
            f"({', '.join(f'{s:.1f}' for s in seconds)})"
        )


if __name__ == "__main__":
    main()
