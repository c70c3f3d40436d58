"""Whatever already sits in an output folder (anyone who could write there, or a checked-out
submission's own `.scbench/`): the names the evaluator owns are replaced whatever they are, no
link is followed on the way, nothing outside changes, nothing hangs; a verdict, never exit 3."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.threats.conftest import Threat, no_traceback


def _links_and_fifos(threat: Threat) -> None:
    out = threat.output
    (out / "results.json").mkdir(parents=True)
    (out / "results.json/inside.txt").write_text("planted\n")
    os.mkfifo(out / "summary.md")
    (out / "checkpoint_results.jsonl").symlink_to(threat.outside / "file.txt")
    (out / "demo").symlink_to(threat.outside / "folder")


def _planted_in_the_job_folder(threat: Threat) -> None:
    job = threat.output / "demo/checkpoint_1"
    (job / "result.json").mkdir(parents=True)
    (job / "pytest.log").symlink_to(threat.outside / "file.txt")
    (job / "evaluation.json").write_text("{}")
    (job / "evaluation.json").chmod(0o444)
    os.mkfifo(job / "ctrf-report.json")
    (threat.output / "summary.md").symlink_to(threat.outside / "file.txt")
    os.mkfifo(threat.output / "results.json")


def _files_where_folders_go(threat: Threat) -> None:
    threat.output.mkdir()
    (threat.output / "demo").write_text("a file where the problem's folder goes\n")


PLANTS: dict[str, Callable[[Threat], None]] = {
    "links_and_fifos": _links_and_fifos,
    "planted_in_the_job_folder": _planted_in_the_job_folder,
    "files_where_folders_go": _files_where_folders_go,
}


def _assert_ours(output: Path) -> None:
    for name in ("results.json", "summary.md"):
        assert stat.S_ISREG((output / name).lstat().st_mode), name
    job = output / "demo/checkpoint_1"
    assert not (output / "demo").is_symlink() and job.is_dir()
    for entry in job.iterdir():
        if entry.name == "evaluation":  # SCBench's own files (results/scbench_format.py)
            assert stat.S_ISDIR(entry.lstat().st_mode), entry
            assert all(stat.S_ISREG(inner.lstat().st_mode) for inner in entry.iterdir()), entry
            continue
        assert stat.S_ISREG(entry.lstat().st_mode), entry


@pytest.mark.parametrize("plant", PLANTS)
def test_evaluate_replaces_what_is_planted_at_its_names(threat: Threat, plant: str) -> None:
    PLANTS[plant](threat)
    before = threat.outside_listing()
    run = threat.evaluate()
    no_traceback(run)
    assert run.returncode == 1, run.stdout + run.stderr
    results = json.loads((threat.output / "results.json").read_text())
    checkpoint = results["problems"][0]["checkpoints"][0]
    assert (results["passed"], checkpoint["passed"]) == (False, False)
    assert checkpoint["groups"]["Core"]["passed"] == 0
    assert checkpoint["groups"]["Core"]["total"] == 3
    assert "Verdict: FAILED" in run.stdout
    _assert_ours(threat.output)
    assert threat.outside_listing() == before


def test_merge_writes_through_no_link_into_the_output_folder(threat: Threat) -> None:
    shard = threat.root / "shard"
    first = threat.evaluate(output=shard)
    assert first.returncode == 1, first.stdout + first.stderr
    _links_and_fifos(threat)
    before = threat.outside_listing()
    run = threat.cli("merge", shard / "results.json", "--output", threat.output)
    no_traceback(run)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Verdict: FAILED" in run.stdout
    _assert_ours(threat.output)
    assert (threat.output / "demo/checkpoint_1/pytest.log").read_bytes() == (
        shard / "demo/checkpoint_1/pytest.log"
    ).read_bytes()
    assert threat.outside_listing() == before


def test_summary_output_replaces_a_fifo_or_a_link(threat: Threat, tmp_path: Path) -> None:
    shard = threat.root / "shard"
    assert threat.evaluate(output=shard).returncode == 1
    before = threat.outside_listing()
    fifo = tmp_path / "summary.md"
    os.mkfifo(fifo)
    link = tmp_path / "linked.md"
    link.symlink_to(threat.outside / "file.txt")
    for target in (fifo, link):
        run = threat.cli("summary", shard / "results.json", "--output", target)
        no_traceback(run)
        assert run.returncode == 0, run.stderr
        assert stat.S_ISREG(target.lstat().st_mode)
        assert "demo" in target.read_text()
    assert threat.outside_listing() == before


def test_an_output_folder_inside_the_submission_is_refused(threat: Threat) -> None:
    inside = threat.submission / ".scbench"
    run = threat.evaluate(output=inside)
    no_traceback(run)
    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"scbench-ci: error: --output: {inside} is inside the submission {threat.submission}, "
        "whose files are not trusted; give an output folder outside it"
    )
    assert not inside.exists()


def test_an_output_folder_inside_a_problem_under_review_is_refused(threat: Threat) -> None:
    inside = threat.problem.root / "out"
    run = threat.cli("check", threat.problem.root, "--output", inside, "--executor", "local")
    no_traceback(run)
    assert run.returncode == 2
    assert f"--output: {inside} is inside the problem {threat.problem.root}" in run.stderr
    assert not inside.exists()
