"""What a run under `--memory` holds on the Docker daemon: a submission that brings large files, and
one that writes them while its tests run. Prints, for each, the most its container's cgroup and
its in-memory folders held (testing/held_memory.py) and the checkpoint's outcome.

    python benchmarks/staged_memory.py [--memory 300m] [--staged-mib 1200] [--fitting-mib 60]
        [--written-mib 1200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.held_memory import evaluate_watched
from testing.images import TEST_IMAGE
from testing.problems import ProblemFolder

TESTS = """
import subprocess
import time


def test_runs_the_submission(entrypoint_argv):
    time.sleep(3)
    assert subprocess.run(entrypoint_argv).returncode == 0
"""
WRITES = """
import os
chunk = b"x" * (8 * 1024 * 1024)
with open("written.bin", "wb") as file:
    for _ in range({chunks}):
        file.write(chunk)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", default="300m")
    parser.add_argument("--staged-mib", type=int, default=1200)
    parser.add_argument("--written-mib", type=int, default=1200)
    parser.add_argument("--fitting-mib", type=int, default=60)
    args = parser.parse_args()
    client = docker.from_env()
    image = TEST_IMAGE
    with tempfile.TemporaryDirectory(prefix="staged-memory-") as scratch:
        root = Path(scratch)
        problem = ProblemFolder(
            root / "demo",
            {"name": "demo", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
        )
        problem.write("tests/test_checkpoint_1.py", TESTS)
        cases = {
            f"{args.staged_mib} MiB of files brought": _brought(root / "brought", args.staged_mib),
            f"{args.fitting_mib} MiB of files brought": _brought(
                root / "fitting", args.fitting_mib
            ),
            f"{args.written_mib} MiB written by the tests": _writes(
                root / "writes", args.written_mib
            ),
        }
        for name, submission in cases.items():
            output = root / f"out-{submission.name}"
            run, held = evaluate_watched(
                client,
                [
                    sys.executable, "-m", "scbench_ci", "evaluate",
                    "--problem", str(problem.root), "--checkpoint", "checkpoint_1",
                    "--submission", str(submission), "--output", str(output),
                    "--image", image, "--memory", args.memory, "--jobs", "1", "--quiet",
                ],
                {**os.environ, "XDG_CACHE_HOME": str(root / "cache")},
            )  # fmt: skip
            results = json.loads((output / "results.json").read_text())
            checkpoint = results["problems"][0]["checkpoints"][0]
            failure = checkpoint["failure"] or {}
            print(f"{name}, --memory {args.memory}: exit {run.returncode}, {held}")
            print(f"  failure: {failure.get('kind')}: {failure.get('message')}")
            print(f"  warnings: {checkpoint['warnings']}")
    return 0


def _brought(folder: Path, mib: int) -> Path:
    folder.mkdir()
    (folder / "main.py").write_text("print('ok')\n")
    for number in range(-(-mib // 200)):
        with (folder / f"data{number}.bin").open("wb") as file:
            file.truncate(min(200, mib - 200 * number) * 1024**2)
    return folder


def _writes(folder: Path, mib: int) -> Path:
    folder.mkdir()
    (folder / "main.py").write_text(WRITES.format(chunks=mib // 8))
    return folder


if __name__ == "__main__":
    sys.exit(main())
