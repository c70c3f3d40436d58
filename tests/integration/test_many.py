"""Many evaluations in one run: a problem repository and a run directory, side by side in Docker.

Each evaluation of the run must give, test by test, what evaluating that checkpoint alone gives;
a missing submission is that job's result, not the end of the run; `--skip-existing` reruns
only what changed; SCBench's own files are written beside ours.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from scbench_ci.results.file import load_results
from testing.cli import run_cli
from testing.examples import EVERY_SOLUTION_LIMITS, EXPECTED, SharedEvaluations, group_counts
from testing.paths import EXAMPLES, REPO_ROOT
from testing.results import checkpoint_documents, comparable

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
SOLVED = sorted((p, c) for p, c, s in EXPECTED if s == f"solutions/{c}")
# Under SCBench 1.0's rules (the default) marks' own markers give no group: the tests of
# marks/checkpoint_1's reference solution that fail on purpose are Core, and it fails core-cases.
SOLVED_PASSING = sum(EXPECTED[(p, c, f"solutions/{c}")][0] == 0 for p, c in SOLVED)


def scbench(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("evaluate", *args, cwd=cwd, timeout=900)


def per_test(checkpoint: dict) -> dict[str, tuple[str, str, str]]:
    return {t["id"]: (t["checkpoint"], t["group"], t["status"]) for t in checkpoint["tests"]}


@pytest.fixture(scope="module")
def repository_run(shared_evaluations: SharedEvaluations, test_image: str) -> tuple:
    """Every bundled problem's reference solutions, two evaluations at a time (the session's
    run, which tests/integration/test_ray_engine.py compares with the cluster's)."""
    evaluated = shared_evaluations.every_solution(test_image)
    return evaluated.run, evaluated.output, evaluated.results


def test_a_problem_repository_in_one_command(repository_run: tuple) -> None:
    run, output, results = repository_run
    # Every reference solution passes core-cases but marks/checkpoint_1's (testing/examples.py's
    # EXPECTED says why): the run fails, exit 1.
    assert [(p, c) for p, c in SOLVED if EXPECTED[(p, c, f"solutions/{c}")][0]] == [
        ("marks", "checkpoint_1")
    ]
    assert run.returncode == 1, run.stdout + run.stderr
    jsonschema.validate(results, SCHEMA)
    assert results["jobs"] == 2
    assert [p["name"] for p in results["problems"]] == [
        "jsonlog",
        "kvserver",
        "marks",
        "settings",
        "wordstat",
    ]
    done = [(p["name"], c["name"]) for p in results["problems"] for c in p["checkpoints"]]
    assert done == SOLVED
    for problem in results["problems"]:
        for checkpoint in problem["checkpoints"]:
            exit_code, counts = EXPECTED[
                (problem["name"], checkpoint["name"], f"solutions/{checkpoint['name']}")
            ]
            assert group_counts(checkpoint) == counts, (problem["name"], checkpoint["name"])
            assert checkpoint["passed"] is (exit_code == 0)
            folder = output / checkpoint["artifacts"]
            for name in ("pytest.log", "pytest-report.json", "ctrf-report.json", "result.json"):
                assert (folder / name).is_file(), folder / name
            assert json.loads((folder / "result.json").read_text()) == checkpoint
    assert results["totals"]["checkpoints"] == 9
    assert results["totals"]["checkpoints_passed"] == SOLVED_PASSING


def test_side_by_side_output_never_interleaves(repository_run: tuple) -> None:
    run, _, _ = repository_run
    lines = run.stdout.splitlines()
    finished = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] for line in finished] == [f"[{i}/9" for i in range(1, 10)]
    assert any("marks / checkpoint_2: passed, Core 2/2, all 4/4" in line for line in finished)
    # The tests' own output went to each evaluation's log, not to the console: what names a test
    # there is the closing recap, which names failing tests (`e.g. <id>`, `in <id>`, issue #52)
    # of failed checkpoints and of passing ones.
    closing = f"{SOLVED_PASSING} of 9 checkpoints passed (5 problems, "
    recap = lines.index(next(line for line in lines if line.startswith(closing)))
    assert not any("PASSED" in line or "::test_" in line for line in lines[:recap])


@pytest.mark.parametrize(("problem", "checkpoint"), SOLVED)
def test_each_evaluation_matches_its_own_run(
    repository_run: tuple,
    problem: str,
    checkpoint: str,
    test_image: str,
    shared_evaluations: SharedEvaluations,
) -> None:
    _, _, results = repository_run
    (together,) = (
        c
        for p in results["problems"]
        if p["name"] == problem
        for c in p["checkpoints"]
        if c["name"] == checkpoint
    )
    alone = shared_evaluations(
        problem, checkpoint, f"solutions/{checkpoint}", "--image", test_image, executor="docker"
    )
    (single,) = checkpoint_documents(alone.results)
    assert per_test(together) == per_test(single)
    assert len(per_test(single)) > 0


def test_scbench_reads_our_output_as_its_own_run(repository_run: tuple) -> None:
    _, output, results = repository_run
    rows = [
        json.loads(line) for line in (output / "checkpoint_results.jsonl").read_text().splitlines()
    ]
    assert [(row["problem"], row["checkpoint"]) for row in rows] == SOLVED
    by_key = {(row["problem"], row["checkpoint"]): row for row in rows}
    for problem in results["problems"]:
        for checkpoint in problem["checkpoints"]:
            evaluation = json.loads(
                (output / checkpoint["artifacts"] / "evaluation.json").read_text()
            )
            assert evaluation["checkpoint_name"] == checkpoint["name"]
            total = checkpoint["totals"]["total"]
            assert sum(evaluation["total_counts"].values()) == total
            row = by_key[(problem["name"], checkpoint["name"])]
            assert (row["total_tests"], row["passed_tests"]) == (
                total,
                checkpoint["totals"]["passed"],
            )


