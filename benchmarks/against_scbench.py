"""A real problem's reference solutions under SCBench's flow and under scbench-ci, both at their
defaults: each test's status and each checkpoint's verdict side by side.

SCBench's flow is the suite's re-creation of it (testing/fidelity/scbench_flow.py) in SCBench's
evaluation image (scbench-ci's default image, as scbench-ci has it here); scbench-ci runs with no
`--image` and no environment file. A checkpoint's SCBench verdict is `core-cases` as SCBench
counts it (every Core test in the total, only `passed` passing), over scbench-ci's groups.

    python benchmarks/against_scbench.py PROBLEM [--checkpoint NAME ...] [--output DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scbench_ci.executors.docker.image_build import default_image
from scbench_ci.executors.docker.image_recipe import recipe
from testing.fidelity import scbench_flow


def _ordered(config: dict[str, Any]) -> list[str]:
    checkpoints = config["checkpoints"]
    return sorted(checkpoints, key=lambda name: (checkpoints[name].get("order", 0), name))


def scbench_report(
    problem: Path, config: dict[str, Any], checkpoint: str, workspace: Path, image: str
) -> Path:
    """The checkpoint's reference solution run under SCBench's flow in `workspace` (staged, then
    one `docker run` with its setup); the pytest-report.json it wrote."""
    markers = {name: str(m.get("description", "")) for name, m in config.get("markers", {}).items()}
    order = _ordered(config)
    scbench_flow.stage(
        problem,
        order,
        checkpoint,
        problem / "solutions" / checkpoint,
        workspace,
        markers,
        include_prior_tests=config["checkpoints"][checkpoint].get("include_prior_tests", True),
    )
    timeout = config["checkpoints"][checkpoint].get("timeout") or config.get("timeout") or 30
    command = scbench_flow.pytest_command(
        entrypoint=f"uv run {config['entry_file']}.py",
        checkpoint=checkpoint,
        timeout=int(timeout),
        test_dependencies=list(config.get("test_dependencies") or []),
    )
    assets = {name: str(asset["path"]) for name, asset in config.get("static_assets", {}).items()}
    variables = scbench_flow.materialize_assets(problem, assets, workspace)
    run = scbench_flow.run(workspace, image, command, variables)
    report = workspace / ".scbench/pytest-report.json"
    if not report.is_file():
        raise SystemExit(f"no report under SCBench's flow:\n{run.output[-3000:]}")
    return report


def under_scbench(
    problem: Path, config: dict[str, Any], checkpoint: str, folder: Path, image: str
) -> dict[str, str]:
    report = scbench_report(problem, config, checkpoint, folder / "scbench" / checkpoint, image)
    # SCBench's ids name its staged folder; scbench-ci's name the problem's tests/ folder.
    staged = f"{scbench_flow.WORKSPACE_TEST_DIR}/"
    return {
        "tests/" + test["nodeid"].removeprefix(staged): test["outcome"]
        for test in json.loads(report.read_text())["tests"]
    }


def under_scbench_ci(
    problem: Path, checkpoint: str, folder: Path
) -> tuple[dict[str, str], dict[str, str], bool, dict[str, Any]]:
    output = folder / "scbench-ci" / checkpoint
    subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            "--problem",
            str(problem),
            "--checkpoint",
            checkpoint,
            "--submission",
            str(problem / "solutions" / checkpoint),
            "--output",
            str(output),
            "--executor",
            "docker",
            "--quiet",
        ],
        check=False,
    )
    results = json.loads((output / "results.json").read_text())
    entry = results["problems"][0]["checkpoints"][0]
    tests = json.loads((output / problem.name / checkpoint / "result.json").read_text())["tests"]
    statuses = {test["id"]: test["status"] for test in tests}
    groups = {test["id"]: test["group"] for test in tests}
    return statuses, groups, bool(entry["passed"]), entry.get("image") or {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("--checkpoint", action="append")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    problem = args.problem.resolve()
    config = yaml.safe_load((problem / "config.yaml").read_text())
    folder = args.output or Path(tempfile.mkdtemp(prefix="against-scbench-"))
    client = docker.from_env()
    image = default_image(client, sys.stderr, recipe()).reference
    client.close()
    print(f"image: {image}")
    for checkpoint in args.checkpoint or _ordered(config):
        started = time.monotonic()
        reference = under_scbench(problem, config, checkpoint, folder, image)
        middle = time.monotonic()
        ours, groups, passed, ran_in = under_scbench_ci(problem, checkpoint, folder)
        ended = time.monotonic()
        core = [status for test, status in reference.items() if groups.get(test) == "Core"]
        scbench_passes = bool(core) and all(status == "passed" for status in core)
        differ = sorted(
            test for test in reference.keys() | ours.keys() if reference.get(test) != ours.get(test)
        )
        counts: dict[str, int] = {}
        for status in reference.values():
            counts[status] = counts.get(status, 0) + 1
        print(
            f"{problem.name}/{checkpoint}: {len(reference)} tests under SCBench {counts}, "
            f"{len(ours)} under scbench-ci; statuses that differ: {len(differ)}; verdict "
            f"SCBench {'PASS' if scbench_passes else 'FAIL'}, scbench-ci "
            f"{'PASS' if passed else 'FAIL'}; {middle - started:.0f}s / {ended - middle:.0f}s; "
            f"image {ran_in.get('name')} {ran_in.get('versions')}"
        )
        for test in differ[:20]:
            print(f"  {test}: SCBench {reference.get(test)}, scbench-ci {ours.get(test)}")


if __name__ == "__main__":
    main()
