"""The Docker executor's overhead per checkpoint, warm: a whole `scbench-ci evaluate` process's
wall time minus pytest's own duration (pytest-report.json's top-level `duration`), with its
phases; and pytest's own duration for the same tests in a plain `docker run --rm` of the image.

    python benchmarks/overhead.py [--repeat N] [--image IMAGE] [--target S]

Two submissions, both wordstat checkpoint_1's reference solution: one with a requirements.txt
(`pyyaml`, so the default environment's setup, `uv init` and `uv add -r requirements.txt`, has
something to do) and one without. Each is evaluated once to warm the caches (not counted), then
N times (default 5), each a separate `python -m scbench_ci evaluate --executor docker` process.
Figures are medians over the N runs; the phases are each checkpoint's `phases` in results.json.

The plain run mounts the cached test runner's environment at the same path, read-only, runs the
setup itself, then the same pytest command, as root, with no limits, the default network and a
bind-mounted workspace: what pytest's own time is without anything scbench-ci adds.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scbench_ci.executors.docker.container_layout import (  # noqa: E402
    CACHED_ENV_VENV,
    CACHED_RUNNER_DIR,
    WORKSPACE_DIR,
)
from scbench_ci.executors.docker.settings import DEFAULT_IMAGE  # noqa: E402
from scbench_ci.job.environment import default_environment  # noqa: E402
from scbench_ci.job.pytest_command import build_test_command  # noqa: E402
from scbench_ci.job.workspace import stage_workspace  # noqa: E402
from scbench_ci.problem.load import load_problem  # noqa: E402

PROBLEM = ROOT / "examples" / "wordstat"
CHECKPOINT = "checkpoint_1"
SOLUTION = PROBLEM / "solutions" / CHECKPOINT
CASES = {"with requirements.txt": "pyyaml\n", "without": None}
TARGET_CASE = "with requirements.txt"
CACHED_RUNNER = re.compile(r"test runner: the cached environment of volume (\S+)")


def submission(folder: Path, requirements: str | None) -> Path:
    target = folder / "submission"
    shutil.copytree(SOLUTION, target)
    if requirements is not None:
        (target / "requirements.txt").write_text(requirements)
    return target


def evaluate_once(submitted: Path, output: Path, image: str) -> dict[str, object]:
    """One CLI process: its wall time, pytest's duration, the phases, its setup.log."""
    shutil.rmtree(output, ignore_errors=True)
    started = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            *("--problem", str(PROBLEM), "--checkpoint", CHECKPOINT),
            *("--submission", str(submitted), "--output", str(output)),
            *("--executor", "docker", "--image", image, "--quiet"),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        check=False,
    )
    wall = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"evaluate exited with {run.returncode}:\n{run.stdout}{run.stderr}")
    results = json.loads((output / "results.json").read_text())
    [checkpoint] = [c for p in results["problems"] for c in p["checkpoints"]]
    artifacts = output / checkpoint.get("artifacts", "")
    report = json.loads((artifacts / "pytest-report.json").read_text())
    return {
        "wall": wall,
        "pytest": float(report["duration"]),
        "phases": checkpoint.get("phases") or {},
        "setup_log": (artifacts / "setup.log").read_text(),
    }


def plain_pytest(folder: Path, requirements: str | None, image: str, runner_volume: str) -> float:
    """pytest's own duration for the same tests in `docker run --rm` of the image."""
    problem = load_problem(PROBLEM)
    checkpoint = problem.checkpoint(CHECKPOINT)
    source = submission(folder / "plain", requirements)
    workspace = folder / "plain-workspace"
    stage_workspace(
        problem, checkpoint, include_prior_tests=True, submission=source, root=workspace
    )
    environment = default_environment(source)
    command = build_test_command(
        problem,
        checkpoint,
        entrypoint=environment.entrypoint(problem.entry_file),
        environment_env=environment.env,
        test_timeout_s=checkpoint.timeout_s,
    )
    pytest = [
        f"{CACHED_RUNNER_DIR}/{CACHED_ENV_VENV}/bin/python",
        "-I",
        "-m",
        "pytest",
        *command.pytest_args,
    ]
    script = " && ".join([*environment.setup_commands, 'exec "$@"']) + " >/dev/null 2>&1"
    client = docker.from_env()
    try:
        client.containers.run(
            image,
            ["/bin/sh", "-c", script, "sh", *pytest],
            working_dir=WORKSPACE_DIR,
            environment=command.variables,
            volumes={
                str(workspace): {"bind": WORKSPACE_DIR, "mode": "rw"},
                runner_volume: {"bind": CACHED_RUNNER_DIR, "mode": "ro"},
            },
            remove=True,
        )
    except docker.errors.ContainerError:
        pass  # a failing test is still a duration
    finally:
        client.close()
    report = json.loads((workspace / ".scbench" / "pytest-report.json").read_text())
    return float(report["duration"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--target", type=float, default=1.0, help="seconds (default 1.0)")
    args = parser.parse_args()

    print(f"wordstat / {CHECKPOINT}, image {args.image}, median of {args.repeat} warm runs")
    overheads: dict[str, float] = {}
    for case, requirements in CASES.items():
        with tempfile.TemporaryDirectory(prefix="scbench-overhead-") as scratch:
            folder = Path(scratch)
            submitted = submission(folder, requirements)
            warm = evaluate_once(submitted, folder / "out", args.image)  # builds the caches
            runs = [
                evaluate_once(submitted, folder / "out", args.image) for _ in range(args.repeat)
            ]
            found = CACHED_RUNNER.search(str(warm["setup_log"]))
            plain = [
                plain_pytest(folder / f"plain-{number}", requirements, args.image, found[1])
                for number in range(args.repeat)
                if found is not None
            ]
        walls = [float(run["wall"]) for run in runs]  # type: ignore[arg-type]
        durations = [float(run["pytest"]) for run in runs]  # type: ignore[arg-type]
        overhead = [wall - duration for wall, duration in zip(walls, durations, strict=True)]
        overheads[case] = statistics.median(overhead)
        print(f"\n{case}:")
        print(f"  whole process      {statistics.median(walls):6.3f} s")
        print(f"  pytest's duration  {statistics.median(durations):6.3f} s")
        print(
            f"  overhead           {overheads[case]:6.3f} s   "
            f"(min {min(overhead):.3f}, max {max(overhead):.3f})"
        )
        phases: dict[str, list[float]] = {}
        for run in runs:
            for phase, seconds in dict(run["phases"]).items():  # type: ignore[call-overload]
                phases.setdefault(phase, []).append(float(seconds))
        if phases:
            print(
                "  phases (median s): "
                + ", ".join(
                    f"{phase} {statistics.median(values):.3f}" for phase, values in phases.items()
                )
            )
        else:
            print("  phases: none in results.json")
        if plain:
            print(f"  pytest's duration in a plain `docker run`: {statistics.median(plain):.3f} s")
        else:
            print("  (no cached test runner found: the plain `docker run` was not measured)")
    met = overheads[TARGET_CASE] <= args.target
    print(
        f"\ntarget: overhead <= {args.target:.1f} s {TARGET_CASE}: "
        f"{overheads[TARGET_CASE]:.3f} s, {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
