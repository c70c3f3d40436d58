"""scbench-ci against SCBench's own package, checkpoint by checkpoint: the same submissions
evaluated by SCBench's evaluation entry point and by scbench-ci's CLI with nothing configured but
`--scbench`, and what each decided, side by side.

    python benchmarks/against_scbench.py --scbench-source DIR [--scbench-source DIR ...]
        [--python PYTHON] [--problem DIR ...] [--checkpoint NAME ...] [--broken]
        [--output DIR] [--reuse] [--record FILE]

Each `--scbench-source` is a git checkout of SCBench (Dongximing/slop-code-bench or upstream; its
commit names its environment): at 0a2e7bec it is SCBench 1.0, compared with `--scbench 1.0`; at
feeab5a the paper's runner, compared with `--scbench paper` (which one a checkout is: whether it
has `evaluation/collection.py`). Its
environment is synced from its own uv.lock (`uv sync --frozen --python PYTHON`, PYTHON a CPython
3.12) under ~/.cache/scbench-ci/against-scbench/<commit>; its size and the sync's time are
printed. Per checkpoint, SCBench's side is benchmarks/scbench_checkpoint.py in that environment:
SCBench's loaders, its default environment (`configs/environments/docker-python3.12-uv.yaml`) and
`run_checkpoint_pytest`. scbench-ci's side is `python -m scbench_ci evaluate --problem P
--checkpoint C --submission S --scbench CHOICE`.

SCBench builds its evaluation image from its recipe, which fetches nvm, rustup and MinIO from
hosts a sandboxed machine cannot reach: SCBench is given the image scbench-ci ran the same
checkpoint in, tagged with the name SCBench looks for (`slop-code:python3.12`) and, for 1.0, the
label of SCBench's own recipe hash (`io.slop-code.base-image-hash`), so that both evaluate in one
image; the tag is removed at the end.

The problems: each `--problem` (a problem folder with `solutions/<checkpoint>`), else the bundled
examples. The submissions of a checkpoint: its reference solution, the problem's own
`submissions/*` (the examples' broken ones), and with `--broken` the broken variants of the
reference solution (benchmarks/broken_submissions.py). Printed per checkpoint: each test's status
and group where they differ, the counts, `pytest_collected`, the collection hash, the
infrastructure flag, the verdict (`core-cases`: SCBench's `PassPolicy.check`, scbench-ci's
verdict), pytest's exit code, and both walls; then a table of all. Exit 1 when anything differs.

`--reuse` takes SCBench's result from an earlier run into the same `--output` where it ran in the
image scbench-ci runs in now, on the same problem and submission files (SCBench's wall is then that
run's). `--record FILE` writes what
SCBench decided on each into FILE, keeping its entries for other checkpoints and submissions (the
suite's tests/data/scbench/examples_verdicts.json is such a record).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import broken_submissions  # noqa: E402
import scbench_package  # noqa: E402
from scbench_package import NotCompared  # noqa: E402

from testing.scbench_verdicts import Verdict, differences, from_scbench, from_scbench_ci  # noqa: E402

EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class Case:
    """One checkpoint and one submission of a problem."""

    problem: Path
    checkpoint: str
    submission: Path
    label: str
    """The submission as the table names it: `solutions/checkpoint_1`, `submissions/broken`,
    `broken:kills-pytest`."""


@dataclass(frozen=True)
class Compared:
    case: Case
    choice: str
    commit: str
    scbench: Verdict
    ours: Verdict
    differences: tuple[str, ...]
    scbench_wall_s: float
    scbench_evaluation_s: float
    scbench_ci_wall_s: float
    load: float
    """The machine's load average (1 minute) when the case started."""


def ordered_checkpoints(problem: Path) -> list[str]:
    checkpoints = yaml.safe_load((problem / "config.yaml").read_text())["checkpoints"]
    return sorted(checkpoints, key=lambda name: (checkpoints[name].get("order", 0), name))


def cases(
    problems: list[Path], only: list[str] | None, broken: bool, scratch: Path
) -> Iterator[Case]:
    for problem in problems:
        entry_file = yaml.safe_load((problem / "config.yaml").read_text())["entry_file"]
        own = sorted(path for path in (problem / "submissions").glob("*") if path.is_dir())
        for checkpoint in ordered_checkpoints(problem):
            if only and checkpoint not in only:
                continue
            solution = problem / "solutions" / checkpoint
            if solution.is_dir():
                yield Case(problem, checkpoint, solution, f"solutions/{checkpoint}")
            for submission in own:
                yield Case(problem, checkpoint, submission, f"submissions/{submission.name}")
            if broken and solution.is_dir():
                for variant in broken_submissions.VARIANTS:
                    target = scratch / "broken" / problem.name / checkpoint / variant
                    if target.is_dir() or broken_submissions.make(
                        solution, entry_file, variant, target
                    ):
                        yield Case(problem, checkpoint, target, f"broken:{variant}")