@pytest.fixture
def run_directory(tmp_path: Path) -> Path:
    """SCBench's run layout (`runs/x/{problem}/{checkpoint}/snapshot`) for wordstat, with
    checkpoint_3's snapshot missing (an agent that stopped early)."""
    for checkpoint in ("checkpoint_1", "checkpoint_2"):
        snapshot = tmp_path / f"runs/x/wordstat/{checkpoint}/snapshot"
        shutil.copytree(EXAMPLES / f"wordstat/solutions/{checkpoint}", snapshot)
    return tmp_path / "runs/x"


def test_a_run_directory_with_a_missing_snapshot_and_skip_existing(
    run_directory: Path, tmp_path: Path, test_image: str
) -> None:
    output = tmp_path / "out"
    args = (
        *("--problem", EXAMPLES / "wordstat", "--checkpoint", "all", "--jobs", "2"),
        *("--submission", run_directory / "{problem}/{checkpoint}/snapshot"),
        *("--output", output, "--executor", "docker", "--image", test_image),
    )
    first = scbench(*args, "--skip-existing")
    assert first.returncode == 1, first.stdout + first.stderr
    run = load_results(output / "results.json")
    missing = run.problems[0].checkpoints[2]
    assert missing.failure is not None and missing.failure.kind == "missing"
    assert "checkpoint_3/snapshot does not exist" in missing.failure.message
    assert [c.passed for c in run.problems[0].checkpoints] == [True, True, False]
    assert not run.infrastructure_failure

    # Nothing changed: nothing runs again, and the results are the same.
    second = scbench(*args, "--skip-existing")
    assert second.returncode == 1, second.stdout + second.stderr
    again = load_results(output / "results.json")
    assert [c.reused for c in again.problems[0].checkpoints] == [True, True, False]
    for before, after in zip(
        run.problems[0].checkpoints, again.problems[0].checkpoints, strict=True
    ):
        assert after.tests == before.tests
        assert after.fingerprint == before.fingerprint

    # One snapshot changes: only it runs again. Without the flag, everything runs.
    (run_directory / "wordstat/checkpoint_2/snapshot/notes.txt").write_text("changed\n")
    third = scbench(*args, "--skip-existing")
    assert third.returncode == 1
    changed = load_results(output / "results.json")
    assert [c.reused for c in changed.problems[0].checkpoints] == [True, False, False]
    scbench(*args)
    assert not any(c.reused for c in load_results(output / "results.json").problems[0].checkpoints)


def test_a_matrix_of_shards_merged_is_the_run_of_everything(
    repository_run: tuple, tmp_path: Path, test_image: str
) -> None:
    """`plan --shards 3` balanced by the whole run's durations, each shard evaluated with its
    `--select`, then `merge`: the same results.json and checkpoint_results.jsonl as evaluating
    everything at once."""
    whole_run, whole_output, whole = repository_run
    plan = ("plan", "--problem", str(EXAMPLES), "--shards", "3", "--baseline", str(whole_output))
    planned = run_cli(*plan)
    assert planned.returncode == 0, planned.stderr
    shards = json.loads(planned.stdout)["include"]
    assert len(shards) == 3
    assert sorted(k for s in shards for k in s["select"].split()) == [f"{p}/{c}" for p, c in SOLVED]
    folders = []
    for shard in shards:
        folder = tmp_path / shard["name"] / "artifact"
        run = scbench(
            *("--problem", EXAMPLES, "--checkpoint", "all", "--select", shard["select"]),
            *("--submission", EXAMPLES / "{problem}/solutions/{checkpoint}"),
            *("--output", folder, "--executor", "docker", "--image", test_image),
            *EVERY_SOLUTION_LIMITS,  # the whole run's, which its fingerprints hash
        )
        assert run.returncode in (0, 1), run.stderr
        folders.append(folder.parent)
    merged_dir = tmp_path / "merged"
    # Given in another order than the plan's: the merged files are in the run's order.
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "merge",
            *map(str, reversed(folders)),
            "--output",
            str(merged_dir),
        ],
        capture_output=True,
        text=True,
    )
    assert merged.returncode == whole_run.returncode == 1, merged.stdout + merged.stderr
    document = json.loads((merged_dir / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    assert comparable(document) == comparable(whole)
    for checkpoint in checkpoint_documents(document):
        assert (merged_dir / checkpoint["artifacts"] / "pytest-report.json").is_file()
    summary = (merged_dir / "summary.md").read_text()
    assert summary.startswith("## ❌ FAILED: 5 problems, 9 checkpoints\n")  # as the whole run's
    assert (whole_output / "summary.md").read_text().startswith(summary.splitlines()[0] + "\n")
    # The rows SCBench reads are one run's too, but for where and how long.
    expected = [{**row, "path": str(merged_dir / row["problem"])} for row in _rows(whole_output)]
    assert _rows(merged_dir) == expected


def _rows(output: Path) -> list[dict]:
    """checkpoint_results.jsonl's rows, without their durations."""
    lines = (output / "checkpoint_results.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "duration"} for line in lines]
