"""`command: publish` in a `workflow_run` workflow, through the action's main against the REST
double: the triggering run's artifact is downloaded and read through the strict reader, its pull
request checked against the event, and the run published to that pull request (comment, Check
Run with every annotation) without running anything of it. A claim that is not the run's own is
refused."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from scbench_ci.action.main import main
from scbench_ci.action.publish import unverified_note
from scbench_ci.job.reports import Status
from scbench_ci.results.file import write_pull_request, write_results
from scbench_ci.results.pull_request import PullRequestRef
from scbench_ci.trust.markdown import text
from testing.rest_double import FORK, REPOSITORY, WRITE_TOKEN, RestDouble, Run
from testing.results import make_checkpoint, make_run, make_test

PR = 7
HEAD = "a1" * 20
NAME = "scbench-merged"
FAILING = 61
"""More failing tests than one request of the checks API takes."""


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        double.state.pull_requests[PR] = HEAD
        yield double


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def artifact(workspace: Path, claim: PullRequestRef | None) -> bytes:
    """The pull request workflow's artifact: results.json of a run with FAILING failing tests of
    the problem at problems/demo, and the pull request it claims."""
    tests = [make_test(f"test_{n}", Status.FAILED) for n in range(FAILING)]
    run = make_run(make_checkpoint(*tests, make_test("test_ok", Status.PASSED)))
    (problem,) = run.problems
    placed = dataclasses.replace(problem, path=str(workspace / "problems/demo"))
    folder = workspace.parent / "made"
    results = write_results(dataclasses.replace(run, problems=(placed,)), folder)
    if claim is not None:
        write_pull_request(claim, folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.iterdir():
            bundle.write(path, path.name)
    assert results.exists()
    return buffer.getvalue()


def publish(
    double: RestDouble, workspace: Path, run: Run, **inputs: str
) -> tuple[int, str, dict[str, str]]:
    """The publish step of the `workflow_run` workflow: its exit code, log and environment."""
    event = workspace.parent / "event.json"
    event.write_text(json.dumps(double.workflow_run_event(run)))
    for name in ("outputs", "summary"):
        (workspace.parent / name).touch()
    given = {"artifact_name": NAME, "comment": "true", "check_run": "true", **inputs}
    env = double.environment(
        GITHUB_EVENT_NAME="workflow_run",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(workspace.parent / "outputs"),
        GITHUB_STEP_SUMMARY=str(workspace.parent / "summary"),
        GITHUB_SHA="d" * 40,
        INPUT_COMMAND="publish",
        INPUT_GITHUB_TOKEN=WRITE_TOKEN,
        **{f"INPUT_{name.upper()}": value for name, value in given.items()},
    )
    stdout = io.StringIO()
    return main(env, stdout), stdout.getvalue(), env


def fork_run(double: RestDouble, workspace: Path, claim: PullRequestRef | None) -> Run:
    run = double.add_run(event="pull_request", head_sha=HEAD, head_repository=FORK, pull_request=PR)
    double.add_artifact(run, NAME, artifact(workspace, claim))
    return run


def test_a_fork_s_pull_request_gets_its_comment_and_check_run(
    double: RestDouble, workspace: Path
) -> None:
    run = fork_run(double, workspace, PullRequestRef(PR, HEAD))
    code, log, _ = publish(double, workspace, run)
    assert code == 0, log
    (comment,) = double.comments_on(PR)
    assert comment.body.startswith(f"{unverified_note(run.id)}## ❌ FAILED")
    (check,) = double.check_runs_on(HEAD)
    assert (check.name, check.conclusion) == (NAME, "neutral")
    assert check.title == "Not verified: ❌ FAILED"
    assert check.text is not None and check.text.startswith("## ❌ FAILED")
    assert len(check.annotations) == FAILING > 50
    assert {a["path"] for a in check.annotations} == {"problems/demo/tests/test_checkpoint_1.py"}
    assert f"Check Run {NAME} ({FAILING} annotations): https://github.com/" in log
    # Its workflow-command annotations stop at 10, as a step's do.
    assert len(re.findall(r"^::error ", log, re.MULTILINE)) == 10
    # The results, read through the strict reader, are written again in the workspace.
    assert json.loads((workspace / ".scbench/results.json").read_text())["passed"] is False
    # Nothing of the pull request is fetched but its head, to check the claim.
    asked = {(r.method, r.path) for r in double.requests}
    assert ("GET", f"/repos/{REPOSITORY}/pulls/{PR}") in asked
    assert not any("/contents" in path or "/tarball" in path for _, path in asked)


def all_pass_artifact(workspace: Path, claim: PullRequestRef) -> bytes:
    """What a fork that edits its workflow uploads: a consistent results.json in which every
    test passes, for its true head."""
    run = make_run(make_checkpoint(*(make_test(f"test_{n}", Status.PASSED) for n in range(5))))
    folder = workspace.parent / "forged"
    write_results(run, folder)
    write_pull_request(claim, folder)
    return zip_of(folder)


def test_a_fork_s_all_pass_claim_is_never_a_success(double: RestDouble, workspace: Path) -> None:
    run = double.add_run(event="pull_request", head_sha=HEAD, head_repository=FORK, pull_request=PR)
    double.add_artifact(run, NAME, all_pass_artifact(workspace, PullRequestRef(PR, HEAD)))
    code, log, env = publish(double, workspace, run)
    assert code == 0, log
    (check,) = double.check_runs_on(HEAD)
    assert (check.conclusion, check.title) == ("neutral", "Not verified: ✅ PASSED")
    said = (
        f"This result was reported by the pull request's own workflow (run {run.id}), which the "
        "pull request can change, and was not verified by this repository"
    )
    assert check.summary is not None and said in check.summary.split("\n\n")[0]
    (comment,) = double.comments_on(PR)
    assert said in comment.body.split("\n\n")[0]
    assert Path(env["GITHUB_STEP_SUMMARY"]).read_text().startswith(unverified_note(run.id))
    assert not [c for c in double.state.check_runs if c.conclusion == "success"]


def test_a_pull_request_from_the_repository_is_checked_against_the_event(
    double: RestDouble, workspace: Path
) -> None:
    run = double.add_run(event="pull_request", head_sha=HEAD, pull_request=PR)
    double.add_artifact(run, NAME, artifact(workspace, PullRequestRef(PR, HEAD)))
    code, log, _ = publish(double, workspace, run)
    assert code == 0, log
    assert len(double.comments_on(PR)) == 1
    # The event lists the pull request: no need to ask for it.
    assert not double.requests_to("/pulls/")


OTHER_HEAD = "c3" * 20


@pytest.mark.parametrize(
    ("claim", "refusal"),
    [
        (PullRequestRef(9, HEAD), "the repository has no such pull request"),
        (PullRequestRef(8, HEAD), f"that pull request's head is {OTHER_HEAD}"),
        (PullRequestRef(PR, "b2" * 20), f"ran at {HEAD}"),
    ],
    ids=["no-such-pull-request", "another-pull-request", "another-commit"],
)
def test_a_claim_that_is_not_the_run_s_own_is_refused(
    double: RestDouble, workspace: Path, claim: PullRequestRef, refusal: str
) -> None:
    double.state.pull_requests[8] = OTHER_HEAD
    run = fork_run(double, workspace, claim)
    code, log, _ = publish(double, workspace, run)
    assert code == 2
    (error,) = re.findall(r"^::error title=scbench-ci::(.*)$", log, re.MULTILINE)
    assert error.startswith(f"the artifact's pull request #{claim.number} at {claim.head_sha}")
    assert refusal in error
    assert [double.comments_on(n) for n in (PR, 8, 9)] == [[], [], []]
    # The Check Run says why, on the triggering run's commit: as text, the message quoting input.
    (check,) = double.check_runs_on(HEAD)
    assert (check.conclusion, check.summary) == ("failure", text(error.replace("%0A", "\n")))


def test_another_pull_request_of_the_repository_is_refused(
    double: RestDouble, workspace: Path
) -> None:
    double.state.pull_requests[8] = HEAD
    run = double.add_run(event="pull_request", head_sha=HEAD, pull_request=PR)
    double.add_artifact(run, NAME, artifact(workspace, PullRequestRef(8, HEAD)))
    code, log, _ = publish(double, workspace, run)
    assert code == 2
    assert f"run {run.id} is for #{PR}" in log
    assert double.comments_on(8) == []


def test_a_run_without_a_pull_request_gets_a_check_run_only(
    double: RestDouble, workspace: Path
) -> None:
    run = double.add_run(event="push", head_sha=HEAD)
    double.add_artifact(run, NAME, artifact(workspace, None))
    code, log, _ = publish(double, workspace, run)
    assert code == 0, log
    assert len(double.check_runs_on(HEAD)) == 1
    assert "No pull request comment: this run (event workflow_run)" in log
    assert double.comments_on(PR) == []


def test_a_forged_pull_request_file_is_refused_by_the_strict_reader(
    double: RestDouble, workspace: Path
) -> None:
    run = fork_run(double, workspace, PullRequestRef(PR, HEAD))
    made = workspace.parent / "made"
    (made / "pull_request.json").write_text('{"number": 7, "head_sha": "HEAD; rm -rf /"}')
    double.state.artifacts[-1].content = zip_of(made)
    code, log, _ = publish(double, workspace, run)
    assert code == 2
    assert "pull_request.json: head_sha: not a commit's full SHA" in log
    assert double.comments_on(PR) == []


def zip_of(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.iterdir():
            bundle.write(path, path.name)
    return buffer.getvalue()


def test_publish_needs_a_workflow_run_event_and_an_artifact_name(
    double: RestDouble, workspace: Path, tmp_path: Path
) -> None:
    run = fork_run(double, workspace, PullRequestRef(PR, HEAD))
    code, log, _ = publish(double, workspace, run, artifact_name="")
    assert code == 2
    assert "input artifact_name: is required (command publish" in log
    code, log, _ = publish(double, workspace, run, artifact_name="scbench-nothing")
    assert code == 2
    assert f"artifact scbench-nothing of run {run.id} does not exist" in log
    env = double.environment(
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_EVENT_PATH=str(tmp_path / "none.json"),
        INPUT_COMMAND="publish",
        INPUT_ARTIFACT_NAME=NAME,
    )
    stdout = io.StringIO()
    assert main(env, stdout) == 2
    assert "publish runs in a workflow started by `on: workflow_run`" in stdout.getvalue()
