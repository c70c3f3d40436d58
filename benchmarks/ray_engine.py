"""`--engine ray` against a local run on this machine: wall time, Ray's added cost per task, and
the bytes shipped per job.

    python benchmarks/ray_engine.py [--sets examples,cpu,DIR] [--root DIR] [--no-warm-up]
                                    [--cpu-problems 4] [--cpu-checkpoints 2] [--cpu-tests 3]
                                    [--cpu-seconds 4]

Sets: `examples`, the bundled example problems (9 checkpoints); `cpu`, the CPU-bound set of
benchmarks/load.py (tests counting in a Python loop for about `--cpu-seconds` s each); or a
folder of problems laid out as those are (`<problem>/solutions/<checkpoint>` the submissions),
named by the folder. `--no-warm-up` skips the untimed first run, for a set whose caches an
earlier run filled (a large set's run is long).

The cluster is started here, on this machine, and stopped by its processes (never `ray stop`): a
head with no CPUs and one worker with this machine's cores, so that Ray holds as many one-CPU
tasks at once as `--jobs <cores>` runs locally. Each set is evaluated once untimed (caches
filled), then timed: locally with `--jobs <cores> --cpus 1`, and on the cluster with `--engine ray
--cpus 1`. Per run: wall time; for Ray, its added cost per task (results.json's `ray` phase of each
checkpoint: the task's time seen by the driver less the node's own, that is packing, placing,
moving and unpacking; median and largest) and the bytes per job (the workspace archive sent, the
reports and logs sent back, from the run's `Ray:` line). Exit 1 when a test's outcome differs
between the two.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import generate_cpu
from testing.images import TEST_IMAGE
from testing.paths import EXAMPLES
from testing.ray_cluster import environment, local_ray_cluster

SCBENCH_CI = Path(sys.executable).with_name("scbench-ci")
OUTPUT_TAIL = 3000
TRAFFIC = re.compile(r"Ray: (\d+) task\(s\) on (\d+) node\(s\); (.+) sent and (.+) back a task")


@dataclass(frozen=True)
class Run:
    set_name: str
    engine: str
    wall_s: float
    outcomes: dict[str, list[tuple[str, str]]]
    """Each checkpoint's (test id, status), by `problem/checkpoint`."""
    ray_phases: list[float]
    sent: str = ""
    back: str = ""


def evaluate(set_name: str, problems: Path, engine: str, address: str, output: Path) -> Run:
    shutil.rmtree(output, ignore_errors=True)
    cores = os.cpu_count() or 1
    argv = [str(SCBENCH_CI), "evaluate", "--problem", str(problems), "--checkpoint", "all"]
    argv += ["--submission", f"{problems}/{{problem}}/solutions/{{checkpoint}}"]
    argv += ["--output", str(output), "--executor", "docker", "--image", TEST_IMAGE]
    argv += ["--cpus", "1"]
    if engine == "ray":
        argv += ["--engine", "ray", "--ray-address", address]
    else:
        argv += ["--jobs", str(cores)]
    started = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall_s = time.perf_counter() - started
    results_file = output / "results.json"
    if run.returncode not in (0, 1) or not results_file.is_file():
        sys.exit(
            f"`scbench-ci evaluate` ({engine}) on the {set_name} set exited {run.returncode}:\n"
            f"{run.stdout[-OUTPUT_TAIL:]}\n{run.stderr[-OUTPUT_TAIL:]}"
        )
    results = json.loads(results_file.read_text(encoding="utf-8"))
    checkpoints = [
        (f"{problem['name']}/{checkpoint['name']}", checkpoint)
        for problem in results["problems"]
        for checkpoint in problem["checkpoints"]
    ]
    outcomes = {key: [(t["id"], t["status"]) for t in c["tests"]] for key, c in checkpoints}
    phases = [c["phases"]["ray"] for _, c in checkpoints if "ray" in c["phases"]]
    traffic = TRAFFIC.search(run.stdout)
    sent, back = (traffic.group(3), traffic.group(4)) if traffic else ("", "")
    return Run(set_name, engine, wall_s, outcomes, phases, sent, back)


def table(runs: list[Run]) -> list[str]:
    lines = [
        "| set | checkpoints | local `--jobs N` | `--engine ray` | Ray's cost a task "
        "(median / largest) | sent a job | back a job |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_set: dict[str, dict[str, Run]] = {}
    for run in runs:
        by_set.setdefault(run.set_name, {})[run.engine] = run
    for set_name, pair in by_set.items():
        local, ray = pair["local"], pair["ray"]
        lines.append(
            f"| {set_name} | {len(local.outcomes)} | {local.wall_s:.1f} s | {ray.wall_s:.1f} s "
            f"| {statistics.median(ray.ray_phases):.2f} s / {max(ray.ray_phases):.2f} s "
            f"| {ray.sent} | {ray.back} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="examples,cpu")
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--no-warm-up", action="store_true")
    parser.add_argument("--cpu-problems", type=int, default=4)
    parser.add_argument("--cpu-checkpoints", type=int, default=2)
    parser.add_argument("--cpu-tests", type=int, default=3)
    parser.add_argument("--cpu-seconds", type=float, default=4.0)
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="scbench-ray-bench-"))
    sets = {}
    for name in args.sets.split(","):
        if name == "examples":
            sets[name] = EXAMPLES
        elif name == "cpu":
            sets[name] = generate_cpu(
                root / "cpu-set",
                args.cpu_problems,
                args.cpu_checkpoints,
                args.cpu_tests,
                args.cpu_seconds,
            )
        elif Path(name).is_dir():
            sets[Path(name).name] = Path(name).resolve()
        else:
            sys.exit(f"--sets: {name!r} is neither examples, cpu nor a folder of problems")
    cores = os.cpu_count() or 1
    runs: list[Run] = []
    cluster = local_ray_cluster(docker.from_env(), cpus=cores, kinds=("head", "host"))
    with cluster as nodes, environment(nodes.env):
        address = nodes.cluster.address
        for set_name, problems in sets.items():
            if not args.no_warm_up:
                evaluate(set_name, problems, "ray", address, root / f"{set_name}-warm")
            for engine in ("local", "ray"):
                run = evaluate(set_name, problems, engine, address, root / f"{set_name}-{engine}")
                print(f"{set_name} {engine}: {run.wall_s:.1f} s", flush=True)
                runs.append(run)
    print(f"\nOn {cores} cores, one Ray worker node of {cores} CPUs, tasks of --cpus 1:\n")
    print("\n".join(table(runs)))
    same = True
    for set_name in sets:
        local, ray = (
            next(r for r in runs if (r.set_name, r.engine) == (set_name, e))
            for e in ("local", "ray")
        )
        equal = local.outcomes == ray.outcomes
        same &= equal
        print(f"{set_name}: every test's outcome {'the same' if equal else 'DIFFERS'} on Ray")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
