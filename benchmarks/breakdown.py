"""Where an evaluation's time goes, on short checkpoints: each phase's median and p90, the time
outside pytest's own duration, the process's own time, and the evaluations per minute of each
way of running them, beside SCBench's own flow, in the same run.

    python benchmarks/breakdown.py [--repeat 3] [--jobs 2] [--examples all]
                                   [--problems 2] [--checkpoints 2] [--tests 2]
                                   [--modes batch-1,batch-N,api,session,scbench]
                                   [--no-quality]

The checkpoints: every checkpoint of the examples (examples/, reference solutions), and a
generated set (benchmarks/problem_set.py: P problems x C checkpoints x T tests, each test one
`uv run main.py`, about 0.1 s of pytest with the defaults). Every mode evaluates each of them
once per repeat, after one untimed warm-up of the whole set (the caches filled), one mode after
the other:

- `batch-1`, `batch-N`: one `python -m scbench_ci evaluate --checkpoint all --jobs 1` (or
  `--jobs N`) process over every checkpoint;
- `api`: one Python process calling `scbench_ci.evaluate([target])` once per checkpoint, in a
  loop;
- `session`: the same loop through one `scbench_ci.Session` (`session.evaluate([target])`);
- `scbench`: SCBench's own flow, re-created (testing/fidelity/scbench_flow.py): per checkpoint, the
  workspace staged, then one `docker run` of the same evaluation image running SCBench's setup
  (`uv init`, `uv add -r requirements.txt`) and `uvx ... pytest`.

Figures, per mode: each phase of results.json's `phases` (per checkpoint), `tests - pytest`
(the tests' phase outside pytest's own duration: uvx's resolution, pytest's start-up), `outside
pytest` (every phase but pytest's own duration), and where a mode times each evaluation apart (the
loops, SCBench's flow) or one at a time (`batch-1`): `outside the tests` (the evaluation's whole
wall time minus pytest's duration) and `process's own` (the wall time no phase accounts for:
imports, pre-flight, planning, signing, writing). Then one line per mode: evaluations, wall time,
evaluations per minute. Exit 1 when a checkpoint's verdict differs between scbench-ci's modes.

`--no-quality` runs scbench-ci's modes without the code-quality measure (`--no-quality`,
`quality=False`), as a reward loop would: what is left outside the tests is the floor of the
evaluation itself. SCBench's flow never measures quality.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's scbench_ci, also when it is a copy of another commit
sys.path.insert(0, str(Path(__file__).resolve().parent))
from problem_set import generate  # noqa: E402

from scbench_ci.plan import Target  # noqa: E402
from testing.fidelity.scbench_flow import ordered_checkpoints, reference_report  # noqa: E402

EXAMPLES = ROOT / "examples"
OUTPUT_TAIL = 3000


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the set, evaluated with its reference solution."""

    problem: Path
    name: str

    @property
    def submission(self) -> Path:
        return self.problem / "solutions" / self.name

    @property
    def key(self) -> str:
        return f"{self.problem.name}/{self.name}"


@dataclass(frozen=True)
class Evaluation:
    """One checkpoint evaluated once, in one mode."""

    key: str
    passed: bool | None
    """scbench-ci's verdict; None under SCBench's flow (its verdict is not re-derived here)."""
    pytest_s: float
    """pytest's own duration (pytest-report.json's `duration`)."""
    phases: dict[str, float] = field(default_factory=dict)
    wall_s: float | None = None
    """The evaluation's whole wall time, where the mode times each one apart."""


@dataclass(frozen=True)
class ModeRun:
    """One mode over every checkpoint, once."""

    mode: str
    wall_s: float
    evaluations: tuple[Evaluation, ...]
    serial: bool
    """Whether the evaluations ran one at a time (so the process's wall time is theirs, added)."""


@dataclass(frozen=True)
class Context:
    checkpoints: tuple[Checkpoint, ...]
    problems: Path
    """The folder holding every problem of the set."""
    scratch: Path
    jobs: int
    image: str
    """The evaluation image SCBench's flow runs in (scbench-ci's default image)."""
    quality: bool = True
    """Whether scbench-ci's modes measure code quality (their default)."""


def checkpoint_set(problems: Path) -> tuple[Checkpoint, ...]:
    """Every checkpoint of every problem under `problems`, in order."""
    found = []
    for problem in sorted(path for path in problems.iterdir() if (path / "config.yaml").is_file()):
        config = yaml.safe_load((problem / "config.yaml").read_text())
        found += [Checkpoint(problem, name) for name in ordered_checkpoints(config)]
    return tuple(found)


