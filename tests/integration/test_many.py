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
from testing.examples import EXPECTED, SharedEvaluations, group_counts
from testing.paths import EXAMPLES, REPO_ROOT
from testing.results import checkpoint_documents, comparable

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
SOLVED = sorted((p, c) for p, c, s in EXPECTED if s == f"solutions/{c}")


def scbench(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("evaluate", *args, cwd=cwd, timeout=900)


def per_test(checkpoint: dict) -> dict[str, tuple[str, str, str]]:
    return {t["id"]: (t["checkpoint"], t["group"], t["status"]) for t in checkpoint["tests"]}


@pytest.fixture(scope="module")
def repository_run(tmp_path_factory: pytest.TempPathFactory, test_image: str) -> tuple:
    """Every bundled problem's reference solutions, two evaluations at a time."""
    output = tmp_path_factory.mktemp("repository")
    run = scbench(
        *("--problem", EXAMPLES, "--checkpoint", "all", "--jobs", "2"),
        *("--submission", EXAMPLES / "{problem}/solutions/{checkpoint}"),
        *("--output", output, "--executor", "docker", "--image", test_image),
    )
    return run, output, json.loads((output / "results.json").read_text())


def test_a_problem_repository_in_one_command(repository_run: tuple) -> None:
    run, output, results = repository_run
    # Every reference solution passes core-cases (marks/checkpoint_2 has no Core test, which
    # core-cases passes, as SCBench's PassPolicy.check does): exit 0.
    assert run.returncode == 0, run.stdout + run.stderr
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
    assert results["totals"]["checkpoints_passed"] == 9


def test_side_by_side_output_never_interleaves(repository_run: tuple) -> None:
    run, _, _ = repository_run
    lines = run.stdout.splitlines()
    finished = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] for line in finished] == [f"[{i}/9" for i in range(1, 10)]
    assert any("marks / checkpoint_2: passed, Core 0/0, all 4/4" in line for line in finished)
    # The tests' own output went to each evaluation's log, not to the console: what names a test
    # there is the recap of failing tests in passing checkpoints (`e.g. <id>`, issue #52).
    recap = lines.index(next(line for line in lines if line.startswith("Failing tests in")))
    tests_output = [line for line in lines[:recap] if not line.startswith("Verdict: ")]
    assert not any("PASSED" in line or "::test_" in line for line in tests_output)


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
    `--select`, then `merge`: the same results.json as evaluating everything at once."""
    _, whole_output, whole = repository_run
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
        )
        assert run.returncode in (0, 1), run.stderr
        folders.append(folder.parent)
    merged_dir = tmp_path / "merged"
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "merge",
            *map(str, folders),
            "--output",
            str(merged_dir),
        ],
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 0, merged.stderr  # as the whole run
    document = json.loads((merged_dir / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    assert comparable(document) == comparable(whole)
    for checkpoint in checkpoint_documents(document):
        assert (merged_dir / checkpoint["artifacts"] / "pytest-report.json").is_file()
    summary = (merged_dir / "summary.md").read_text()
    assert summary.startswith("## ✅ PASSED: 5 problems, 9 checkpoints\n")


def test_merged_shards_have_the_rows_scbench_reads_from_one_run(
    tmp_path: Path, test_image: str
) -> None:
    """Two checkpoints evaluated as two shards (`--select`) and merged: the same
    checkpoint_results.jsonl as one evaluation of both, but for where and how long."""
    selections = ("wordstat/checkpoint_1", "wordstat/checkpoint_2")

    def evaluate(output: Path, *select: str) -> Path:
        run = scbench(
            *("--problem", EXAMPLES / "wordstat", "--checkpoint", "all"),
            *(arg for name in select for arg in ("--select", name)),
            *("--submission", EXAMPLES / "{problem}/solutions/{checkpoint}"),
            *("--output", output, "--executor", "docker", "--image", test_image),
        )
        assert run.returncode == 0, run.stdout + run.stderr
        return output

    whole = evaluate(tmp_path / "whole", *selections)
    shards = [evaluate(tmp_path / name.replace("/", "-"), name) for name in selections]
    merged_dir = tmp_path / "merged"
    merged = run_cli("merge", *reversed(shards), "--output", merged_dir)
    assert merged.returncode == 0, merged.stderr

    def rows(output: Path) -> list[dict]:
        lines = (output / "checkpoint_results.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(line).items() if k != "duration"} for line in lines]

    expected = [{**row, "path": str(merged_dir / "wordstat")} for row in rows(whole)]
    assert [row["checkpoint"] for row in expected] == ["checkpoint_1", "checkpoint_2"]
    assert rows(merged_dir) == expected
