"""The payload of the event that started the workflow run (GITHUB_EVENT_PATH), as much of it as
the action reads: the pull request a run is for, the commit it checks, and a `workflow_run`
event's triggering run. Anything missing or of the wrong type reads as absent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scbench_ci.results.pull_request import PullRequestRef


@dataclass(frozen=True)
class TriggeringRun:
    """`workflow_run.*` of a `workflow_run` event: the run whose completion started this one."""

    id: int
    head_sha: str
    event: str
    pull_requests: tuple[PullRequestRef, ...]
    """The run's pull requests in this repository, as GitHub lists them: empty for a pull
    request from a fork."""


def event_payload(env: Mapping[str, str]) -> dict[str, Any] | None:
    try:
        event = json.loads(Path(env.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return event if isinstance(event, dict) else None


def pull_request_number(env: Mapping[str, str]) -> int | None:
    """From the event payload: `pull_request.number`, or `issue.number` of a pull request's
    issue (issue_comment events)."""
    event = event_payload(env) or {}
    pull_request, issue = event.get("pull_request"), event.get("issue")
    if isinstance(pull_request, dict):
        number = pull_request.get("number")
    elif isinstance(issue, dict) and isinstance(issue.get("pull_request"), dict):
        number = issue.get("number")
    else:
        return None
    return _whole(number)


def pull_request(env: Mapping[str, str]) -> PullRequestRef | None:
    """The pull request of a `pull_request` (or `pull_request_target`) event: its number and
    the head commit it was opened or pushed at."""
    event = event_payload(env) or {}
    return _reference(event.get("pull_request"))


def head_sha(env: Mapping[str, str]) -> str | None:
    """The commit a check belongs to: the pull request's head (GITHUB_SHA is then the merge
    commit GitHub made, which no one sees), a `workflow_run` event's triggering run's head,
    else GITHUB_SHA."""
    reference, run = pull_request(env), triggering_run(env)
    if reference is not None:
        return reference.head_sha
    if run is not None:
        return run.head_sha
    return env.get("GITHUB_SHA", "").strip() or None


def triggering_run(env: Mapping[str, str]) -> TriggeringRun | None:
    event = event_payload(env) or {}
    run = event.get("workflow_run")
    if not isinstance(run, dict):
        return None
    run_id, sha, name = _whole(run.get("id")), run.get("head_sha"), run.get("event")
    if run_id is None or not isinstance(sha, str) or not isinstance(name, str):
        return None
    listed = run.get("pull_requests")
    references = (_reference(item) for item in (listed if isinstance(listed, list) else ()))
    return TriggeringRun(run_id, sha, name, tuple(ref for ref in references if ref is not None))


def _reference(item: object) -> PullRequestRef | None:
    if not isinstance(item, dict):
        return None
    number, head = _whole(item.get("number")), item.get("head")
    sha = head.get("sha") if isinstance(head, dict) else None
    if number is None or not isinstance(sha, str):
        return None
    return PullRequestRef(number, sha)


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