def write_set(
    folder: Path, examples: Sequence[str], problems: int, checkpoints: int, tests: int
) -> Path:
    """The examples named (copied) and the generated problems, side by side in one folder."""
    target = generate(folder, problems, checkpoints, tests)
    for name in examples:
        shutil.copytree(EXAMPLES / name, target / name)
    return target


# --- the modes -----------------------------------------------------------------------------


def batch(context: Context, jobs: int, output: Path) -> ModeRun:
    """One `scbench-ci evaluate --jobs N` process over every checkpoint."""
    shutil.rmtree(output, ignore_errors=True)
    argv = [sys.executable, "-m", "scbench_ci", "evaluate", "--problem", str(context.problems)]
    argv += ["--checkpoint", "all", "--jobs", str(jobs), "--output", str(output), "--quiet"]
    argv += ["--submission", f"{context.problems}/{{problem}}/solutions/{{checkpoint}}"]
    argv += [] if context.quality else ["--no-quality"]
    started = time.perf_counter()
    run = subprocess.run(
        argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT, check=False
    )
    wall_s = time.perf_counter() - started
    if run.returncode not in (0, 1) or not (output / "results.json").is_file():
        sys.exit(
            f"`scbench-ci evaluate --jobs {jobs}` exited {run.returncode}:\n"
            f"{run.stdout[-OUTPUT_TAIL:]}\n{run.stderr[-OUTPUT_TAIL:]}"
        )
    evaluations = tuple(_from_results(output))
    return ModeRun(f"batch-{jobs}", wall_s, evaluations, serial=jobs == 1)


def loop(kind: str) -> Callable[[Context, Path], ModeRun]:
    """A loop of single calls (LOOPS[kind]) in one Python process of its own."""

    def run_loop(context: Context, output: Path) -> ModeRun:
        shutil.rmtree(output, ignore_errors=True)
        output.mkdir(parents=True)
        targets = [
            {"problem": str(c.problem), "checkpoint": c.name, "submission": str(c.submission)}
            for c in context.checkpoints
        ]
        (output / "targets.json").write_text(json.dumps(targets))
        argv = [sys.executable, str(Path(__file__).resolve()), "loop", kind, str(output)]
        argv += [] if context.quality else ["--no-quality"]
        started = time.perf_counter()
        run = subprocess.run(
            argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT, check=False
        )
        wall_s = time.perf_counter() - started
        if run.returncode != 0:
            sys.exit(
                f"the {kind} loop exited {run.returncode}:\n"
                f"{run.stdout[-OUTPUT_TAIL:]}\n{run.stderr[-OUTPUT_TAIL:]}"
            )
        walls = json.loads((output / "walls.json").read_text())
        evaluations = []
        for index, call_s in enumerate(walls):
            [one] = _from_results(output / f"call-{index}")
            evaluations.append(Evaluation(one.key, one.passed, one.pytest_s, one.phases, call_s))
        return ModeRun(kind, wall_s, tuple(evaluations), serial=True)

    return run_loop


def scbench(context: Context, output: Path) -> ModeRun:
    """SCBench's flow, one checkpoint after the other."""
    shutil.rmtree(output, ignore_errors=True)
    evaluations = []
    started = time.perf_counter()
    for checkpoint in context.checkpoints:
        config = yaml.safe_load((checkpoint.problem / "config.yaml").read_text())
        workspace = output / checkpoint.problem.name / checkpoint.name
        one_started = time.perf_counter()
        report = reference_report(
            checkpoint.problem, config, checkpoint.name, workspace, context.image
        )
        wall_s = time.perf_counter() - one_started
        evaluations.append(Evaluation(checkpoint.key, None, _duration(report), wall_s=wall_s))
    return ModeRun("scbench", time.perf_counter() - started, tuple(evaluations), serial=True)


def _from_results(output: Path) -> Iterable[Evaluation]:
    results = json.loads((output / "results.json").read_text())
    for problem in results["problems"]:
        for checkpoint in problem["checkpoints"]:
            report = output / checkpoint["artifacts"] / "pytest-report.json"
            yield Evaluation(
                f"{problem['name']}/{checkpoint['name']}",
                bool(checkpoint["passed"]),
                _duration(report),
                {name: float(seconds) for name, seconds in checkpoint["phases"].items()},
            )


