"""Where an evaluation's time goes, on short checkpoints: each phase's median and p90, the time
outside pytest's own duration, the process's own time, and the evaluations per minute of each
way of running them, beside SCBench's own flow, in the same run.

    python benchmarks/breakdown.py [--repeat 3] [--jobs 2] [--examples all]
                                   [--problems 2] [--checkpoints 2] [--tests 2]
                                   [--modes batch-1,batch-N,api,session,reward,scbench]
                                   [--shards 2,4] [--long PROBLEM:CHECKPOINT ...]
                                   [--no-quality] [--no-requirements]

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
- `reward`: one `scbench_ci.Session` that evaluates each checkpoint REWARD_CALLS times in a row,
  as a reward loop scores one task's submissions one at a time; only the calls after each
  checkpoint's first are counted (the warm calls: their container and their tests' process were
  made ahead, for this checkpoint);
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

Sharding (`--shards 2,4`, `--long`): each count N adds a mode `shards-N`, a `--jobs 1` process
with `--shards N` over the set, whose results must equal the unsharded warm-up's test by test;
and each `--long PROBLEM_FOLDER:CHECKPOINT` (a real problem with its reference solution in
`solutions/<checkpoint>`, say one of SCBench's; never run by the other modes) is evaluated alone,
unsharded and then with each `--shards N` (the unsharded run its `--baseline`, whose tests'
seconds balance the shards, as a scheduled job's last run would), each in a process of its own:
its wall time, the ratio to the unsharded one, and every difference of its results (ids,
statuses, groups, messages, counts, verdict; zero is the bar), those a second whole run also has
named. Exit 1 when there is one.

`--no-requirements` generates the solutions without a requirements.txt (PLAIN_SOLUTION): the
workspace SCBench's setup makes is then the same for every submission.

`--no-quality` runs scbench-ci's modes without the code-quality measure (`--no-quality`,
`quality=False`), as a reward loop would: what is left outside the tests is the floor of the
evaluation itself. SCBench's flow never measures quality.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's scbench_ci, also when it is a copy of another commit
sys.path.insert(0, str(Path(__file__).resolve().parent))
from problem_set import generate  # noqa: E402

from scbench_ci.job.plan import Target  # noqa: E402
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
    output: Path | None = None
    """The output folder of a mode that runs one `scbench-ci evaluate` process."""


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
    folders = problems.iterdir() if problems.is_dir() else ()
    for problem in sorted(path for path in folders if (path / "config.yaml").is_file()):
        config = yaml.safe_load((problem / "config.yaml").read_text())
        found += [Checkpoint(problem, name) for name in ordered_checkpoints(config)]
    return tuple(found)


def write_set(
    folder: Path,
    examples: Sequence[str],
    problems: int,
    checkpoints: int,
    tests: int,
    requirements: bool = True,
) -> Path:
    """The examples named (copied) and the generated problems, side by side in one folder."""
    target = generate(folder, problems, checkpoints, tests, requirements)
    for name in examples:
        shutil.copytree(EXAMPLES / name, target / name)
    return target


# --- the modes -----------------------------------------------------------------------------


def batch(context: Context, jobs: int, output: Path, shards: int = 1) -> ModeRun:
    """One `scbench-ci evaluate --jobs N [--shards S]` process over every checkpoint."""
    wall_s = evaluate_process(
        context.problems, "all", context.problems, output, context.quality, jobs, shards
    )
    evaluations = tuple(_from_results(output))
    mode = f"batch-{jobs}" if shards == 1 else f"shards-{shards}"
    return ModeRun(mode, wall_s, evaluations, serial=jobs == 1, output=output)


def evaluate_process(
    problems: Path,
    checkpoint: str,
    solutions: Path,
    output: Path,
    quality: bool,
    jobs: int = 1,
    shards: int = 1,
    baseline: Path | None = None,
) -> float:
    """`scbench-ci evaluate` of each reference solution (`<solutions>/{problem}/solutions/
    {checkpoint}`) in a process of its own: its wall time. `baseline`: an earlier results.json,
    whose tests' seconds balance the shards."""
    shutil.rmtree(output, ignore_errors=True)
    argv = [sys.executable, "-m", "scbench_ci", "evaluate", "--problem", str(problems)]
    argv += ["--checkpoint", checkpoint, "--jobs", str(jobs), "--output", str(output), "--quiet"]
    argv += ["--submission", f"{solutions}/{{problem}}/solutions/{{checkpoint}}"]
    argv += ["--shards", str(shards)] if shards != 1 else []
    argv += ["--baseline", str(baseline)] if baseline is not None else []
    argv += [] if quality else ["--no-quality"]
    started = time.perf_counter()
    run = subprocess.run(
        argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT, check=False
    )
    wall_s = time.perf_counter() - started
    if run.returncode not in (0, 1) or not (output / "results.json").is_file():
        sys.exit(
            f"`scbench-ci evaluate --jobs {jobs} --shards {shards}` exited {run.returncode}:\n"
            f"{run.stdout[-OUTPUT_TAIL:]}\n{run.stderr[-OUTPUT_TAIL:]}"
        )
    return wall_s


