"""Planning a run: folders of problems, submission templates, every error at once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ProblemError, UsageError
from scbench_ci.job.plan import (
    Target,
    estimated_durations,
    plan_jobs,
    plan_targets,
    problem_folders,
    repeats,
    start_order,
)
from testing.problems import ProblemFolder


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A problem repository: problems/{alpha,beta} and a folder that is not a problem."""
    ProblemFolder(tmp_path / "problems/beta")
    ProblemFolder(
        tmp_path / "problems/alpha",
        {"name": "alpha", "entry_file": "main", "checkpoints": {"one": {}, "two": {}}},
    )
    (tmp_path / "problems/docs").mkdir()
    return tmp_path


def test_a_folder_of_problems_is_every_problem_in_it_by_name(repository: Path) -> None:
    problems = repository / "problems"
    assert problem_folders((problems,)) == (problems / "alpha", problems / "beta")
    # A problem given twice (as itself and in its folder) is evaluated once.
    assert problem_folders((problems / "beta", problems)) == (
        problems / "beta",
        problems / "alpha",
    )


def test_jobs_in_order_with_their_submissions_and_folders(repository: Path) -> None:
    plan = plan_jobs(
        (repository / "problems",),
        "all",
        str(repository / "runs/x/{problem}/{checkpoint}/snapshot"),
        repository / "out",
        None,
    )
    assert [(job.label, job.artifacts) for job in plan.jobs] == [
        ("alpha / one", "alpha/one"),
        ("alpha / two", "alpha/two"),
        ("beta / checkpoint_1", "beta/checkpoint_1"),
        ("beta / checkpoint_2", "beta/checkpoint_2"),
        ("beta / checkpoint_3", "beta/checkpoint_3"),
    ]
    assert plan.jobs[1].submission == repository / "runs/x/alpha/two/snapshot"
    assert [job.include_prior_tests for job in plan.jobs] == [True] * 5


def test_a_named_checkpoint_must_be_in_every_problem(repository: Path) -> None:
    problems = (repository / "problems/alpha", repository / "problems/beta")
    with pytest.raises(ProblemError, match=r"beta/config\.yaml: checkpoints: no checkpoint 'two'"):
        plan_jobs(problems, "two", ".", repository / "o", None)


def test_every_error_is_reported_at_once(repository: Path) -> None:
    (repository / "problems/beta/tests/test_checkpoint_2.py").unlink()
    (repository / "problems/gamma").mkdir()
    (repository / "problems/gamma/config.yaml").write_text("name: [")
    with pytest.raises(UsageError) as raised:
        plan_jobs((repository / "problems",), "all", str(repository), repository, None)
    message = str(raised.value)
    # One config.yaml, one test file (needed by two jobs, said once), five jobs' submissions.
    assert message.startswith("7 problems with the run:\n  - ")
    assert "gamma/config.yaml" in message
    assert "beta/tests/test_checkpoint_2.py: missing (the tests of checkpoint 'checkpoint_2')" in (
        message
    )
    assert "would write over the submission" in message


def test_two_problems_with_one_folder_name_would_share_an_output_folder(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "a/demo")
    ProblemFolder(tmp_path / "b/demo")
    with pytest.raises(UsageError, match="have the same folder name"):
        plan_jobs((tmp_path / "a/demo", tmp_path / "b/demo"), "all", ".", tmp_path / "o", None)


def test_two_problems_of_one_name_are_refused_before_any_run(tmp_path: Path) -> None:
    """SCBench keys a run's rows by problem name: the second would crash the run at its end."""
    ProblemFolder(tmp_path / "problems/first")
    ProblemFolder(tmp_path / "problems/second")
    with pytest.raises(ProblemError) as raised:
        plan_jobs((tmp_path / "problems",), "all", ".", tmp_path / "o", None)
    assert str(raised.value) == (
        f"{tmp_path}/problems/second/config.yaml: name: 'demo' is also the name of "
        f"{tmp_path}/problems/first: SCBench keys a run's results by problem name"
    )


def test_a_folder_without_problems_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"holds no config\.yaml and no problem folders"):
        plan_jobs((tmp_path,), "all", ".", tmp_path / "o", None)