def _duration(report: Path) -> float:
    return float(json.loads(report.read_text())["duration"])


MODES: dict[str, Callable[[Context, Path], ModeRun]] = {
    "batch-1": lambda context, output: batch(context, 1, output),
    "batch-N": lambda context, output: batch(context, context.jobs, output),
    "api": loop("api"),
    "session": loop("session"),
    "scbench": scbench,
}
"""Each way of evaluating the set, by name (`--modes`)."""


# --- the loops, run in a process of their own ----------------------------------------------


def api_loop(targets: list[Target], outputs: list[Path], options: dict[str, bool]) -> list[float]:
    """`scbench_ci.evaluate([target])` once per target, each with its own output folder."""
    import scbench_ci

    return _timed(
        lambda target, output: scbench_ci.evaluate([target], output=output, **options),
        targets,
        outputs,
    )


def session_loop(
    targets: list[Target], outputs: list[Path], options: dict[str, bool]
) -> list[float]:
    """`session.evaluate([target])` once per target in one `scbench_ci.Session`, which keeps
    the Docker client, the pre-flight, the problems' configs and a warm container ahead."""
    import scbench_ci

    with scbench_ci.Session(**options) as session:
        return _timed(
            lambda target, output: session.evaluate([target], output=output), targets, outputs
        )


def _timed(
    call: Callable[[Target, Path], object], targets: list[Target], outputs: list[Path]
) -> list[float]:
    walls = []
    for target, output in zip(targets, outputs, strict=True):
        started = time.perf_counter()
        call(target, output)
        walls.append(time.perf_counter() - started)
    return walls


LOOPS: dict[str, Callable[[list[Target], list[Path], dict[str, bool]], list[float]]] = {
    "api": api_loop,
    "session": session_loop,
}
"""Each loop of single calls, by name: the seconds of each call, in order."""


def run_loop_here(kind: str, folder: Path, quality: bool) -> None:
    """`breakdown.py loop KIND FOLDER [--no-quality]`: the targets of FOLDER/targets.json, each
    call's results in FOLDER/call-<i>, the calls' seconds in FOLDER/walls.json."""
    targets = [
        Target(Path(t["problem"]), t["checkpoint"], Path(t["submission"]))
        for t in json.loads((folder / "targets.json").read_text())
    ]
    outputs = [folder / f"call-{index}" for index in range(len(targets))]
    # Without the keyword when the measure is on, so the loop also runs on a commit before it.
    options = {} if quality else {"quality": False}
    (folder / "walls.json").write_text(json.dumps(LOOPS[kind](targets, outputs, options)))


# --- the figures ---------------------------------------------------------------------------


def p90(values: Sequence[float]) -> float:
    """The 90th percentile, nearest rank: the smallest value at or above 90% of them."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def breakdown(runs: Sequence[ModeRun]) -> dict[str, list[float]]:
    """One mode's figures per checkpoint, by row name, over its runs."""
    rows: dict[str, list[float]] = {}
    for run in runs:
        for evaluation in run.evaluations:
            for phase, seconds in evaluation.phases.items():
                rows.setdefault(phase, []).append(seconds)
            if "tests" in evaluation.phases:
                rows.setdefault("tests - pytest", []).append(
                    evaluation.phases["tests"] - evaluation.pytest_s
                )
            if evaluation.phases:
                rows.setdefault("outside pytest", []).append(
                    sum(evaluation.phases.values()) - evaluation.pytest_s
                )
            rows.setdefault("pytest", []).append(evaluation.pytest_s)
            if evaluation.wall_s is not None:
                rows.setdefault("outside the tests", []).append(
                    evaluation.wall_s - evaluation.pytest_s
                )
                if evaluation.phases:
                    rows.setdefault("process's own", []).append(
                        evaluation.wall_s - sum(evaluation.phases.values())
                    )
        if run.serial and all(e.wall_s is None for e in run.evaluations):
            # One at a time in one process: its wall time, shared out per checkpoint.
            count = len(run.evaluations)
            pytest_s = sum(e.pytest_s for e in run.evaluations)
            phases_s = sum(sum(e.phases.values()) for e in run.evaluations)
            rows.setdefault("outside the tests", []).append((run.wall_s - pytest_s) / count)
            rows.setdefault("process's own", []).append((run.wall_s - phases_s) / count)
    return rows


def per_minute(runs: Sequence[ModeRun]) -> float:
    return 60 * sum(len(run.evaluations) for run in runs) / sum(run.wall_s for run in runs)


