"""The action's Check Run end to end: its image run as GitHub's runner runs it
(testing/runner.py), on a pull request, against the REST double. A problem whose 60 cases all fail
gives a Check Run on the pull request's head with every one of them as an annotation (two
requests: GitHub takes 50 at a time), while the step's own workflow-command annotations stop at
10; the artifact's folder names the pull request for a `workflow_run` workflow. With the
read-only token of a fork's pull request, the Check Run is one warning naming the permission."""

from __future__ import annotations

import re
from pathlib import Path

import docker

from scbench_ci.results.file import load_pull_request
from scbench_ci.results.pull_request import PullRequestRef
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder
from testing.rest_double import READ_TOKEN, REPOSITORY, WORKFLOW, Grant, RestDouble
from testing.runner import JOB_TOKEN, ActionManifest, RunnerHost, RunnerResult, Step, run_step

PR = 7
HEAD = "fe" * 20
CASES = 60
NAME = "scbench-many"
MANIFEST = ActionManifest.load(REPO_ROOT / "action.yml")
FAILING_CASES = f"""
import pytest


@pytest.mark.parametrize("case", range({CASES}))
def test_case(case):
    assert case < 0, f"case {{case}} fails"
"""


def _run(
    docker_client: docker.DockerClient,
    image: str,
    root: Path,
    double: RestDouble,
    with_: dict[str, str],
) -> tuple[RunnerResult, Path]:
    host = RunnerHost(root, repository=REPOSITORY)
    host.create()
    problem = ProblemFolder(
        host.workspace / "problems/many",
        {"name": "many", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
    )
    problem.write("tests/test_checkpoint_1.py", FAILING_CASES)
    (host.workspace / "submission").mkdir()
    (host.workspace / "submission/main.py").write_text("print('nothing')\n")
    ref = f"refs/pull/{PR}/merge"
    step = Step(
        with_=with_,
        github={
            "action": "__scbench_evaluate",
            "action_repository": "scbench/evaluate",
            "action_ref": "v1",
            "actor": "contributor",
            "api_url": double.url,
            "event_name": "pull_request",
            "job": "evaluate",
            "ref": ref,
            "repository": REPOSITORY,
            "repository_owner": REPOSITORY.split("/")[0],
            "retention_days": "30",
            "run_attempt": "1",
            "run_id": "6161",
            "run_number": "3",
            "server_url": "https://github.com",
            "sha": "0" * 40,
            "workflow": "Pull request",
            "workflow_ref": f"{REPOSITORY}/.github/workflows/{WORKFLOW}@{ref}",
        },
        event={
            "action": "synchronize",
            "number": PR,
            "pull_request": {
                "number": PR,
                "head": {"ref": "feature", "sha": HEAD, "repo": {"full_name": "contributor/demo"}},
                "base": {"ref": "main", "repo": {"full_name": REPOSITORY}},
            },
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        },
    )
    return run_step(docker_client, image, MANIFEST, host, step), host.workspace


def _inputs(test_image: str, **more: str) -> dict[str, str]:
    return {
        "problem": "problems/many",
        "checkpoint": "checkpoint_1",
        "submission": "submission",
        "image": test_image,
        "upload_artifact": "false",
        "artifact_name": NAME,
        "check_run": "true",
        **more,
    }


def test_the_action_publishes_a_check_run_with_every_failing_test(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
) -> None:
    with RestDouble() as double:
        double.state.tokens[JOB_TOKEN] = Grant()
        result, workspace = _run(
            docker_client, action_image, tmp_path / "runner", double, _inputs(test_image)
        )
        (check,) = double.check_runs_on(HEAD)
        posts = double.requests_to("/check-runs", "POST")
        patches = double.requests_to("/check-runs/", "PATCH")
    assert result.exit_code == 1, result.log
    assert (check.name, check.status, check.conclusion) == (NAME, "completed", "failure")
    assert check.title == "❌ FAILED"
    assert check.text is not None and check.text.startswith("## ❌ FAILED")
    assert len(check.annotations) == CASES > 50
    assert [r.status for r in posts] == [201]
    assert [r.status for r in patches] == [200]
    paths = {annotation["path"] for annotation in check.annotations}
    assert paths == {"problems/many/tests/test_checkpoint_1.py"}
    messages = {str(annotation["message"]) for annotation in check.annotations}
    assert all("fails" in message for message in messages) and len(messages) == CASES
    # The step's own annotations stop at 10 errors, as GitHub shows them.
    assert len(re.findall(r"^::error ", result.log, re.MULTILINE)) == 10
    assert f"Check Run {NAME} ({CASES} annotations): https://github.com/" in result.log
    # What the `workflow_run` workflow reads back to publish this run.
    pull_request = load_pull_request(workspace / ".scbench/pull_request.json")
    assert pull_request == PullRequestRef(PR, HEAD)


def test_a_fork_s_read_only_token_is_one_warning(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
) -> None:
    with RestDouble() as double:
        inputs = _inputs(test_image, github_token=READ_TOKEN)
        result, _ = _run(docker_client, action_image, tmp_path / "runner", double, inputs)
        assert double.state.check_runs == []
    assert result.exit_code == 1, result.log
    warnings = re.findall(r"^::warning title=scbench-ci::(.*)$", result.log, re.MULTILINE)
    (check_run,) = [warning for warning in warnings if "Check Run" in warning]
    assert check_run.startswith("no Check Run: the token may not create check runs")
    assert "`permissions: checks: write`" in check_run
    assert len(re.findall(r"^::error ", result.log, re.MULTILINE)) == 10
