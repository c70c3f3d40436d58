"""The REST client against the double: headers, pages, errors, retries, redirected downloads."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
import requests

from scbench_ci import __version__
from scbench_ci.outputs.github.rest import (
    DEFAULT_API_URL,
    GitHubApiError,
    GitHubError,
    GitHubRest,
)
from scbench_ci.outputs.github.retry import RetryPolicy
from testing.ports import free_port
from testing.rest_double import (
    READ_TOKEN,
    REPOSITORY,
    REPOSITORY_ID,
    WRITE_TOKEN,
    RestDouble,
)

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=2.0, timeout_s=5.0)
COMMENTS = f"/repos/{REPOSITORY}/issues/7/comments"


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        yield double


def client(
    double: RestDouble,
    token: str = WRITE_TOKEN,
    retry: RetryPolicy = FAST,
    max_pages: int = 50,
) -> GitHubRest:
    return GitHubRest(double.url, REPOSITORY, token, retry=retry, max_pages=max_pages)


def error_of(call: object) -> GitHubApiError:
    assert callable(call)
    with pytest.raises(GitHubApiError) as caught:
        call()
    return caught.value


def test_requests_carry_the_documented_headers(double: RestDouble) -> None:
    with client(double) as api:
        answer = api.get(api.repo_path())
    assert isinstance(answer, dict)
    assert answer["default_branch"] == "main"
    [recorded] = double.requests
    assert (recorded.method, recorded.path, recorded.status) == ("GET", f"/repos/{REPOSITORY}", 200)
    assert recorded.headers["authorization"] == f"Bearer {WRITE_TOKEN}"
    assert recorded.headers["accept"] == "application/vnd.github+json"
    assert recorded.headers["x-github-api-version"] == "2022-11-28"
    assert recorded.headers["user-agent"] == f"scbench-ci/{__version__}"


def test_from_env_defaults_to_api_github_com() -> None:
    api = GitHubRest.from_env({"GITHUB_REPOSITORY": "octo/hello"}, "token")
    assert api.api_url == DEFAULT_API_URL
    assert api.repo_path("/issues") == "/repos/octo/hello/issues"
    api = GitHubRest.from_env(
        {"GITHUB_REPOSITORY": "octo/hello", "GITHUB_API_URL": "https://ghe.example/api/v3/"}, "t"
    )
    assert api.api_url == "https://ghe.example/api/v3"


@pytest.mark.parametrize("repository", ["", "octo", "octo/", "/hello", "a/b/c"])
def test_from_env_refuses_a_repository_that_is_not_owner_slash_name(repository: str) -> None:
    with pytest.raises(GitHubError) as caught:
        GitHubRest.from_env({"GITHUB_REPOSITORY": repository}, "token")
    assert str(caught.value) == f"GITHUB_REPOSITORY is not owner/repository: {repository!r}"


def test_paginate_follows_the_link_header_over_pages(double: RestDouble) -> None:
    comments = [double.add_comment(7, f"comment {n}") for n in range(250)]
    with client(double) as api:
        listed = list(api.paginate(COMMENTS))
    assert [item["id"] for item in listed] == [comment.id for comment in comments]
    pages = double.requests_to(COMMENTS)
    assert [dict(recorded.query) for recorded in pages] == [
        {"per_page": "100"},
        {"per_page": "100", "page": "2"},
        {"per_page": "100", "page": "3"},
    ]


def test_the_double_writes_links_as_github_does(double: RestDouble) -> None:
    for n in range(5):
        double.add_comment(7, f"comment {n}")
    answer = requests.get(
        f"{double.url}{COMMENTS}?per_page=2&page=2",
        headers={"Authorization": f"Bearer {WRITE_TOKEN}"},
        timeout=5,
    )
    base = f"{double.url}/repositories/{REPOSITORY_ID}/issues/7/comments?per_page=2"
    assert answer.headers["Link"] == (
        f'<{base}&page=1>; rel="prev", <{base}&page=3>; rel="next", '
        f'<{base}&page=3>; rel="last", <{base}&page=1>; rel="first"'
    )


def test_paginate_reads_the_named_list_of_an_object_answer(double: RestDouble) -> None:
    runs = [double.add_run() for _ in range(130)]
    with client(double) as api:
        listed = list(
            api.paginate(
                api.repo_path("/actions/workflows/nightly.yml/runs"), items="workflow_runs"
            )
        )
    assert [item["id"] for item in listed] == [run.id for run in reversed(runs)]


def test_paginate_stops_after_max_pages(double: RestDouble) -> None:
    for n in range(250):
        double.add_comment(7, f"comment {n}")
    with client(double, max_pages=2) as api:
        assert len(list(api.paginate(COMMENTS))) == 200
    assert len(double.requests_to(COMMENTS)) == 2


def test_a_next_page_on_another_host_is_not_sent_the_token(double: RestDouble) -> None:
    for n in range(150):
        double.add_comment(7, f"comment {n}")
    port = double.url.rsplit(":", 1)[1]
    # The double writes its links with 127.0.0.1: another host than the one the client calls.
    with GitHubRest(f"http://localhost:{port}", REPOSITORY, WRITE_TOKEN, retry=FAST) as api:
        error = error_of(lambda: list(api.paginate(COMMENTS)))
    assert str(error) == f"GET {COMMENTS} failed: the next page is on another host (HTTP 200)"
    assert len(double.requests_to(COMMENTS)) == 1


def test_an_error_names_the_request_status_and_github_message(double: RestDouble) -> None:
    with client(double) as api:
        error = error_of(lambda: api.get(api.repo_path("/issues/8/comments")))
    assert str(error) == f"GET /repos/{REPOSITORY}/issues/8/comments failed: Not Found (HTTP 404)"
    assert (error.status, error.message, error.denied) == (404, "Not Found", True)
    assert len(double.requests) == 1


@pytest.mark.parametrize(
    ("token", "message"), [("", "Requires authentication"), ("ghs_wrong", "Bad credentials")]
)
def test_a_missing_or_wrong_token_is_a_401(double: RestDouble, token: str, message: str) -> None:
    with client(double, token=token) as api:
        error = error_of(lambda: api.get(api.repo_path()))
    assert (error.status, error.message, error.denied) == (401, message, True)


def test_a_read_only_token_gets_a_403_on_writes(double: RestDouble) -> None:
    with client(double, token=READ_TOKEN) as api:
        assert api.get(COMMENTS) == []
        error = error_of(lambda: api.post(COMMENTS, {"body": "hello"}))
    assert str(error) == (
        f"POST {COMMENTS} failed: Resource not accessible by integration (HTTP 403)"
    )
    assert error.denied
    assert double.comments_on(7) == []


def test_a_validation_failure_names_github_reasons(double: RestDouble) -> None:
    with client(double) as api:
        error = error_of(lambda: api.post(COMMENTS, {"body": "x" * 65_537}))
    assert error.message == "Validation Failed: Body is too long (maximum is 65536 characters)"
    assert (error.status, error.denied) == (422, False)


def test_a_5xx_is_tried_again(double: RestDouble) -> None:
    double.fail_next(2, 502)
    with client(double) as api:
        answer = api.get(api.repo_path())
    assert isinstance(answer, dict)
    assert answer["full_name"] == REPOSITORY
    assert [recorded.status for recorded in double.requests] == [502, 502, 200]


def test_a_5xx_that_lasts_fails_after_the_attempts(double: RestDouble) -> None:
    double.fail_next(5, 503, message="Service Unavailable")
    with client(double) as api:
        error = error_of(lambda: api.get(api.repo_path()))
    assert str(error) == f"GET /repos/{REPOSITORY} failed: Service Unavailable (HTTP 503)"
    assert len(double.requests) == 3


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_a_4xx_is_not_tried_again(double: RestDouble, status: int) -> None:
    double.fail_next(1, status, message="no")
    with client(double) as api:
        error = error_of(lambda: api.get(api.repo_path()))
    assert error.status == status
    assert len(double.requests) == 1


def test_a_429_is_tried_again_after_retry_after(double: RestDouble) -> None:
    double.fail_next(1, 429, headers={"Retry-After": "0"}, message="Too Many Requests")
    with client(double) as api:
        api.get(api.repo_path())
    assert [recorded.status for recorded in double.requests] == [429, 200]


@pytest.mark.slow
def test_a_secondary_rate_limit_is_tried_again_after_retry_after(double: RestDouble) -> None:
    double.fail_next(
        1, 403, headers={"Retry-After": "1"}, message="You have exceeded a secondary rate limit."
    )
    with client(double) as api:
        api.get(api.repo_path())
    assert [recorded.status for recorded in double.requests] == [403, 200]


def test_a_rate_limit_longer_than_the_bound_is_a_failure_at_once(double: RestDouble) -> None:
    double.fail_next(1, 403, headers={"Retry-After": "3600"}, message="secondary rate limit")
    with client(double) as api:
        error = error_of(lambda: api.get(api.repo_path()))
    assert (error.status, error.rate_limited, error.denied) == (403, True, False)
    assert len(double.requests) == 1


def test_a_primary_rate_limit_without_retry_after_waits_for_the_reset(double: RestDouble) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}
    double.fail_next(1, 403, headers=headers, message="API rate limit exceeded")
    with client(double) as api:
        api.get(api.repo_path())
    assert [recorded.status for recorded in double.requests] == [403, 200]


def test_a_timeout_is_tried_again(double: RestDouble) -> None:
    double.delay_next(1, 1.0)
    retry = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=1.0, timeout_s=0.3)
    with client(double, retry=retry) as api:
        answer = api.get(api.repo_path())
    assert isinstance(answer, dict)
    assert answer["id"] == REPOSITORY_ID


def test_an_unreachable_api_fails_after_the_attempts() -> None:
    port = free_port()
    with GitHubRest(f"http://127.0.0.1:{port}", REPOSITORY, WRITE_TOKEN, retry=FAST) as api:
        error = error_of(lambda: api.get(api.repo_path()))
    assert error.status is None
    assert not error.denied
    assert str(error).startswith(
        f"GET /repos/{REPOSITORY} failed: cannot reach GitHub after 3 attempts: ConnectionError"
    )


def test_download_follows_the_redirect_without_the_token(double: RestDouble) -> None:
    artifact = double.add_artifact(double.add_run(), "scbench-results", b"zip bytes")
    path = f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip"
    sink = io.BytesIO()
    with client(double) as api:
        assert api.download(path, sink, max_bytes=100) == 9
    assert sink.getvalue() == b"zip bytes"
    [api_call] = double.requests_to(path)
    assert (api_call.status, api_call.headers["authorization"]) == (302, f"Bearer {WRITE_TOKEN}")
    [blob_call] = double.requests_to("/_blob/")
    assert blob_call.status == 200
    assert "authorization" not in blob_call.headers


def test_the_blob_route_refuses_an_authorization_header(double: RestDouble) -> None:
    artifact = double.add_artifact(double.add_run(), "scbench-results", b"zip bytes")
    token = {"Authorization": f"Bearer {WRITE_TOKEN}"}
    redirect = requests.get(
        f"{double.url}/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip",
        headers=token,
        allow_redirects=False,
        timeout=5,
    )
    assert redirect.status_code == 302
    location = redirect.headers["Location"]
    assert requests.get(location, headers=token, timeout=5).status_code == 400
    assert requests.get(location, timeout=5).content == b"zip bytes"
    assert requests.get(location.replace("sig=", "sig=0"), timeout=5).status_code == 403


def test_download_of_more_than_max_bytes_fails(double: RestDouble) -> None:
    artifact = double.add_artifact(double.add_run(), "scbench-results", b"x" * 101)
    path = f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip"
    with client(double) as api:
        error = error_of(lambda: api.download(path, io.BytesIO(), max_bytes=100))
    assert str(error) == (
        f"GET {path} (redirected download) failed: the download is over 100 bytes"
    )


def test_download_of_an_expired_artifact_is_a_410(double: RestDouble) -> None:
    artifact = double.add_artifact(double.add_run(), "scbench-results", b"zip", expired=True)
    path = f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip"
    with client(double) as api:
        error = error_of(lambda: api.download(path, io.BytesIO(), max_bytes=100))
    assert str(error) == f"GET {path} failed: Artifact has expired (HTTP 410)"
    assert double.requests_to("/_blob/") == []


def test_download_tries_the_blob_again_on_a_5xx(double: RestDouble) -> None:
    artifact = double.add_artifact(double.add_run(), "scbench-results", b"zip bytes")
    path = f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip"
    double.fail_next(1, 500, path_contains="/_blob/")
    sink = io.BytesIO()
    with client(double) as api:
        api.download(path, sink, max_bytes=100)
    assert sink.getvalue() == b"zip bytes"
    assert [recorded.status for recorded in double.requests_to("/_blob/")] == [500, 200]
