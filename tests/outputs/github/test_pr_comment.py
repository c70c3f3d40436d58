"""The sticky pull request comment against the REST double: created, edited in place, never
duplicated by a race, other tags untouched, cut at GitHub's limit, and failures as warnings."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from scbench_ci.outputs.github.pr_comment import (
    COMMENT_LIMIT,
    CUT_NOTE,
    CommentResult,
    comment_body,
    comment_tag,
    upsert_comment,
)
from scbench_ci.outputs.github.retry import RetryPolicy
from scbench_ci.trust.markdown import Markdown
from testing.ports import free_port
from testing.rest_double import (
    BOT,
    READ_TOKEN,
    REPOSITORY,
    WRITE_TOKEN,
    Comment,
    RestDouble,
    User,
)

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=1.0, timeout_s=5.0)
PR = 7
COMMENTS = f"/repos/{REPOSITORY}/issues/{PR}/comments"
HUMAN = User("octocat", 583231)


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        yield double


def event_env(double: RestDouble, tmp_path: Path, payload: object, name: str) -> dict[str, str]:
    event = tmp_path / f"{name}.json"
    event.write_text(json.dumps(payload))
    return double.environment(GITHUB_EVENT_PATH=str(event), GITHUB_EVENT_NAME=name)


@pytest.fixture
def env(double: RestDouble, tmp_path: Path) -> dict[str, str]:
    return event_env(double, tmp_path, {"pull_request": {"number": PR}}, "pull_request")


@pytest.fixture
def tag(env: dict[str, str]) -> Markdown:
    return comment_tag(env, "problem-a")


def upsert(
    body: str, tag: Markdown, env: Mapping[str, str], token: str = WRITE_TOKEN
) -> CommentResult:
    """`body`: markdown the caller wrote."""
    return upsert_comment(Markdown(body), tag, env, token, retry=FAST)


def url_of(comment: Comment) -> str:
    return f"https://github.com/{REPOSITORY}/pull/{comment.issue}#issuecomment-{comment.id}"


def test_comment_tag_is_a_hash_of_workflow_job_and_key() -> None:
    env = {
        "GITHUB_WORKFLOW_REF": "octo/hello/.github/workflows/ci.yml@refs/pull/7/merge",
        "GITHUB_JOB": "evaluate",
    }
    digest = hashlib.sha256(b"octo/hello/.github/workflows/ci.yml\0evaluate\0problem-a")
    assert comment_tag(env, "problem-a") == f"<!-- scbench-ci:{digest.hexdigest()[:16]} -->"
    same_workflow_other_ref = {**env, "GITHUB_WORKFLOW_REF": env["GITHUB_WORKFLOW_REF"][:-14]}
    assert comment_tag(same_workflow_other_ref, "problem-a") == comment_tag(env, "problem-a")
    others = {
        comment_tag(env, "problem-b"),
        comment_tag({**env, "GITHUB_JOB": "check"}, "problem-a"),
        comment_tag(
            {**env, "GITHUB_WORKFLOW_REF": "octo/hello/.github/workflows/n.yml"}, "problem-a"
        ),
    }
    assert len(others) == 3
    assert comment_tag(env, "problem-a") not in others


def test_a_comment_is_created(double: RestDouble, env: dict[str, str], tag: str) -> None:
    result = upsert("## Results\n\nall passed\n", tag, env)
    [comment] = double.comments_on(PR)
    assert result == CommentResult(url_of(comment), None, "created")
    assert comment.body == f"## Results\n\nall passed\n\n{tag}"
    assert comment.user == BOT


def test_the_comment_with_the_tag_is_edited_in_place(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    mine = double.add_comment(PR, f"old results\n\n{tag}")
    result = upsert("new results", tag, env)
    assert result == CommentResult(url_of(mine), None, "updated")
    assert [(c.id, c.body) for c in double.comments_on(PR)] == [(mine.id, f"new results\n\n{tag}")]
    assert double.requests_to(COMMENTS, "POST") == []
    assert len(double.requests_to(f"/issues/comments/{mine.id}", "PATCH")) == 1


def test_an_unchanged_comment_is_not_written_again(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    mine = double.add_comment(PR, f"same\n\n{tag}")
    assert upsert("same", tag, env) == CommentResult(url_of(mine), None, "updated")
    assert [recorded.method for recorded in double.requests] == ["GET"]


def test_comments_beyond_the_first_page_are_found(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    for n in range(130):
        double.add_comment(PR, f"chatter {n}", HUMAN)
    mine = double.add_comment(PR, f"old\n\n{tag}")
    for n in range(20):
        double.add_comment(PR, f"more chatter {n}", HUMAN)
    assert upsert("new", tag, env) == CommentResult(url_of(mine), None, "updated")
    assert len(double.comments_on(PR)) == 151
    assert double.requests_to(COMMENTS, "POST") == []
    assert [r.query.get("page") for r in double.requests_to(COMMENTS, "GET")] == [None, "2"]


def test_other_tags_and_other_people_are_left_alone(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    other_job = double.add_comment(PR, f"matrix entry b\n\n{comment_tag(env, 'problem-b')}")
    pasted = double.add_comment(PR, f"look at this {tag}", HUMAN)
    chatter = double.add_comment(PR, "LGTM", HUMAN)
    before = [(c.id, c.body, c.updated_at) for c in (other_job, pasted, chatter)]

    result = upsert("results a", tag, env)

    comments = double.comments_on(PR)
    [mine] = [c for c in comments if c.id not in (other_job.id, pasted.id, chatter.id)]
    assert result == CommentResult(url_of(mine), None, "created")
    assert mine.body == f"results a\n\n{tag}"
    assert [(c.id, c.body, c.updated_at) for c in comments if c is not mine] == before
    assert double.requests_to("/issues/comments/") == []


def test_a_race_lost_to_an_older_comment_keeps_that_one(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    competitor: list[Comment] = []

    def other_job_posts_first(method: str, path: str) -> None:
        if method == "POST" and not competitor:
            competitor.append(double.add_comment(PR, f"other job\n\n{tag}"))

    double.before_request = other_job_posts_first
    result = upsert("this job", tag, env)

    [kept] = double.comments_on(PR)
    assert kept.id == competitor[0].id
    assert kept.body == f"this job\n\n{tag}"
    assert result == CommentResult(url_of(kept), None, "updated")
    assert [r.status for r in double.requests_to("/issues/comments/", "DELETE")] == [204]


def test_a_race_won_deletes_the_newer_comment(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    competitor: list[Comment] = []

    def other_job_posts_next(created: Comment) -> None:
        if not competitor:
            competitor.append(double.add_comment(PR, f"other job\n\n{tag}"))

    double.after_comment_created = other_job_posts_next
    result = upsert("this job", tag, env)

    [kept] = double.comments_on(PR)
    assert kept.id < competitor[0].id
    assert kept.body == f"this job\n\n{tag}"
    assert result == CommentResult(url_of(kept), None, "created")
    assert double.requests_to("/issues/comments/", "PATCH") == []


def test_two_jobs_racing_leave_one_comment(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    """Both jobs list the comments before either posts: a POST waits until two listings are
    answered (the double records a request once it has answered it), so both create one."""

    def post_once_both_listed(method: str, path: str) -> None:
        deadline = time.monotonic() + 10
        while method == "POST" and path == COMMENTS and time.monotonic() < deadline:
            if len(double.requests_to(COMMENTS, "GET")) >= 2:
                return
            time.sleep(0.01)

    double.before_request = post_once_both_listed
    results: dict[str, CommentResult] = {}

    def job(name: str) -> None:
        results[name] = upsert(f"from {name}", tag, env)

    threads = [threading.Thread(target=job, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    [kept] = double.comments_on(PR)
    assert kept.body in (f"from a\n\n{tag}", f"from b\n\n{tag}")
    assert len(double.requests_to(COMMENTS, "POST")) == 2
    assert {result.url for result in results.values()} == {url_of(kept)}
    assert sorted(result.action for result in results.values()) == ["created", "updated"]
    assert [result.warning for result in results.values()] == [None, None]


def test_a_long_body_is_cut_at_a_line_with_a_note(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    body = ("x" * 99 + "\n") * 700
    result = upsert(body, tag, env)
    assert result.warning is None
    [comment] = double.comments_on(PR)
    ending = f"\n\n{CUT_NOTE}\n\n{tag}"
    assert comment.body.endswith(ending)
    kept = comment.body.removesuffix(ending)
    assert body.startswith(kept)
    assert body[len(kept)] == "\n"
    assert COMMENT_LIMIT - 100 - 4 < len(comment.body) <= COMMENT_LIMIT


def test_a_cut_inside_a_code_block_closes_it() -> None:
    tag = Markdown("<!-- scbench-ci:0123456789abcdef -->")
    body = Markdown("## Log\n\n```\n" + "line of the log\n" * 5000)
    posted = comment_body(body, tag)
    assert len(posted) <= COMMENT_LIMIT
    kept, _, rest = posted.partition(f"\n\n{CUT_NOTE}")
    assert rest == f"\n\n{tag}"
    assert kept.endswith("line of the log\n```")
    assert kept.count("```") == 2


def test_a_short_body_is_kept_whole() -> None:
    tag = Markdown("<!-- t -->")
    assert comment_body(Markdown("hi\n\n"), tag) == "hi\n\n<!-- t -->"
    body = Markdown("x" * (COMMENT_LIMIT - len("\n\n<!-- t -->")))
    assert comment_body(body, tag) == f"{body}\n\n<!-- t -->"


@pytest.mark.parametrize(
    ("payload", "name"),
    [({"ref": "refs/heads/main"}, "push"), ({"issue": {"number": PR}}, "issue_comment")],
)
def test_not_a_pull_request_is_skipped_with_a_notice(
    double: RestDouble, tmp_path: Path, payload: object, name: str
) -> None:
    env = event_env(double, tmp_path, payload, name)
    assert upsert("results", comment_tag(env, "a"), env) == CommentResult(
        None,
        f"comment is on, but this run (event {name}) is not for a pull request",
        "skipped",
    )
    assert double.requests == []


def test_a_comment_on_a_pull_request_comments_on_it(double: RestDouble, tmp_path: Path) -> None:
    payload = {"issue": {"number": PR, "pull_request": {"url": "..."}}, "comment": {"id": 1}}
    env = event_env(double, tmp_path, payload, "issue_comment")
    result = upsert("results", comment_tag(env, "a"), env)
    [comment] = double.comments_on(PR)
    assert result == CommentResult(url_of(comment), None, "created")


def test_a_read_only_token_is_a_warning(double: RestDouble, env: dict[str, str], tag: str) -> None:
    result = upsert("results", tag, env, token=READ_TOKEN)
    assert result == CommentResult(
        None,
        f"pull request #{PR}: the token may not write comments (the job needs "
        "`permissions: pull-requests: write`; a pull request from a fork gets a read-only "
        f"token): POST {COMMENTS} failed: Resource not accessible by integration (HTTP 403)",
        "skipped",
    )
    assert double.comments_on(PR) == []


def test_a_read_only_token_cannot_edit_either(
    double: RestDouble, env: dict[str, str], tag: str
) -> None:
    mine = double.add_comment(PR, f"old\n\n{tag}")
    result = upsert("new", tag, env, token=READ_TOKEN)
    assert result.action == "skipped"
    assert result.warning is not None
    assert result.warning.endswith(
        f"PATCH /repos/{REPOSITORY}/issues/comments/{mine.id} failed: "
        "Resource not accessible by integration (HTTP 403)"
    )
    assert double.comments_on(PR)[0].body == f"old\n\n{tag}"


def test_a_refused_comment_is_a_warning(double: RestDouble, env: dict[str, str], tag: str) -> None:
    double.fail_next(1, 422, method="POST", message="Validation Failed")
    assert upsert("results", tag, env) == CommentResult(
        None,
        f"pull request #{PR}: GitHub refused the comment: "
        f"POST {COMMENTS} failed: Validation Failed (HTTP 422)",
        "skipped",
    )


def test_an_unknown_pull_request_is_a_warning(double: RestDouble, tmp_path: Path) -> None:
    env = event_env(double, tmp_path, {"pull_request": {"number": 8}}, "pull_request")
    result = upsert("results", comment_tag(env, "a"), env)
    assert result == CommentResult(
        None,
        "pull request #8: not found, or hidden from the token: "
        f"GET /repos/{REPOSITORY}/issues/8/comments failed: Not Found (HTTP 404)",
        "skipped",
    )


def test_no_token_is_a_warning(double: RestDouble, env: dict[str, str], tag: str) -> None:
    assert upsert("results", tag, env, token="") == CommentResult(
        None,
        f"there is no GitHub token to comment on pull request #{PR} with",
        "skipped",
    )
    assert double.requests == []


def test_a_5xx_is_tried_again(double: RestDouble, env: dict[str, str], tag: str) -> None:
    double.fail_next(1, 502, method="POST")
    result = upsert("results", tag, env)
    [comment] = double.comments_on(PR)
    assert result == CommentResult(url_of(comment), None, "created")
    assert [r.status for r in double.requests_to(COMMENTS, "POST")] == [502, 201]


def test_an_unreachable_api_is_a_warning(env: dict[str, str], tag: str) -> None:
    port = free_port()
    env["GITHUB_API_URL"] = f"http://127.0.0.1:{port}"
    result = upsert("results", tag, env)
    assert (result.url, result.action) == (None, "skipped")
    assert result.warning is not None
    assert result.warning.startswith(
        f"pull request #{PR}: GET {COMMENTS} failed: cannot reach GitHub after "
        "3 attempts: ConnectionError"
    )