def under_scbench_ci(case: Case, choice: str, output: Path) -> tuple[Verdict, str, float]:
    """scbench-ci's verdict, the id of the image it ran in, and its wall time (in a fresh
    folder: scbench-ci would reuse what an earlier run signed there)."""
    shutil.rmtree(output, ignore_errors=True)
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            "--problem",
            str(case.problem),
            "--checkpoint",
            case.checkpoint,
            "--submission",
            str(case.submission),
            "--output",
            str(output),
            "--quiet",
            "--scbench",
            choice,
        ],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall_s = time.monotonic() - started
    if not (output / "results.json").is_file():
        raise NotCompared(f"scbench-ci exited with {run.returncode}: {run.stderr.strip()[-500:]}")
    results = json.loads((output / "results.json").read_text())
    (entry,) = results["problems"][0]["checkpoints"]
    image = (entry.get("image") or {}).get("id")
    if not image:
        raise NotCompared(f"{output}: scbench-ci ran in no image ({entry.get('failure')})")
    return from_scbench_ci(output, case.problem.name, case.checkpoint), image, wall_s


@dataclass
class ScbenchImage:
    """The image SCBench is given: the one scbench-ci ran in, under SCBench's name (tagged
    again when the runner or scbench-ci's image changes)."""

    folder: Path
    provided: tuple[str, str, str] | None = None
    """The runner's choice, the image's id, SCBench's name for it."""

    def named_for(self, environment: scbench_package.Environment, image_id: str) -> str:
        if self.provided is None or self.provided[:2] != (environment.choice, image_id):
            name = scbench_package.provide_image(environment, image_id, self.folder)
            self.provided = (environment.choice, image_id, name)
            print(f"SCBench's image {name}: scbench-ci's {image_id[:19]}, tagged for it")
        return self.provided[2]

    def remove(self) -> None:
        if self.provided is not None:
            scbench_package.remove_image(self.provided[2])


def compare(
    environment: scbench_package.Environment,
    case: Case,
    image: ScbenchImage,
    folder: Path,
    reuse: bool,
) -> Compared:
    """One case under scbench-ci, then under SCBench in the image scbench-ci ran in (tagged for
    SCBench only when SCBench runs: a case taken from an earlier run tags nothing)."""
    load = os.getloadavg()[0]
    where = folder / environment.choice / case.problem.name / case.checkpoint
    where = where / case.label.replace("/", "-").replace(":", "-")
    ours, image_id, ours_wall = under_scbench_ci(case, environment.choice, where / "scbench-ci")
    inputs = scbench_package.inputs_digest(case.problem, case.submission)
    evaluated = scbench_package.earlier(where / "scbench", image_id, inputs) if reuse else None
    if evaluated is None:
        evaluated = scbench_package.evaluate(
            environment,
            scbench_package.for_scbench(case.problem, folder / "problems"),
            case.checkpoint,
            case.submission,
            where / "scbench",
            image.named_for(environment, image_id),
            image_id,
            inputs,
        )
    scbench = from_scbench(evaluated.checkpoint)
    return Compared(
        case,
        environment.choice,
        environment.commit,
        scbench,
        ours,
        tuple(differences(scbench, ours)),
        evaluated.wall_s,
        float(evaluated.checkpoint["wall_s"]),
        ours_wall,
        load,
    )


def line(label: str, scbench: object, ours: object, *, same: bool | None = None) -> str:
    mark = "" if (scbench == ours if same is None else same) else "   <- differs"
    return f"  {label:<11} SCBench {scbench}; scbench-ci {ours}{mark}"


def counts(verdict: Verdict) -> str:
    return ", ".join(
        f"{group} {verdict.pass_counts.get(group, 0)}/{verdict.total_counts[group]}"
        for group in verdict.total_counts
    )


