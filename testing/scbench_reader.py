"""SCBench's own code reads an output folder of scbench-ci: whether its `eval` keeps each
checkpoint's evaluation or runs it again (`_is_evaluation_schema_current`,
`_is_problem_fully_evaluated`, `_has_outdated_evaluation_schema` of
`entrypoints/commands/eval_run_dir.py`), and whether its `CorrectnessResults` model validates
each `evaluation.json` once its grouped `tests` are set aside (SCBench's own `from_dir` cannot
read that format back either: `tests` is a list in the model and a mapping in the file).

SCBench's files are the unmodified copies in testing/scbench_source/ (or, for another commit,
taken from a clone). The modules they import off the read path (the CLI's other commands,
problem configs, metrics) are empty stand-ins; typer, PyYAML, rich, structlog and pydantic are
the real ones, in an environment uv makes (it needs PyPI once, then uv's cache).

SCBench 1.0 (`read_with_scbench`) is read whole instead: its sources as a checkout has them, in
the environment its `uv.lock` syncs (set up outside this repository), its `eval_run_dir` checks
(1.0 has no `_has_outdated_evaluation_schema`) and `CorrectnessResults.from_dir`, which reads the
grouped `tests` back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

VENDORED = Path(__file__).resolve().parent / "scbench_source"
SCBENCH_FILES = (
    "slop_code/evaluation/report.py",
    "slop_code/logging.py",
    "slop_code/entrypoints/commands/eval_run_dir.py",
)
_ANY_NAME = "def __getattr__(name): return object\n"
STAND_INS = {
    # Packages on the way to the read path, and modules it imports but does not call.
    "slop_code/__init__.py": "",
    "slop_code/entrypoints/__init__.py": "",
    "slop_code/entrypoints/commands/__init__.py": "",
    "slop_code/entrypoints/config/__init__.py": "",
    "slop_code/entrypoints/evaluation/__init__.py": _ANY_NAME,
    "slop_code/entrypoints/evaluation/metrics.py": _ANY_NAME,
    "slop_code/entrypoints/commands/common.py": _ANY_NAME,
    "slop_code/entrypoints/config/loader.py": _ANY_NAME,
    "slop_code/entrypoints/utils.py": _ANY_NAME,
    "slop_code/common.py": _ANY_NAME,
    # The package's __init__ as SCBench has it, less the runner and the problem configs.
    "slop_code/evaluation/__init__.py": (
        "from slop_code.evaluation.report import *  # noqa\n"
        "from slop_code.evaluation.report import EVALUATION_SCHEMA_VERSION, PassPolicy\n"
        "ProblemConfig = object\n"
        "def get_available_problems(*args, **kwargs): return {}\n"
    ),
}
_READ = r"""
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


def vendored(relative: str) -> bytes:
    return (VENDORED / relative).read_bytes()


def from_clone(git_dir: Path, commit: str) -> Callable[[str], bytes]:
    """SCBench's file at `commit` of the clone `git_dir`."""

    def read(relative: str) -> bytes:
        return subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{commit}:src/{relative}"],
            capture_output=True,
            check=True,
        ).stdout

    return read


def stage(root: Path, source: Callable[[str], bytes] = vendored) -> None:
    """SCBench's files, unmodified, and the stand-ins, as a package under `root`."""
    for relative, text in STAND_INS.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    for relative in SCBENCH_FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(source(relative))


def read_output(output: Path, source: Callable[[str], bytes] = vendored) -> dict[str, Any]:
    """What SCBench's code finds in `output` (a folder of `<problem>/<checkpoint>/`), by problem:
    `fully_evaluated`, `outdated`, and by checkpoint `current`, `validates`, `core_cases`,
    `tests`. Raises RuntimeError, with SCBench's traceback, when its code refuses the folder."""
    with tempfile.TemporaryDirectory(prefix="scbench-reader-") as folder:
        stage(Path(folder), source)
        withs = [f"--with={requirement}" for requirement in REQUIREMENTS]
        done = subprocess.run(
            [_uv(), "run", "--no-project", "--quiet", *withs, "python", "-c", _READ, str(output)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": folder},
            timeout=600,
        )
    if done.returncode != 0:
        raise RuntimeError(f"SCBench's reader failed ({done.returncode}):\n{done.stderr[-4000:]}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


_READ_WHOLE = r"""
import json, sys
from pathlib import Path
from slop_code.entrypoints.commands import eval_run_dir
from slop_code.evaluation.report import CorrectnessResults

found = {}
for problem in sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_dir()):
    checkpoints = sorted(p for p in problem.iterdir() if (p / "evaluation.json").is_file())
    if not checkpoints:
        continue
    outdated = getattr(eval_run_dir, "_has_outdated_evaluation_schema", None)
    seen = {
        "fully_evaluated": eval_run_dir._is_problem_fully_evaluated(problem),
        "outdated": bool(outdated and outdated(problem)),
        "checkpoints": {},
    }
    for checkpoint in checkpoints:
        model = CorrectnessResults.from_dir(checkpoint)
        seen["checkpoints"][checkpoint.name] = {
            "current": eval_run_dir._is_evaluation_schema_current(checkpoint),
            "validates": True,
            "core_cases": model.passes_policy("core-cases"),
            "tests": len(model.tests),
            "infrastructure_failure": model.infrastructure_failure,
            "test_collection_hash": getattr(model, "test_collection_hash", None),
        }
    found[problem.name] = seen
print(json.dumps(found, indent=2, sort_keys=True))
"""


def read_with_scbench(output: Path, source: Path, python: str) -> dict[str, Any]:
    """What SCBench's own code, whole (`source`: a checkout with its `src/`; `python`: the
    interpreter of the environment its `uv.lock` syncs), finds in `output`: as `read_output`,
    each `evaluation.json` read by `CorrectnessResults.from_dir`. RuntimeError, with SCBench's
    traceback, when its code refuses the folder."""
    done = subprocess.run(
        [python, "-c", _READ_WHOLE, str(output)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(source / "src")},
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"SCBench's reader failed ({done.returncode}):\n{done.stderr[-4000:]}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def all_current(found: dict[str, Any]) -> bool:
    """SCBench's `eval` keeps every checkpoint it found, and there was one at least."""
    return bool(found) and all(
        seen["fully_evaluated"] and not seen["outdated"] and checkpoint["current"]
        for seen in found.values()
        for checkpoint in seen["checkpoints"].values()
    )


def _uv() -> str:
    """The uv of this environment (the uv package's), else the one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else "uv"
