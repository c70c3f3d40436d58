"""SCBench's check of a checkpoint's saved evaluation, transcribed, for the suite: SCBench is not on
PyPI, so CI cannot import it. From SprocketLab/slop-code-bench at
feeab5ab6a1110c790fbb9b864053100caa4cfb2:

- `src/slop_code/entrypoints/commands/eval_run_dir.py` lines 31-74: `REQUIRED_EVAL_FIELDS`,
  `REQUIRED_EVAL_DIR_FILES` and `_is_evaluation_schema_current`, which decides whether its `eval`
  keeps a checkpoint's evaluation or runs it again (unless `--overwrite`);
- `src/slop_code/evaluation/report.py` line 26: `EVALUATION_SCHEMA_VERSION = 1`.

The same check was run with SCBench's own code on scbench-ci's output (the command is in the
docstring of tests/results/test_scbench_format.py).
"""

from __future__ import annotations

import json
from pathlib import Path

EVALUATION_SCHEMA_VERSION = 1

REQUIRED_EVAL_FIELDS = [
    "problem_name",
    "problem_version",
    "checkpoint_name",
    "checkpoint_version",
    "tests",
    "pass_counts",
    "total_counts",
    "pytest_exit_code",
    "pytest_collected",
    "infrastructure_failure",
]

REQUIRED_EVAL_DIR_FILES = ["stdout.txt", "stderr.txt", "report.json"]


def is_evaluation_schema_current(checkpoint_dir: Path) -> bool:
    """Check if evaluation.json has current schema version and evaluation/ dir is valid."""
    eval_path = checkpoint_dir / "evaluation.json"
    eval_dir = checkpoint_dir / "evaluation"

    if not eval_path.exists():
        return False

    try:
        with eval_path.open() as f:
            data = json.load(f)

        # Check schema version
        schema_version = data.get("schema_version")
        if schema_version is None or schema_version < EVALUATION_SCHEMA_VERSION:
            return False

        # Check required fields exist
        if not all(field in data for field in REQUIRED_EVAL_FIELDS):
            return False

        # Check evaluation/ directory has required files
        if not eval_dir.exists() or not eval_dir.is_dir():
            return False

        return all((eval_dir / f).exists() for f in REQUIRED_EVAL_DIR_FILES)
    except (OSError, json.JSONDecodeError):
        return False