def printed(compared: Compared) -> None:
    case, scbench, ours = compared.case, compared.scbench, compared.ours
    print(
        f"{case.problem.name}/{case.checkpoint} {case.label} [{compared.choice}] "
        f"(load average {compared.load:.1f} at its start)"
    )
    tests = [d for d in compared.differences if d.startswith("tests/")]
    print(
        f"  tests       SCBench {len(scbench.tests)}; scbench-ci {len(ours.tests)}; "
        f"{len(tests)} differ"
    )
    for difference in tests[:30]:
        print(f"    {difference}")
    if len(tests) > 30:
        print(f"    ... and {len(tests) - 30} more")
    same = (scbench.pass_counts, scbench.total_counts) == (ours.pass_counts, ours.total_counts)
    print(line("counts", counts(scbench), counts(ours), same=same))
    print(line("collected", scbench.pytest_collected, ours.pytest_collected))
    print(line("hash", scbench.test_collection_hash, ours.test_collection_hash))
    print(line("infra", scbench.infrastructure_failure, ours.infrastructure_failure))
    print(line("core-cases", scbench.core_cases, ours.core_cases))
    print(line("exit code", scbench.pytest_exit_code, ours.pytest_exit_code))
    print(
        f"  wall        SCBench {compared.scbench_wall_s:.1f} s (run_checkpoint_pytest "
        f"{compared.scbench_evaluation_s:.1f} s); scbench-ci {compared.scbench_ci_wall_s:.1f} s",
        flush=True,
    )


def table(rows: list[Compared]) -> None:
    print(
        "\n| choice | checkpoint | submission | tests | differ | verdict SCBench / ours | "
        "infra | hash | SCBench s | scbench-ci s | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        verdicts = f"{_pass(row.scbench.core_cases)} / {_pass(row.ours.core_cases)}"
        infra = f"{row.scbench.infrastructure_failure} / {row.ours.infrastructure_failure}"
        hashes = (row.scbench.test_collection_hash, row.ours.test_collection_hash)
        same_hash = "equal" if hashes[0] == hashes[1] else "differs"
        print(
            f"| {row.choice} | {row.case.problem.name}/{row.case.checkpoint} | {row.case.label} "
            f"| {len(row.scbench.tests)} | {len(row.differences)} | {verdicts} | {infra} "
            f"| {same_hash} | {row.scbench_wall_s:.0f} | {row.scbench_ci_wall_s:.0f} "
            f"| {row.load:.1f} |"
        )


def _pass(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def recorded(path: Path, rows: list[Compared]) -> None:
    """What SCBench decided on each row, into `path`: the entries of an earlier record for other
    checkpoints and submissions are kept."""
    entries = json.loads(path.read_text()) if path.is_file() else []
    new = [
        {
            "choice": row.choice,
            "commit": row.commit,
            "problem": row.case.problem.name,
            "checkpoint": row.case.checkpoint,
            "submission": row.case.label,
            "verdict": row.scbench.to_json(),
        }
        for row in rows
    ]
    replaced = {_entry_key(entry) for entry in new}
    kept = [entry for entry in entries if _entry_key(entry) not in replaced]
    merged = sorted(kept + new, key=_entry_key)
    path.write_text(json.dumps(merged, indent=1) + "\n")


def _entry_key(entry: dict[str, Any]) -> tuple[str, str, str, str]:
    return (entry["choice"], entry["problem"], entry["checkpoint"], entry["submission"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scbench-source", type=Path, action="append", required=True)
    parser.add_argument(
        "--python",
        default="3.12",
        help="the CPython 3.12 SCBench's environments are made with (uv's --python)",
    )
    parser.add_argument("--problem", type=Path, action="append")
    parser.add_argument("--checkpoint", action="append")
    parser.add_argument("--broken", action="store_true")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--record", type=Path)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take SCBench's result from --output where an earlier run left one made in the "
        "image scbench-ci runs in now, on the same problem and submission",
    )
    args = parser.parse_args()
    folder = (args.output or Path(tempfile.mkdtemp(prefix="against-scbench-"))).resolve()
    problems = [p.resolve() for p in args.problem or sorted(EXAMPLES.iterdir()) if p.is_dir()]
    environments = []
    for source in args.scbench_source:
        environment = scbench_package.synced(source, args.python)
        print(
            f"SCBench {environment.commit[:8]} ({environment.choice}) from {environment.source}: "
            f"environment {environment.python.parents[1]}, {environment.size_bytes / 2**20:.0f} "
            f"MiB, synced in {environment.sync_s:.1f} s",
            flush=True,
        )
        environments.append(environment)
    image = ScbenchImage(folder / "image")
    rows: list[Compared] = []
    not_compared = 0
    try:
        for environment in environments:
            for case in cases(problems, args.checkpoint, args.broken, folder):
                try:
                    compared = compare(environment, case, image, folder, args.reuse)
                except NotCompared as reason:
                    print(
                        f"{case.problem.name}/{case.checkpoint} {case.label} not compared: {reason}"
                    )
                    not_compared += 1
                    continue
                printed(compared)
                rows.append(compared)
    finally:
        image.remove()
    if args.record:
        recorded(args.record, rows)
    table(rows)
    print(f"\nfiles: {folder}")
    return 1 if not_compared or any(row.differences for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
