"""The runs `check` makes of a problem, before any of them runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from scbench_ci.check.jobs import check_jobs
from scbench_ci.problem.load import load_problem
from testing.paths import CHECK_REPO_PROBLEMS

CLEAN = (CHECK_REPO_PROBLEMS / "clean").resolve()


def test_each_checkpoint_collected_its_reference_repeated_and_an_empty_submission(
    tmp_path: Path,
) -> None:
    jobs = check_jobs(load_problem(CLEAN), empty=tmp_path, repeat=2, include_prior_tests=None)
    solution = CLEAN / "solutions"
    assert [
        (job.label, job.artifacts, job.submission, job.include_prior_tests, job.pytest_args)
        for job in jobs
    ] == [
        ("clean / checkpoint_1, tests collected only", "clean/checkpoint_1/collect",
         solution / "checkpoint_1", False, ("--collect-only",)),
        ("clean / checkpoint_1, reference solution (run 1/2)", "clean/checkpoint_1/oracle/run-1",
         solution / "checkpoint_1", True, ()),
        ("clean / checkpoint_1, reference solution (run 2/2)", "clean/checkpoint_1/oracle/run-2",
         solution / "checkpoint_1", True, ()),
        ("clean / checkpoint_1, empty submission", "clean/checkpoint_1/empty", tmp_path, False,
         ()),
        ("clean / checkpoint_2, tests collected only", "clean/checkpoint_2/collect",
         solution / "checkpoint_2", False, ("--collect-only",)),
        ("clean / checkpoint_2, reference solution (run 1/2)", "clean/checkpoint_2/oracle/run-1",
         solution / "checkpoint_2", True, ()),
        ("clean / checkpoint_2, reference solution (run 2/2)", "clean/checkpoint_2/oracle/run-2",
         solution / "checkpoint_2", True, ()),
        ("clean / checkpoint_2, empty submission", "clean/checkpoint_2/empty", tmp_path, False,
         ()),
    ]  # fmt: skip
    once = check_jobs(load_problem(CLEAN), empty=tmp_path, repeat=1, include_prior_tests=False)
    assert [(job.artifacts, job.include_prior_tests) for job in once][1] == (
        "clean/checkpoint_1/oracle",
        False,
    )


def test_without_reference_solutions_the_tests_are_collected_with_nothing(
    tmp_path: Path,
) -> None:
    root = Path(
        shutil.copytree(CLEAN, tmp_path / "clean", ignore=shutil.ignore_patterns("solutions"))
    )
    jobs = check_jobs(load_problem(root), empty=tmp_path, repeat=2, include_prior_tests=None)
    assert [(job.label, job.submission) for job in jobs] == [
        ("clean / checkpoint_1, tests collected only", tmp_path),
        ("clean / checkpoint_1, empty submission", tmp_path),
        ("clean / checkpoint_2, tests collected only", tmp_path),
        ("clean / checkpoint_2, empty submission", tmp_path),
    ]


def test_with_the_network_cut_the_reference_runs_once_more(tmp_path: Path) -> None:
    jobs = check_jobs(
        load_problem(CLEAN), empty=tmp_path, repeat=2, include_prior_tests=None, offline=True
    )
    offline = [job for job in jobs if job.cut_network]
    assert [(job.label, job.artifacts, job.include_prior_tests) for job in offline] == [
        ("clean / checkpoint_1, reference solution without the network",
         "clean/checkpoint_1/offline", True),
        ("clean / checkpoint_2, reference solution without the network",
         "clean/checkpoint_2/offline", True),
    ]  # fmt: skip
    assert {job.submission for job in offline} == {
        CLEAN / "solutions" / name for name in ("checkpoint_1", "checkpoint_2")
    }
    assert len(jobs) == 10