def report(runs: Sequence[ModeRun]) -> list[str]:
    """Each mode's phases (median, p90, per checkpoint), then the evaluations per minute."""
    modes = list(dict.fromkeys(run.mode for run in runs))
    lines: list[str] = []
    for mode in modes:
        rows = breakdown([run for run in runs if run.mode == mode])
        lines += [f"{mode}: seconds per checkpoint", f"  {'':<20}{'median':>8}{'p90':>8}{'n':>5}"]
        lines += [
            f"  {name:<20}{statistics.median(values):>8.3f}{p90(values):>8.3f}{len(values):>5}"
            for name, values in rows.items()
        ]
    lines += [
        "",
        f"  {'mode':<10}{'evaluations':>12}{'wall s':>9}{'per minute':>12}{'outside tests':>15}",
    ]
    for mode in modes:
        mode_runs = [run for run in runs if run.mode == mode]
        outside = breakdown(mode_runs).get("outside the tests")
        shown = f"{statistics.median(outside):.3f}" if outside else "-"
        count = sum(len(run.evaluations) for run in mode_runs)
        wall = sum(run.wall_s for run in mode_runs)
        lines.append(
            f"  {mode:<10}{count:>12}{wall:>9.1f}{per_minute(mode_runs):>12.1f}{shown:>15}"
        )
    return lines


def differing_verdicts(runs: Sequence[ModeRun]) -> list[str]:
    """The checkpoints whose verdict is not the same in every run of scbench-ci's modes."""
    seen: dict[str, set[bool]] = {}
    for run in runs:
        for evaluation in run.evaluations:
            if evaluation.passed is not None:
                seen.setdefault(evaluation.key, set()).add(evaluation.passed)
    return sorted(key for key, verdicts in seen.items() if len(verdicts) > 1)


def _load() -> str:
    load1, load5, _ = os.getloadavg()
    return f"load average {load1:.2f} (1 min), {load5:.2f} (5 min) on {os.cpu_count()} cores"


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["loop"]:
        run_loop_here(arguments[1], Path(arguments[2]), "--no-quality" not in arguments[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="N of batch-N")
    parser.add_argument("--examples", default="all", help="comma-separated names, all or none")
    parser.add_argument("--problems", type=int, default=2, help="generated problems")
    parser.add_argument("--checkpoints", type=int, default=2, help="per generated problem")
    parser.add_argument("--tests", type=int, default=2, help="per generated checkpoint")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated")
    parser.add_argument("--root", type=Path, help="where the set and outputs go (kept)")
    parser.add_argument(
        "--no-quality", action="store_true", help="scbench-ci's modes without the quality measure"
    )
    args = parser.parse_args(arguments)
    modes = args.modes.split(",")
    if unknown := [mode for mode in modes if mode not in MODES]:
        parser.error(f"--modes: unknown mode {unknown[0]!r} ({', '.join(MODES)})")
    examples = {
        "all": sorted(p.name for p in EXAMPLES.iterdir() if (p / "config.yaml").is_file()),
        "none": [],
    }.get(args.examples, args.examples.split(","))

    scratch = args.root or Path(tempfile.mkdtemp(prefix="scbench-breakdown-"))
    try:
        problems = write_set(scratch / "set", examples, args.problems, args.checkpoints, args.tests)
        context = Context(
            checkpoint_set(problems),
            problems,
            scratch,
            args.jobs,
            _evaluation_image(),
            quality=not args.no_quality,
        )
        measure = "without" if args.no_quality else "with"
        print(
            f"{len(context.checkpoints)} checkpoints, {measure} the quality measure; {_load()}",
            flush=True,
        )
        batch(context, args.jobs, scratch / "warm")  # untimed: fills the caches
        runs = []
        for repeat in range(args.repeat):
            for mode in modes:
                print(f"repeat {repeat + 1}: {mode} ...", flush=True)
                runs.append(MODES[mode](context, scratch / f"{mode}-{repeat}"))
        print(f"after: {_load()}\n")
    finally:
        if args.root is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(report(runs)))
    if differ := differing_verdicts(runs):
        print(f"\nverdicts that differ between modes or repeats: {', '.join(differ)}")
        return 1
    return 0


def _evaluation_image() -> str:
    import docker

    from scbench_ci.executors.docker.image_build import default_image
    from scbench_ci.executors.docker.image_recipe import recipe

    client = docker.from_env()
    try:
        return default_image(client, sys.stderr, recipe()).reference
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