def loop(kind: str, calls: int = 1) -> Callable[[Context, Path], ModeRun]:
    """A loop of single calls (LOOPS[kind]) in one Python process of its own; with `calls`, each
    checkpoint `calls` times in a row, and only the calls after its first are timed (the first
    takes the container made ahead for the checkpoint before)."""

    def run_loop(context: Context, output: Path) -> ModeRun:
        shutil.rmtree(output, ignore_errors=True)
        output.mkdir(parents=True)
        targets = [
            {"problem": str(c.problem), "checkpoint": c.name, "submission": str(c.submission)}
            for c in context.checkpoints
            for _ in range(calls)
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
            if calls > 1 and index % calls == 0:
                continue
            [one] = _from_results(output / f"call-{index}")
            evaluations.append(Evaluation(one.key, one.passed, one.pytest_s, one.phases, call_s))
        if calls > 1:
            wall_s = sum(evaluation.wall_s or 0.0 for evaluation in evaluations)
        return ModeRun(kind if calls == 1 else "reward", wall_s, tuple(evaluations), serial=True)

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
            folder = output / checkpoint["artifacts"]
            # A sharded checkpoint's pytest: its longest shard's session.
            whole = folder / "pytest-report.json"
            reports = [whole] if whole.is_file() else sorted(folder.glob("shard-*/pytest-*.json"))
            yield Evaluation(
                f"{problem['name']}/{checkpoint['name']}",
                bool(checkpoint["passed"]),
                max(_duration(report) for report in reports),
                {name: float(seconds) for name, seconds in checkpoint["phases"].items()},
            )


def _duration(report: Path) -> float:
    return float(json.loads(report.read_text())["duration"])


# --- sharding ----------------------------------------------------------------------------

JUDGED = ("passed", "pytest_exit_code", "groups", "totals")
"""What a checkpoint's result says that sharding must not change, besides its tests."""
TEST_FIELDS = (
    "checkpoint",
    "group",
    "status",
    "markers",
    "message",
    "details",
    "file",
    "line",
    "reruns",
)
_PER_PROCESS = re.compile(r"0x[0-9a-f]+|((?:127\.0\.0\.1|localhost|0\.0\.0\.0):)[0-9]+")


def as_any_run(value: object) -> object:
    """A message or traceback as two whole runs of the same tests agree on it: objects'
    addresses differ from one process to the next, and so do the order of a set's or a dict's
    items in an assertion's diff (hash randomization) and the free port a test's server got."""
    if not isinstance(value, str):
        return value
    return sorted(_PER_PROCESS.sub(lambda found: f"{found[1] or '0x'}?", value).splitlines())


def differences(whole: Path, sharded: Path) -> list[str]:
    """Every way the checkpoints of the sharded output folder differ from the whole one's: each
    result's verdict, exit code, failure kind and counts, and each test's outcome."""
    found = []
    ours, theirs = _checkpoints(whole), _checkpoints(sharded)
    for key in sorted(set(ours) | set(theirs)):
        if key not in ours or key not in theirs:
            found.append(f"{key}: only in the {'whole' if key in ours else 'sharded'} run")
            continue
        (one, one_tests), (other, other_tests) = ours[key], theirs[key]
        found += [
            f"{key}: {name} {one[name]!r} != {other[name]!r}"
            for name in one
            if one[name] != other[name]
        ]
        if [test["id"] for test in one_tests] != [test["id"] for test in other_tests]:
            missing = {t["id"] for t in one_tests} ^ {t["id"] for t in other_tests}
            found.append(f"{key}: other tests or order ({', '.join(sorted(missing)[:3])})")
            continue
        for test, other_test in zip(one_tests, other_tests, strict=True):
            found += [
                f"{key}: {test['id']}: {name} {test.get(name)!r:.300} != "
                f"{other_test.get(name)!r:.300}"
                for name in TEST_FIELDS
                if as_any_run(test.get(name)) != as_any_run(other_test.get(name))
            ]
    return found


def _checkpoints(output: Path) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    results = json.loads((output / "results.json").read_text())
    found = {}
    for problem in results["problems"]:
        for checkpoint in problem["checkpoints"]:
            document = json.loads((output / checkpoint["artifacts"] / "result.json").read_text())
            judged = {name: checkpoint[name] for name in JUDGED}
            judged["failure"] = (checkpoint["failure"] or {}).get("kind")
            found[f"{problem['name']}/{checkpoint['name']}"] = (judged, document["tests"])
    return found


@dataclass(frozen=True)
class LongRun:
    """A long checkpoint evaluated alone, whole or sharded."""

    key: str
    shards: int
    wall_s: float
    differences: tuple[str, ...]
    """Against the whole run (none for the whole run itself)."""
    also_whole: tuple[str, ...] = ()
    """Of `differences`, those a second whole run also has against the first: the tests' own
    (a flaky test), not the shards'."""


def long_checkpoints(
    given: Sequence[str], counts: Sequence[int], scratch: Path, quality: bool
) -> list[LongRun]:
    """Each `PROBLEM_FOLDER:CHECKPOINT` evaluated whole, then with each count of shards."""
    runs = []
    for index, one in enumerate(given):
        problem, _, checkpoint = one.rpartition(":")
        folder = Path(problem).resolve()
        key = f"{folder.name}/{checkpoint}"
        holder = scratch / f"long-{index}"  # the problem alone, as `--problem` takes a folder
        holder.mkdir(parents=True, exist_ok=True)
        if not (holder / folder.name).exists():
            (holder / folder.name).symlink_to(folder)
        whole = holder / "whole"
        print(f"long: {key} whole ...", flush=True)
        wall_s = evaluate_process(holder / folder.name, checkpoint, holder, whole, quality)
        runs.append(LongRun(key, 1, wall_s, ()))
        again: set[str] | None = None
        for count in counts:
            print(f"long: {key} --shards {count} ...", flush=True)
            output = holder / f"shards-{count}"
            wall_s = evaluate_process(
                holder / folder.name,
                checkpoint,
                holder,
                output,
                quality,
                shards=count,
                baseline=whole / "results.json",
            )
            found = differences(whole, output)
            if found and again is None:
                print(f"long: {key} whole again (the shards differ) ...", flush=True)
                second = holder / "again"
                evaluate_process(holder / folder.name, checkpoint, holder, second, quality)
                again = set(differences(whole, second))
            flaky = tuple(one for one in found if again is not None and one in again)
            runs.append(LongRun(key, count, wall_s, tuple(found), flaky))
    return runs


def long_report(runs: Sequence[LongRun]) -> list[str]:
    lines = ["", "long checkpoints, each alone: wall seconds, ratio to the whole run, differences"]
    whole = {run.key: run.wall_s for run in runs if run.shards == 1}
    for run in runs:
        ratio = run.wall_s / whole[run.key]
        shown = "whole" if run.shards == 1 else f"--shards {run.shards}"
        lines.append(
            f"  {run.key:<32}{shown:>12}{run.wall_s:>9.1f}{ratio:>7.2f}x"
            f"{len(run.differences):>6} differences ({len(run.also_whole)} also whole)"
        )
        lines += [
            f"    {difference}{' (also between two whole runs)' * (difference in run.also_whole)}"
            for difference in run.differences
        ]
    return lines


REWARD_CALLS = 4
"""`reward`: each checkpoint this many times in a row in one session, as a reward loop scores
one task's submissions."""
MODES: dict[str, Callable[[Context, Path], ModeRun]] = {
    "batch-1": lambda context, output: batch(context, 1, output),
    "batch-N": lambda context, output: batch(context, context.jobs, output),
    "api": loop("api"),
    "session": loop("session"),
    "reward": loop("session", REWARD_CALLS),
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
        "--shards", default="", help="comma-separated counts: a mode shards-N for each"
    )
    parser.add_argument(
        "--long",
        action="append",
        default=[],
        metavar="PROBLEM:CHECKPOINT",
        help="a long real checkpoint, whole and with each --shards count (repeatable)",
    )
    parser.add_argument(
        "--no-quality", action="store_true", help="scbench-ci's modes without the quality measure"
    )
    parser.add_argument(
        "--no-requirements",
        action="store_true",
        help="the generated solutions without requirements.txt (every workspace's setup alike)",
    )
    args = parser.parse_args(arguments)
    modes = [mode for mode in args.modes.split(",") if mode]
    if unknown := [mode for mode in modes if mode not in MODES]:
        parser.error(f"--modes: unknown mode {unknown[0]!r} ({', '.join(MODES)})")
    shard_counts = [int(count) for count in args.shards.split(",") if count]
    examples = {
        "all": sorted(p.name for p in EXAMPLES.iterdir() if (p / "config.yaml").is_file()),
        "none": [],
    }.get(args.examples, args.examples.split(","))

    scratch = args.root or Path(tempfile.mkdtemp(prefix="scbench-breakdown-"))
    try:
        problems = write_set(
            scratch / "set",
            examples,
            args.problems,
            args.checkpoints,
            args.tests,
            requirements=not args.no_requirements,
        )
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
        # Untimed: fills the caches (nothing to do for a set of none, `--problems 0`).
        warm = batch(context, args.jobs, scratch / "warm") if context.checkpoints else None
        runs = []
        sharded: list[str] = []
        for repeat in range(args.repeat):
            for mode in modes:
                print(f"repeat {repeat + 1}: {mode} ...", flush=True)
                runs.append(MODES[mode](context, scratch / f"{mode}-{repeat}"))
            for count in shard_counts if context.checkpoints else []:
                print(f"repeat {repeat + 1}: shards-{count} ...", flush=True)
                run = batch(context, 1, scratch / f"shards-{count}-{repeat}", shards=count)
                runs.append(run)
                assert warm is not None and warm.output is not None and run.output is not None
                sharded += [f"{run.mode}: {one}" for one in differences(warm.output, run.output)]
        longs = long_checkpoints(args.long, shard_counts, scratch, not args.no_quality)
        print(f"after: {_load()}\n")
    finally:
        if args.root is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(report(runs)))
    if shard_counts and runs:
        print(f"\nsharded against the unsharded warm-up: {len(sharded)} differences")
        print("\n".join(f"  {one}" for one in sharded))
    if longs:
        print("\n".join(long_report(longs)))
    failed = 0
    if differ := differing_verdicts(runs):
        print(f"\nverdicts that differ between modes or repeats: {', '.join(differ)}")
        failed = 1
    return 1 if failed or sharded or any(run.differences for run in longs) else 0


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
