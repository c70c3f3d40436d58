"""Capture the golden summaries again: run each scenario on the bundled examples in Docker,
normalize its results.json into tests/data/golden/<scenario>/ and render its summary.md there.

    python scripts/golden.py [SCENARIO ...]      (default: every one; needs Docker and the image)

The scenarios (testing/golden.py): single_pass, single_fail, missing_module (a submission that
imports a module it does not ship), multi_problem (every example, every
checkpoint), comparison (a run against a baseline run: regressions and fixes), check
(`scbench-ci check examples/marks`), merge (the two shards of a plan, merged), and scale (made
by testing/golden.py, no run). Only the summaries, from the committed results.json:
`SCBENCH_UPDATE_GOLDEN=1 pytest tests/outputs/test_golden.py`.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.cli import run_cli  # noqa: E402 (the checkout on the path first)
from testing.golden import (  # noqa: E402
    SCALE,
    SCENARIOS,
    Scenario,
    normalized,
    render_summary_file,
    results_text,
    write_scale,
)

EXAMPLES = ROOT / "examples"
WORDSTAT = EXAMPLES / "wordstat"
MARKS = EXAMPLES / "marks"
MISSING_MODULE = "greeting_helpers"
MERGED_PROBLEMS = ("wordstat", "kvserver", "marks")
EVALUATE = ("--executor", "docker", "--quiet")


def scbench(*arguments: str | Path, allowed: tuple[int, ...] = (0, 1)) -> str:
    """`scbench-ci ARGUMENTS` from the checkout; its stdout."""
    print("$ scbench-ci", " ".join(map(str, arguments)), flush=True)
    done = run_cli(*arguments, cwd=ROOT, timeout=None)
    if done.returncode not in allowed:
        sys.exit(f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def evaluate(output: Path, problem: Path, checkpoint: str, submission: str | Path) -> Path:
    scbench(
        "evaluate",
        *("--problem", problem, "--checkpoint", checkpoint, "--submission", submission),
        *("--output", output),
        *EVALUATE,
    )
    return output


def single_pass(scratch: Path) -> Path:
    solution = WORDSTAT / "solutions" / "checkpoint_2"
    return evaluate(scratch / "out", WORDSTAT, "checkpoint_2", solution)


def single_fail(scratch: Path) -> Path:
    broken = WORDSTAT / "submissions" / "broken"
    return evaluate(scratch / "out", WORDSTAT, "checkpoint_1", broken)


def missing_module(scratch: Path) -> Path:
    """marks checkpoint_1 with a submission that imports a module it does not ship: the tests
    that run it fail on its exit status or output, the cause only in its stderr."""
    submission = scratch / "submission"
    shutil.copytree(MARKS / "solutions" / "checkpoint_1", submission)
    entry = submission / "greet.py"
    source = entry.read_text()
    entry.write_text(source.replace("import sys\n", f"import sys\n\nimport {MISSING_MODULE}\n", 1))
    return evaluate(scratch / "out", MARKS, "checkpoint_1", submission)


def multi_problem(scratch: Path) -> Path:
    submission = f"{EXAMPLES}/{{problem}}/solutions/{{checkpoint}}"
    return evaluate(scratch / "out", EXAMPLES, "all", submission)


def comparison(scratch: Path) -> Path:
    """wordstat: checkpoint_1 regresses (solution, then the broken submission), checkpoint_2 is
    fixed (the other way round), checkpoint_3 passes in both."""
    solutions, broken = WORDSTAT / "solutions", WORDSTAT / "submissions" / "broken"
    submissions = {
        "baseline": (solutions / "checkpoint_1", broken, solutions / "checkpoint_3"),
        "current": (broken, solutions / "checkpoint_2", solutions / "checkpoint_3"),
    }
    for run, folders in submissions.items():
        for index, folder in enumerate(folders, start=1):
            shutil.copytree(folder, scratch / "submissions" / run / f"checkpoint_{index}")
    template = scratch / "submissions" / "{run}" / "{{checkpoint}}"
    baseline = evaluate(scratch / "baseline", WORDSTAT, "all", str(template).format(run="baseline"))
    scbench(
        "evaluate",
        *("--problem", WORDSTAT, "--checkpoint", "all"),
        *("--submission", str(template).format(run="current")),
        *("--baseline", baseline / "results.json", "--output", scratch / "out"),
        *EVALUATE,
    )
    return scratch / "out"


def check(scratch: Path) -> Path:
    scbench("check", EXAMPLES / "marks", "--executor", "docker", "--quiet", "--output", scratch)
    return scratch


def merge(scratch: Path) -> Path:
    problems = [part for name in MERGED_PROBLEMS for part in ("--problem", EXAMPLES / name)]
    plan = json.loads(scbench("plan", *problems, "--shards", "2"))
    shards = []
    for shard in plan["include"]:
        output = scratch / shard["name"]
        scbench(
            "evaluate",
            *problems,
            *("--checkpoint", "all", "--select", shard["select"]),
            *("--submission", f"{EXAMPLES}/{{problem}}/solutions/{{checkpoint}}"),
            *("--output", output),
            *EVALUATE,
        )
        shards.append(output)
    scbench("merge", *shards, "--output", scratch / "out")
    return scratch / "out"


RUNS: dict[str, Callable[[Path], Path]] = {
    "single_pass": single_pass,
    "single_fail": single_fail,
    "missing_module": missing_module,
    "multi_problem": multi_problem,
    "comparison": comparison,
    "check": check,
    "merge": merge,
}


def capture(scenario: Scenario) -> None:
    scenario.folder.mkdir(parents=True, exist_ok=True)
    if scenario is SCALE:
        write_scale(scenario.folder)
    else:
        with tempfile.TemporaryDirectory(prefix=f"golden-{scenario.name}-") as scratch:
            output = RUNS[scenario.name](Path(scratch))
            document = json.loads((output / "results.json").read_text())
            scenario.results.write_text(results_text(normalized(document, scratch)))
    scenario.summary.write_text(render_summary_file(scenario))
    print(f"{scenario.folder.relative_to(ROOT)}: results.json, summary.md", flush=True)


def main(names: list[str]) -> int:
    known = {scenario.name: scenario for scenario in SCENARIOS}
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"unknown scenario {unknown[0]!r}: choose from {', '.join(known)}", file=sys.stderr)
        return 2
    for name in names or known:
        capture(known[name])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
