"""SCBench's own code reads scbench-ci's output folder: whether its `eval` keeps each checkpoint's
evaluation (`_is_evaluation_schema_current`, `_is_problem_fully_evaluated`,
`_has_outdated_evaluation_schema` of `entrypoints/commands/eval_run_dir.py`), and whether its
`CorrectnessResults` model validates each `evaluation.json` once its grouped `tests` are set
aside (SCBench's own `from_dir` cannot read that format back either: `tests` is a list in the
model and a mapping in the file).

SCBench's files are taken unmodified from a clone of SprocketLab/slop-code-bench (a git
directory) at run time, never copied into this repository: `evaluation/report.py`,
`logging.py` and `entrypoints/commands/eval_run_dir.py`. The modules they import that are not on
the read path (the CLI's other commands, problem configs, metrics) are empty stand-ins; typer,
PyYAML, rich, structlog and pydantic are the real ones, in an environment uv makes.

    python benchmarks/scbench_reader.py OUTPUT [--scbench GITDIR] [--commit REV]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_SCBENCH = Path("/work/.mirror/SprocketLab+slop-code-bench/repo")
SCBENCH_FILES = (
    "src/slop_code/evaluation/report.py",
    "src/slop_code/logging.py",
    "src/slop_code/entrypoints/commands/eval_run_dir.py",
)
STAND_INS = {
    # Packages on the way to the read path, and modules it imports but does not call.
    "slop_code/__init__.py": "",
    "slop_code/entrypoints/__init__.py": "",
    "slop_code/entrypoints/commands/__init__.py": "",
    "slop_code/entrypoints/config/__init__.py": "",
    "slop_code/entrypoints/evaluation/__init__.py": "def __getattr__(name): return object\n",
    "slop_code/entrypoints/evaluation/metrics.py": "def __getattr__(name): return object\n",
    "slop_code/entrypoints/commands/common.py": "def __getattr__(name): return object\n",
    "slop_code/entrypoints/config/loader.py": "def __getattr__(name): return object\n",
    "slop_code/entrypoints/utils.py": "def __getattr__(name): return object\n",
    "slop_code/common.py": "def __getattr__(name): return object\n",
    # The package's __init__ as SCBench has it, less the runner and the problem configs.
    "slop_code/evaluation/__init__.py": (
        "from slop_code.evaluation.report import *  # noqa\n"
        "from slop_code.evaluation.report import EVALUATION_SCHEMA_VERSION, PassPolicy\n"
        "ProblemConfig = object\n"
        "def get_available_problems(*args, **kwargs): return {}\n"
    ),
}
READ = r"""
import json, sys
from pathlib import Path
from slop_code.entrypoints.commands import eval_run_dir
from slop_code.evaluation.report import CorrectnessResults

found = {}
for problem in sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_dir()):
    checkpoints = sorted(p for p in problem.iterdir() if (p / "evaluation.json").is_file())
    if not checkpoints:
        continue
    seen = {
        "fully_evaluated": eval_run_dir._is_problem_fully_evaluated(problem),
        "outdated": eval_run_dir._has_outdated_evaluation_schema(problem),
        "checkpoints": {},
    }
    for checkpoint in checkpoints:
        data = json.loads((checkpoint / "evaluation.json").read_text())
        grouped = data.pop("tests")
        model = CorrectnessResults(**data)
        seen["checkpoints"][checkpoint.name] = {
            "current": eval_run_dir._is_evaluation_schema_current(checkpoint),
            "validates": True,
            "core_cases": model.passes_policy("core-cases"),
            "tests": sum(len(ids) for bucket in grouped.values() for ids in bucket.values()),
        }
    found[problem.name] = seen
print(json.dumps(found, indent=2, sort_keys=True))
"""
REQUIREMENTS = ("pydantic", "structlog", "rich", "typer", "pyyaml")


def stage(scbench: Path, commit: str, root: Path) -> None:
    """SCBench's files, unmodified, and the stand-ins, as a package under `root`."""
    for relative, text in STAND_INS.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    for path in SCBENCH_FILES:
        source = subprocess.run(
            ["git", "--git-dir", str(scbench), "show", f"{commit}:{path}"],
            capture_output=True,
            check=True,
        ).stdout
        target = root / path.removeprefix("src/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--scbench", type=Path, default=DEFAULT_SCBENCH)
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "--git-dir", str(args.scbench), "rev-parse", args.commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="scbench-reader-") as folder:
        stage(args.scbench, commit, Path(folder))
        withs = [f"--with={requirement}" for requirement in REQUIREMENTS]
        done = subprocess.run(
            [_uv(), "run", "--no-project", "--quiet", *withs, "python", "-c", READ, args.output],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": folder},
        )
    print(f"SCBench {commit}")
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr[-3000:])
    found = json.loads(done.stdout or "{}")
    current = all(
        seen["fully_evaluated"] and not seen["outdated"] and checkpoint["current"]
        for seen in found.values()
        for checkpoint in seen["checkpoints"].values()
    )
    sys.exit(0 if found and current else 1)


def _uv() -> str:
    """The uv of this environment (the uv package's), else the one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"


if __name__ == "__main__":
    main()
