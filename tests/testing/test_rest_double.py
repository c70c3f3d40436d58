"""The REST double's checks API and `workflow_run` event, as GitHub documents them: what a check
run request may hold (50 annotations, 65,535 characters of summary and text, the fields each
needs), 403 for a read-only token, everything read back; and a run's pull requests as GitHub
lists them (none from a fork)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from testing.rest_double import FORK, READ_TOKEN, REPOSITORY, WRITE_TOKEN, RestDouble

SHA = "5" * 40
CHECK_RUNS = f"/repos/{REPOSITORY}/check-runs"


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        yield double


def call(
    double: RestDouble, method: str, path: str, body: object = None, token: str = WRITE_TOKEN
) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}", "X-GitHub-Api-Version": "2022-11-28"}
    return requests.request(method, double.url + path, json=body, headers=headers, timeout=10)


def annotation(n: int) -> dict[str, Any]:
    return {
        "path": "tests/test_checkpoint_1.py",
        "start_line": n,
        "end_line": n,
        "annotation_level": "failure",
        "message": f"failure {n}",
        "title": f"test_{n}",
    }


def created(double: RestDouble, **output: Any) -> requests.Response:
    body = {
        "name": "scbench",
        "head_sha": SHA,
        "status": "completed",
        "conclusion": "failure",
        "output": {"title": "t", "summary": "s", **output},
    }
    return call(double, "POST", CHECK_RUNS, body)


def test_a_check_run_is_created_updated_and_read_back(double: RestDouble) -> None:
    answer = created(double, annotations=[annotation(n) for n in range(1, 51)])
    assert answer.status_code == 201
    run = answer.json()
    assert {"id", "html_url", "url", "status", "conclusion", "output", "check_suite"} <= set(run)
    assert (run["status"], run["conclusion"], run["head_sha"]) == ("completed", "failure", SHA)
    assert run["output"]["annotations_count"] == 50
    more = {"output": {"summary": "s2", "annotations": [annotation(51)]}}
    updated = call(double, "PATCH", f"{CHECK_RUNS}/{run['id']}", more)
    assert updated.status_code == 200
    assert updated.json()["output"]["annotations_count"] == 51
    (stored,) = double.check_runs_on(SHA)
    assert (stored.title, stored.summary, stored.requests) == ("t", "s2", 2)
    assert stored.annotations == [annotation(n) for n in range(1, 52)]
    listed = call(double, "GET", f"{CHECK_RUNS}/{run['id']}/annotations?per_page=100")
    assert listed.json() == stored.annotations


@pytest.mark.parametrize(
    ("output", "field"),
    [
        ({"annotations": [annotation(n) for n in range(1, 52)]}, "annotations"),
        ({"summary": "s" * 65_536}, "summary"),
        ({"text": "t" * 65_536}, "text"),
        ({"annotations": [{**annotation(1), "annotation_level": "error"}]}, "annotation_level"),
        ({"annotations": [{**annotation(1), "title": "t" * 256}]}, "title"),
    ],
)
def test_over_the_documented_limits_is_a_422(
    double: RestDouble, output: dict[str, Any], field: str
) -> None:
    answer = created(double, **output)
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["field"] == field
    assert double.state.check_runs == []


def test_at_the_limits_is_taken(double: RestDouble) -> None:
    answer = created(double, summary="s" * 65_535, text="t" * 65_535)
    assert answer.status_code == 201


@pytest.mark.parametrize("missing", ["name", "head_sha"])
def test_name_and_head_sha_are_required(double: RestDouble, missing: str) -> None:
    body = {"name": "scbench", "head_sha": SHA}
    del body[missing]
    answer = call(double, "POST", CHECK_RUNS, body)
    assert answer.status_code == 422
    assert answer.json()["message"] == f'Invalid request.\n\n"{missing}" wasn\'t supplied.'


def test_completed_needs_a_conclusion_and_a_conclusion_completes(double: RestDouble) -> None:
    without = {"name": "scbench", "head_sha": SHA, "status": "completed"}
    assert call(double, "POST", CHECK_RUNS, without).status_code == 422
    answer = call(
        double, "POST", CHECK_RUNS, {"name": "n", "head_sha": SHA, "conclusion": "success"}
    )
    assert answer.json()["status"] == "completed"


def test_a_read_only_token_may_not_create_one(double: RestDouble) -> None:
    answer = call(double, "POST", CHECK_RUNS, {"name": "n", "head_sha": SHA}, token=READ_TOKEN)
    assert answer.status_code == 403
    assert answer.json()["message"] == "Resource not accessible by integration"


def test_a_workflow_run_event_lists_the_run_s_pull_request_but_never_a_fork_s(
    double: RestDouble,
) -> None:
    own = double.add_run(event="pull_request", pull_request=7, head_sha=SHA, head_branch="f")
    event = double.workflow_run_event(own)
    run = event["workflow_run"]
    assert isinstance(run, dict)
    assert (event["action"], run["id"], run["head_sha"], run["event"]) == (
        "completed",
        own.id,
        SHA,
        "pull_request",
    )
    (listed,) = run["pull_requests"]
    assert (listed["number"], listed["head"]["sha"]) == (7, SHA)
    fork = double.add_run(event="pull_request", pull_request=7, head_repository=FORK)
    forked = double.workflow_run_event(fork)["workflow_run"]
    assert isinstance(forked, dict) and forked["pull_requests"] == []
    # The artifacts of the triggering run, as the second workflow lists them.
    double.add_artifact(fork, "scbench-merged", b"zip")
    artifacts = call(double, "GET", f"/repos/{REPOSITORY}/actions/runs/{fork.id}/artifacts")
    assert [a["name"] for a in artifacts.json()["artifacts"]] == ["scbench-merged"]


def test_a_pull_request_answers_its_head(double: RestDouble) -> None:
    double.state.pull_requests[8] = SHA
    answer = call(double, "GET", f"/repos/{REPOSITORY}/pulls/8")
    assert answer.json()["head"]["sha"] == SHA
    assert call(double, "GET", f"/repos/{REPOSITORY}/pulls/9").status_code == 404
