"""Many evaluations: `--jobs 1` against `--jobs 2`, against an SCBench-style flow, and memory.

    python benchmarks/many_evaluations.py [--problems 10] [--checkpoints 3] [--tests 50]
                                          [--image IMAGE] [--subset 10]

On a generated problem set (benchmarks/problem_set.py: P problems x C checkpoints x T tests, each
test starting the submission through `uv run main.py`, every solution with a requirements.txt),
warm (one untimed run first fills the caches), it measures:

- `scbench-ci evaluate --jobs 1` and `--jobs 2` over the first `--subset` checkpoints and over
  the whole set: wall time of the process, and the speed-up;
- an SCBench-style flow on the same checkpoints: per checkpoint, one fresh `docker run` of the
  same image with the workspace bind-mounted, `uv init` + `uv add -r requirements.txt`, then
  `uvx --with=pytest ...` resolving pytest and its plugins each time (downloads cached in a
  volume, as a warm SCBench machine has them), one checkpoint at a time;
- pytest's own time (the sum of pytest-report.json durations) in both, and the overhead per
  checkpoint outside it;
- the evaluator's peak memory (max RSS of the `scbench-ci` process, from /usr/bin/time) for the
  subset and for the whole set: it should not grow with the number of evaluations.

Targets (issue #11): `--jobs 2` >= 1.7x `--jobs 1` on the 10-checkpoint subset, >= 2x the
SCBench-style flow.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problem_set import generate

from scbench_ci.executors.docker.settings import DEFAULT_IMAGE
from scbench_ci.job.pytest_command import PYTEST_PLUGINS

SCBENCH_CACHE_VOLUME = "scbench-ci-benchmark-scbench-style-cache"


@dataclass(frozen=True)
class Run:
    wall_s: float
    pytest_s: float
    checkpoints: int
    peak_rss_mb: float | None = None

    @property
    def overhead_per_checkpoint_s(self) -> float:
        return (self.wall_s - self.pytest_s) / self.checkpoints


def evaluate(problems: list[Path], jobs: int, image: str, output: Path) -> Run:
    """One `scbench-ci evaluate` process over `problems`, every checkpoint."""
    shutil.rmtree(output, ignore_errors=True)
    argv = [sys.executable, "-m", "scbench_ci", "evaluate", "--checkpoint", "all"]
    for problem in problems:
        argv += ["--problem", str(problem)]
    argv += ["--submission", f"{problems[0].parent}/{{problem}}/solutions/{{checkpoint}}"]
    argv += ["--output", str(output), "--jobs", str(jobs), "--image", image, "--quiet"]
    time_file = output.parent / f"{output.name}.rss"
    started = time.perf_counter()
    run = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(time_file), *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"evaluate failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    results = json.loads((output / "results.json").read_text())
    checkpoints = [c for p in results["problems"] for c in p["checkpoints"]]
    pytest_s = sum(
        _pytest_duration(output / c["artifacts"] / "pytest-report.json") for c in checkpoints
    )
    peak_kb = int(time_file.read_text().split()[-1])
    return Run(wall, pytest_s, len(checkpoints), peak_kb / 1024)


def scbench_style(jobs: list[tuple[Path, str]], image: str, scratch: Path) -> Run:
    """The SCBench-style flow over (problem, checkpoint) pairs, one at a time."""
    client = docker.from_env()
    volumes = {SCBENCH_CACHE_VOLUME: {"bind": "/uv-cache", "mode": "rw"}}
    pytest_s = 0.0
    started = time.perf_counter()
    for problem, checkpoint in jobs:
        workspace = scratch / f"{problem.name}-{checkpoint}"
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.copytree(problem / "solutions" / checkpoint, workspace)
        (workspace / "tests").mkdir()
        shutil.copy(problem / "tests/conftest.py", workspace / "tests")
        shutil.copy(problem / f"tests/test_{checkpoint}.py", workspace / "tests")
        withs = " ".join(f"--with={plugin}" for plugin in PYTEST_PLUGINS)
        script = (
            "uv init -q && uv add -q -r requirements.txt && "
            f"uvx {withs} pytest tests/ --entrypoint='uv run main.py' --checkpoint={checkpoint} "
            "--json-report --json-report-file=.scbench/pytest-report.json "
            "--ctrf=.scbench/ctrf-report.json -q -p no:cacheprovider"
        )
        client.containers.run(
            image,
            ["sh", "-c", script],
            volumes={str(workspace): {"bind": "/workspace", "mode": "rw"}, **volumes},
            working_dir="/workspace",
            environment={"HOME": "/tmp", "UV_CACHE_DIR": "/uv-cache", **_index_variables()},
            remove=True,
        )
        pytest_s += _pytest_duration(workspace / ".scbench/pytest-report.json")
    return Run(time.perf_counter() - started, pytest_s, len(jobs))


def _index_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if re.fullmatch(r"(UV|PIP)_[A-Z_]*INDEX[A-Z_]*", k)}


def _pytest_duration(report: Path) -> float:
    return float(json.loads(report.read_text())["duration"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--checkpoints", type=int, default=3)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--subset", type=int, default=10, help="checkpoints in the small set")
    parser.add_argument("--image", default=os.environ.get("SCBENCH_TEST_IMAGE", DEFAULT_IMAGE))
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="scbench-bench-"))
    try:
        folder = generate(scratch, args.problems, args.checkpoints, args.tests)
        problems = sorted(folder.iterdir())
        # The subset: whole problems, about --subset checkpoints.
        subset = problems[: max(1, args.subset // args.checkpoints)]
        pairs = [(p, f"checkpoint_{n}") for p in subset for n in range(1, args.checkpoints + 1)]
        print(
            f"problem set: {len(problems)} problems x {args.checkpoints} checkpoints x "
            f"{args.tests} tests; subset: {len(pairs)} checkpoints; image {args.image}; "
            f"{os.cpu_count()} cores"
        )
        print("warming up (untimed) ...", flush=True)
        evaluate(subset, 2, args.image, scratch / "warm")
        scbench_style(pairs[:1], args.image, scratch / "scbench-warm")

        rows = []
        one = evaluate(subset, 1, args.image, scratch / "jobs1")
        two = evaluate(subset, 2, args.image, scratch / "jobs2")
        style = scbench_style(pairs, args.image, scratch / "scbench")
        rows += [
            ("scbench-ci --jobs 1", one),
            ("scbench-ci --jobs 2", two),
            ("SCBench-style", style),
        ]
        whole_one = evaluate(problems, 1, args.image, scratch / "all1")
        whole_two = evaluate(problems, 2, args.image, scratch / "all2")

        print(f"\n{len(pairs)} checkpoints ({len(subset)} problems):")
        # Overhead (wall minus pytest's own time) means something one evaluation at a time only.
        print(f"  {'flow':<22}{'wall':>9}{'pytest':>9}{'overhead/ckpt':>15}{'peak RSS':>11}")
        for name, run in rows:
            rss = f"{run.peak_rss_mb:.0f} MB" if run.peak_rss_mb else "-"
            serial = "--jobs 2" not in name
            overhead = f"{run.overhead_per_checkpoint_s:.2f}s" if serial else "-"
            print(f"  {name:<22}{run.wall_s:>8.1f}s{run.pytest_s:>8.1f}s{overhead:>15}{rss:>11}")
        speedup = one.wall_s / two.wall_s
        versus = style.wall_s / two.wall_s
        print(f"  --jobs 2 vs --jobs 1: {speedup:.2f}x (target >= 1.7x: {_met(speedup >= 1.7)})")
        print(f"  --jobs 2 vs SCBench-style: {versus:.2f}x (target >= 2x: {_met(versus >= 2)})")
        print(f"  --jobs 1 vs SCBench-style: {style.wall_s / one.wall_s:.2f}x")

        print(f"\nwhole set, {whole_one.checkpoints} checkpoints:")
        print(
            f"  --jobs 1: {whole_one.wall_s:.1f} s wall, pytest {whole_one.pytest_s:.1f} s, "
            f"overhead {whole_one.overhead_per_checkpoint_s:.2f} s/checkpoint, "
            f"peak RSS {whole_one.peak_rss_mb:.0f} MB"
        )
        print(
            f"  --jobs 2: {whole_two.wall_s:.1f} s wall, pytest {whole_two.pytest_s:.1f} s "
            f"(summed over both jobs), peak RSS {whole_two.peak_rss_mb:.0f} MB"
        )
        print(f"  --jobs 2 vs --jobs 1: {whole_one.wall_s / whole_two.wall_s:.2f}x")
        print(
            f"  peak RSS: {one.peak_rss_mb:.0f} MB for {one.checkpoints} checkpoints, "
            f"{whole_one.peak_rss_mb:.0f} MB for {whole_one.checkpoints}"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        client = docker.from_env()
        with contextlib.closing(client), contextlib.suppress(docker.errors.NotFound):
            client.volumes.get(SCBENCH_CACHE_VOLUME).remove(force=True)


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


if __name__ == "__main__":
    main()
