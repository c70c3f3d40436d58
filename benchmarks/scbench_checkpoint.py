"""One checkpoint under SCBench's own package, for benchmarks/against_scbench.py.

Run with the Python of an environment synced from an SCBench checkout's uv.lock (it imports
`slop_code` from that checkout, and nothing of scbench-ci):

    python scbench_checkpoint.py image ENVIRONMENT OUT
    python scbench_checkpoint.py evaluate ENVIRONMENT PROBLEM CHECKPOINT SUBMISSION OUT

`image` writes OUT/image.json: the name SCBench gives its evaluation image for ENVIRONMENT
(`get_base_image`) and, where SCBench labels it (1.0), the label and the hash of SCBench's own
recipe that make `build_base_image` take an image as current.

`evaluate` does what SCBench's `eval` command does for one checkpoint, up to the correctness
results: the problem's ProblemConfig and the environment file loaded by SCBench's loaders,
`ensure_docker_ready` (which finds its image), then `run_checkpoint_pytest` (at 0a2e7bec the
collection passes, the run and the inventory; at feeab5a `PytestRunner.run`). Its
CorrectnessResults are saved as SCBench saves them (`evaluation.json`, `evaluation/`) in OUT,
and OUT/checkpoint.json holds each test (status, group) as SCBench decided it, the counts, the
collection hash, the infrastructure flag, `core-cases` by SCBench's own `PassPolicy.check`, and
the wall time of `run_checkpoint_pytest`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from slop_code.entrypoints.commands import common
from slop_code.entrypoints.config import loader
from slop_code.evaluation import PassPolicy
from slop_code.evaluation.pytest_runner import run_checkpoint_pytest
from slop_code.execution.docker_runtime import images


def _value(item: Any) -> str:
    """An enum's value, or the string pydantic already stored (`use_enum_values`)."""
    return str(getattr(item, "value", item))


def image(environment_file: Path, out: Path) -> None:
    environment = loader.resolve_environment(environment_file)
    label = getattr(images, "BASE_IMAGE_HASH_LABEL", None)
    recipe_hash = images._get_base_image_hash(environment) if label else None
    out.mkdir(parents=True, exist_ok=True)
    (out / "image.json").write_text(
        json.dumps({"name": environment.get_base_image(), "label": label, "hash": recipe_hash})
    )


def evaluate(
    environment_file: Path, problem_path: Path, name: str, submission: Path, out: Path
) -> None:
    problem = common.load_problem_config_or_exit(problem_path)
    environment = loader.resolve_environment(environment_file)
    common.ensure_docker_ready(environment)
    checkpoint = dict(problem.iterate_checkpoint_items())[name]
    started = time.monotonic()
    results = run_checkpoint_pytest(
        submission_path=submission, problem=problem, checkpoint=checkpoint, env_spec=environment
    )
    wall = time.monotonic() - started
    results.save(out)
    tests = {
        f"{test.file_path}::{test.id}": {"status": test.status, "group": _value(test.group_type)}
        for test in results.tests
    }
    summary = {
        "tests": tests,
        "tests_reported": len(results.tests),
        "pass_counts": {_value(group): n for group, n in results.pass_counts.items()},
        "total_counts": {_value(group): n for group, n in results.total_counts.items()},
        "pytest_exit_code": results.pytest_exit_code,
        "pytest_collected": results.pytest_collected,
        "test_collection_hash": getattr(results, "test_collection_hash", None),
        "infrastructure_failure": results.infrastructure_failure,
        "core_cases": PassPolicy.CORE_CASES.check(results.pass_counts, results.total_counts),
        "wall_s": wall,
    }
    (out / "checkpoint.json").write_text(json.dumps(summary, indent=1))


def main(arguments: list[str]) -> None:
    command, *rest = arguments
    if command == "image":
        environment_file, out = rest
        image(Path(environment_file), Path(out))
    elif command == "evaluate":
        environment_file, problem, name, submission, out = rest
        evaluate(Path(environment_file), Path(problem), name, Path(submission), Path(out))
    else:
        raise SystemExit(f"unknown command {command!r}: image or evaluate")


if __name__ == "__main__":
    main(sys.argv[1:])
