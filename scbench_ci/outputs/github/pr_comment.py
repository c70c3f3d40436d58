"""The sticky pull request comment: one per tag, written again on every run, never two.

A hidden tag marks the comment; it comes from the workflow, the job and a key the caller gives
(a problem or artifact name), so matrix entries and other jobs keep their own comments. The
comment with the tag is edited in place, or created. Two jobs with one tag can both create one:
after creating, the list is read again and the oldest tagged comment is kept, with this body, and
the others deleted. Only comments by a bot (what the job's GITHUB_TOKEN or an app writes as), or by
the account that just created one, count as ours: anyone can paste a tag into a comment. The tag
counts only as a comment's last line, where this module puts it: text quoted in the body (a test's
output in a code block) cannot hold another job's tag. The body is markdown: escaped
(trust/markdown.py) unless it is Markdown. Every failure is a warning.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scbench_ci.outputs.github.event import pull_request_number
from scbench_ci.outputs.github.rest import DEFAULT_RETRY, GitHubApiError, GitHubError, GitHubRest
from scbench_ci.outputs.github.retry import RetryPolicy
from scbench_ci.trust.markdown import Markdown, ended, formatted, markdown

COMMENT_LIMIT = 65_536
"""GitHub's longest comment body, in characters."""
CUT_NOTE = formatted(
    "> [!NOTE]\n"
    "> This comment was cut to GitHub's limit of {} characters; the job summary "
    "and the run's artifact have all of it.",
    f"{COMMENT_LIMIT:,}",
)


@dataclass(frozen=True)
class CommentResult:
    url: str | None
    warning: str | None
    action: str
    """"created", "updated" or "skipped"."""


@dataclass(frozen=True)
class _Comment:
    id: int
    body: str
    url: str
    login: str
    bot: bool


def comment_tag(env: Mapping[str, str], key: str) -> Markdown:
    """The hidden marker of the comment of this workflow file, job (GITHUB_JOB) and `key`."""
    workflow = env.get("GITHUB_WORKFLOW_REF", "").partition("@")[0]
    job = env.get("GITHUB_JOB", "")
    seed = "\0".join((workflow or env.get("GITHUB_WORKFLOW", ""), job, key))
    return formatted("<!-- scbench-ci:{} -->", hashlib.sha256(seed.encode()).hexdigest()[:16])


def comment_body(body: str, tag: Markdown) -> Markdown:
    """`body` (escaped unless it is Markdown) with `tag` after it, cut (at a line, with a note)
    to fit GitHub's limit."""
    return ended(markdown(body), tag, COMMENT_LIMIT, CUT_NOTE)


def upsert_comment(
    body: str,
    tag: Markdown,
    env: Mapping[str, str],
    token: str,
    *,
    number: int | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> CommentResult:
    """Write `body` as the comment with `tag` of pull request `number` (None: the event's),
    editing it when there is one."""
    number = pull_request_number(env) if number is None else number
    if number is None:
        event = env.get("GITHUB_EVENT_NAME") or "unknown"
        return CommentResult(
            None,
            f"comment is on, but this run (event {event}) is not for a pull request",
            "skipped",
        )
    if not token:
        return CommentResult(
            None,
            f"there is no GitHub token to comment on pull request #{number} with",
            "skipped",
        )
    try:
        with GitHubRest.from_env(env, token, retry=retry) as api:
            return _upsert(api, number, comment_body(body, tag), tag)
    except GitHubApiError as error:
        return CommentResult(None, _api_warning(number, error), "skipped")
    except GitHubError as error:
        return CommentResult(None, f"pull request #{number}: {error}", "skipped")


def _upsert(api: GitHubRest, number: int, text: str, tag: str) -> CommentResult:
    comments = api.repo_path(f"/issues/{number}/comments")
    ours = _ours(api.paginate(comments), tag, me=None)
    if ours:
        return CommentResult(_converge(api, ours, text), None, "updated")
    created = _comment(api.post(comments, {"body": text}))
    if created is None:
        raise GitHubError(f"POST {comments} did not answer a comment")
    # Another job with this tag may have created one meanwhile.
    ours = _ours(api.paginate(comments), tag, me=created.login)
    if created.id not in {comment.id for comment in ours}:
        ours = sorted([*ours, created], key=lambda comment: comment.id)
    url = _converge(api, ours, text)
    return CommentResult(url, None, "created" if ours[0].id == created.id else "updated")


def _converge(api: GitHubRest, ours: list[_Comment], text: str) -> str:
    """Keep the oldest comment, with `text`; delete the others. Answer the kept one's URL."""
    keep, *others = ours
    if keep.body != text:
        api.patch(api.repo_path(f"/issues/comments/{keep.id}"), {"body": text})
    for comment in others:
        try:
            api.delete(api.repo_path(f"/issues/comments/{comment.id}"))
        except GitHubApiError as error:
            if error.status != 404:  # 404: the other job deleted it first
                raise
    return keep.url


def _ours(items: Iterable[Mapping[str, object]], tag: str, me: str | None) -> list[_Comment]:
    """The comments that end with `tag`, written by a bot or by `me`, oldest (lowest id) first."""
    comments = (_comment(item) for item in items)
    return sorted(
        (
            comment
            for comment in comments
            if comment is not None
            and comment.body.endswith(tag)
            and (comment.bot or (me is not None and comment.login == me))
        ),
        key=lambda comment: comment.id,
    )


def _comment(item: object) -> _Comment | None:
    if not isinstance(item, dict):
        return None
    comment_id, body, url, user = (item.get(k) for k in ("id", "body", "html_url", "user"))
    if not isinstance(comment_id, int) or not isinstance(body, str) or not isinstance(url, str):
        return None
    login = user.get("login") if isinstance(user, dict) else None
    bot = isinstance(user, dict) and user.get("type") == "Bot"
    return _Comment(comment_id, body, url, login if isinstance(login, str) else "", bot)


def _api_warning(number: int, error: GitHubApiError) -> str:
    where = f"pull request #{number}"
    if error.status in (401, 403) and not error.rate_limited:
        return (
            f"{where}: the token may not write comments (the job needs `permissions: "
            f"pull-requests: write`; a pull request from a fork gets a read-only token): {error}"
        )
    if error.status == 404:
        return f"{where}: not found, or hidden from the token: {error}"
    if error.status == 422:
        return f"{where}: GitHub refused the comment: {error}"
    return f"{where}: {error}"
