"""Record what SCBench 1.0's own code writes for the bundled examples and the inventory's test
problem, as the expectations tests/results/test_scbench_1_0_files.py holds scbench-ci's files to
(tests/data/scbench/v1/).

For each case (a problem, a checkpoint, a submission; `CASES`), SCBench's `run_checkpoint_pytest`
(collection, run and inventory, `evaluation/collection.py`) evaluates it, `CorrectnessResults.save`
writes its files, and `get_evaluation_metrics` (`metrics/checkpoint/extractors.py`) reads them
back; what is kept: `evaluation.json` with its `duration` set to 0, and the metrics' fields. The
code is SCBench's, unchanged, from a checkout you give, in an environment synced from its
`uv.lock` (SCBench is not on PyPI); nothing of it is copied here:

    git -C <slop-code-bench> archive 0a2e7bec | tar -x -C /tmp/scb
    (cd /tmp/scb && UV_PROJECT_ENVIRONMENT=/tmp/scb-venv uv sync --frozen --python 3.12)
    python scripts/scbench_1_0_expectations.py /tmp/scb --python /tmp/scb-venv/bin/python

SCBench's local runtime runs the tests (its Docker runtime would build its own image first): on
this machine, as this user, `uv run` and `uvx` from PATH, which this script puts its own
environment's `bin` first on. A problem's config.yaml that lacks SCBench's required
`description` gets one, in a scratch copy; nothing else of the problems is changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
KEYWORDS = ROOT / "tests/data/inventory/keywords"
TARGET = ROOT / "tests/data/scbench/v1"
CASES = (
    (EXAMPLES / "wordstat", "checkpoint_1", "solutions/checkpoint_1"),
    (EXAMPLES / "wordstat", "checkpoint_2", "solutions/checkpoint_2"),
    (EXAMPLES / "wordstat", "checkpoint_3", "solutions/checkpoint_3"),
    (EXAMPLES / "wordstat", "checkpoint_1", "submissions/broken"),
    (EXAMPLES / "kvserver", "checkpoint_1", "solutions/checkpoint_1"),
    (EXAMPLES / "kvserver", "checkpoint_2", "solutions/checkpoint_2"),
    (EXAMPLES / "marks", "checkpoint_1", "solutions/checkpoint_1"),
    (EXAMPLES / "marks", "checkpoint_2", "solutions/checkpoint_2"),
    (EXAMPLES / "settings", "checkpoint_1", "solutions/checkpoint_1"),
    (EXAMPLES / "jsonlog", "checkpoint_1", "solutions/checkpoint_1"),
    (KEYWORDS, "checkpoint_1", "solutions/checkpoint_1"),
    (KEYWORDS, "checkpoint_10", "solutions/checkpoint_10"),
    (KEYWORDS, "checkpoint_1", "submissions/killer"),
)
"""(problem, checkpoint, submission in the problem's folder)."""
LOCAL_ENVIRONMENT = {
    "type": "local",
    "name": "python",
    "environment": {"include_os_env": True},
    "setup": {"eval_commands": ["uv init", "uv add -r requirements.txt"]},
    "commands": {"entry_file": "{entry_file}.py", "command": "uv run"},
}
"""SCBench's `configs/environments/local-py.yaml`."""
DRIVER = r"""
import json, sys
from pathlib import Path
from slop_code.evaluation.config import ProblemConfig
from slop_code.evaluation.pytest_runner import run_checkpoint_pytest
from slop_code.execution.local_streaming import LocalEnvironmentSpec
from slop_code.metrics.checkpoint.extractors import get_evaluation_metrics

problem_dir, checkpoint_name, submission, out, environment = sys.argv[1:6]
problem = ProblemConfig.from_yaml(Path(problem_dir))
checkpoint = problem.load_checkpoint(checkpoint_name)
spec = LocalEnvironmentSpec(**json.loads(environment))
result = run_checkpoint_pytest(
    submission_path=Path(submission), problem=problem, checkpoint=checkpoint, env_spec=spec
)
result.save(Path(out))
(Path(out) / "metrics.json").write_text(json.dumps(get_evaluation_metrics(Path(out))))
"""


def case_name(checkpoint: str, submission: str) -> str:
    """The case's folder under its problem's: the checkpoint, or `<checkpoint>-<submission>`
    for a submission that is not the checkpoint's reference solution."""
    own = submission == f"solutions/{checkpoint}"
    return checkpoint if own else f"{checkpoint}-{Path(submission).name}"


def record(checkout: Path, python: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(checkout / "src"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    with tempfile.TemporaryDirectory(prefix="scbench-1.0-") as scratch:
        for problem, checkpoint, submission in CASES:
            copy = Path(scratch) / "problems" / problem.name
            if not copy.exists():
                shutil.copytree(problem, copy)
                _describe(copy / "config.yaml")
            out = Path(scratch) / "out" / problem.name / case_name(checkpoint, submission)
            print(f"SCBench 1.0: {problem.name} / {checkpoint} / {submission}", flush=True)
            subprocess.run(
                [
                    python,
                    "-c",
                    DRIVER,
                    str(copy),
                    checkpoint,
                    str(copy / submission),
                    str(out),
                    json.dumps(LOCAL_ENVIRONMENT),
                ],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            target = TARGET / problem.name / case_name(checkpoint, submission)
            target.mkdir(parents=True, exist_ok=True)
            document = json.loads((out / "evaluation.json").read_text())
            document["duration"] = 0
            (target / "evaluation.json").write_text(json.dumps(document, indent=2))
            metrics = json.loads((out / "metrics.json").read_text())
            (target / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    (TARGET / "SOURCE").write_text(
        f"Recorded by scripts/scbench_1_0_expectations.py from SCBench {commit or checkout.name}"
        " (its local runtime).\n"
    )


def _describe(config: Path) -> None:
    """SCBench requires a `description`; the bundled examples have none."""
    text = config.read_text()
    if "\ndescription:" not in f"\n{text}":
        config.write_text(f"description: {config.parent.name}\n{text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="SCBench's sources (its src/ and uv.lock)")
    parser.add_argument("--python", required=True, help="the Python of SCBench's environment")
    args = parser.parse_args()
    record(args.checkout.resolve(), args.python)


if __name__ == "__main__":
    main()