def test_a_missing_templated_submission_is_planned_not_refused(repository: Path) -> None:
    plan = plan_jobs(
        (repository / "problems/alpha",),
        "one",
        str(repository / "nowhere/{checkpoint}"),
        repository / "o",
        False,
    )
    assert plan.jobs[0].submission == repository / "nowhere/one"
    assert plan.jobs[0].include_prior_tests is False


def test_a_single_submission_that_is_not_there_is_refused(repository: Path) -> None:
    """One folder for every job: a missing one is a typo of the run, exit 2 before anything."""
    with pytest.raises(UsageError) as refused:
        plan_jobs((repository / "problems/alpha",), "one", "nowhere", repository / "o", False)
    assert str(refused.value) == "submission 'nowhere': no such folder"


def test_a_repeated_job_runs_in_a_folder_of_its_own_each_time(repository: Path) -> None:
    plan = plan_jobs(
        (repository / "problems/alpha",), "one", str(repository), repository / "out", None
    )
    (job,) = plan.jobs
    assert repeats(job, 1) == [job]
    runs = repeats(replace(job, role="reference solution"), 2)
    assert [(run.label, run.artifacts, run.folder) for run in runs] == [
        ("alpha / one, reference solution (run 1/2)", "alpha/one/run-1", "alpha/one"),
        ("alpha / one, reference solution (run 2/2)", "alpha/one/run-2", "alpha/one"),
    ]
    assert plan_jobs(
        (repository / "problems/alpha",),
        "one",
        str(repository),
        repository / "out",
        None,
        repeat=2,
    ).jobs == tuple(repeats(job, 2))


def test_the_longest_start_first_by_the_durations_known(repository: Path) -> None:
    """Unknown ones at the median of the known; ties and no durations keep the plan's order."""
    jobs = plan_jobs(
        (repository / "problems",), "all", "s/{problem}/{checkpoint}", repository, None
    ).jobs
    assert start_order(jobs, {}) == [0, 1, 2, 3, 4]
    durations = {"alpha/two": 30.0, "beta/checkpoint_1": 5.0, "beta/checkpoint_3": 12.0}
    # alpha/one and beta/checkpoint_2 are taken at 12 s, the median.
    assert start_order(jobs, durations) == [1, 0, 3, 4, 2]
    assert estimated_durations(jobs, {})["alpha/one"] == 10.0


def test_targets_are_jobs_problem_by_problem_each_with_its_submission(repository: Path) -> None:
    problems = repository / "problems"
    plan = plan_targets(
        (
            Target(problems / "beta", "checkpoint_2", repository / "b2"),
            Target(problems / "alpha", "two", repository / "a2"),
            Target(problems / "beta", "checkpoint_1", repository / "b1"),
        ),
        repository / "out",
        None,
        repeat=2,
    )
    assert [(job.label, job.submission.name) for job in plan.jobs] == [
        ("beta / checkpoint_1 (run 1/2)", "b1"),
        ("beta / checkpoint_1 (run 2/2)", "b1"),
        ("beta / checkpoint_2 (run 1/2)", "b2"),
        ("beta / checkpoint_2 (run 2/2)", "b2"),
        ("alpha / two (run 1/2)", "a2"),
        ("alpha / two (run 2/2)", "a2"),
    ]
    assert [problem.root.name for problem in plan.problems] == ["beta", "alpha"]


def test_bad_targets_are_reported_at_once(repository: Path) -> None:
    problems = repository / "problems"
    with pytest.raises(UsageError) as raised:
        plan_targets(
            (
                Target(problems / "alpha", "three", repository / "a"),
                Target(problems / "beta", "checkpoint_1", repository / "b"),
                Target(problems / "beta", "checkpoint_1", repository / "c"),
                Target(problems / "gamma", "one", repository / "g"),
                Target(problems / "alpha", "one", repository / "out/a"),
            ),
            repository / "out",
            None,
        )
    message = str(raised.value)
    assert message.startswith("4 problems with the run:")
    assert "checkpoints: no checkpoint 'three' (known: one, two)" in message
    assert "targets[2]: beta/checkpoint_1 is already a target" in message
    assert "gamma" in message
    assert "--output: " in message and "would write over the submission" in message
