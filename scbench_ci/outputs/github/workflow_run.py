"""The pull request a `workflow_run` workflow publishes to (`command: publish`), checked.

The pull request's own workflow wrote the number and head commit into its artifact
(pull_request.json); a fork's pull request controls that workflow, so the claim is held to what
GitHub itself says: the head commit must be the triggering run's (`workflow_run.head_sha`), and
the number one of the run's pull requests (`workflow_run.pull_requests`), or, where GitHub lists
none (it never does for a fork's), a pull request whose head is that commit (GET
/repos/{owner}/{repo}/pulls/{number}). Anything else is refused, so a run cannot post to another
pull request than its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from scbench_ci.foundation.errors import UsageError
from scbench_ci.outputs.github.event import TriggeringRun
from scbench_ci.outputs.github.rest import DEFAULT_RETRY, GitHubApiError, GitHubRest
from scbench_ci.outputs.github.retry import RetryPolicy
from scbench_ci.results.pull_request import PullRequestRef

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


class RefusedPullRequest(UsageError):
    """The artifact's pull request is not the triggering run's."""


def verified_pull_request(
    claimed: PullRequestRef,
    run: TriggeringRun,
    env: Mapping[str, str],
    token: str,
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> PullRequestRef:
    """`claimed`, once GitHub confirms it is the run's; a RefusedPullRequest naming what
    disagrees, else."""
    where = f"the artifact's pull request #{claimed.number} at {claimed.head_sha}"
    if run.event not in PULL_REQUEST_EVENTS:
        raise RefusedPullRequest(f"{where}: run {run.id} was started by {run.event!r}")
    if claimed.head_sha != run.head_sha:
        raise RefusedPullRequest(f"{where}: run {run.id} ran at {run.head_sha}")
    if run.pull_requests:
        if claimed not in run.pull_requests:
            listed = ", ".join(f"#{pr.number}" for pr in run.pull_requests)
            raise RefusedPullRequest(f"{where}: run {run.id} is for {listed}")
        return claimed
    head = _head_sha(claimed.number, env, token, retry)
    if head is None:
        raise RefusedPullRequest(f"{where}: the repository has no such pull request")
    if head != claimed.head_sha:
        raise RefusedPullRequest(f"{where}: that pull request's head is {head}")
    return claimed


def _head_sha(number: int, env: Mapping[str, str], token: str, retry: RetryPolicy) -> str | None:
    try:
        with GitHubRest.from_env(env, token, retry=retry) as api:
            answer = api.get(api.repo_path(f"/pulls/{number}"))
    except GitHubApiError as error:
        if error.status == 404:
            return None
        raise
    head = answer.get("head") if isinstance(answer, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) else None
