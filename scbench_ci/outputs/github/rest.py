"""A small client for GitHub's REST API, as an action uses it with the job's token.

Requests carry the documented headers (bearer token, `application/vnd.github+json`, the API
version) and a timeout. Lists are followed by the `Link` header's `rel="next"`, 100 items a page,
up to a number of pages. Answers 5xx and unreachable hosts are tried again with a short backoff;
4xx never is, but for a rate limit (429, or a 403 that says when to come back) whose wait is short.
A failure is one GitHubApiError naming the request and GitHub's message. The token goes only to
the API's own origin: a download's redirect (to blob storage) is followed without it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import IO
from urllib.parse import quote, urljoin, urlsplit

import requests

from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.version import __version__
from scbench_ci.outputs.github.retry import RetryPolicy

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
PER_PAGE = 100
"""The largest page GitHub serves."""
MAX_PAGES = 50
DEFAULT_RETRY = RetryPolicy(attempts=4, base_delay_s=1.0, max_delay_s=20.0, timeout_s=30.0)
"""`max_delay_s` is also the longest rate-limit wait accepted; a longer one is a failure."""
DENIED_STATUSES = frozenset({401, 403, 404})
_DOWNLOAD_CHUNK = 1024 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_UNREACHABLE = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)


class GitHubError(InfrastructureError):
    """GitHub could not be asked or did not answer as hoped; the message is one line."""


class GitHubApiError(GitHubError):
    def __init__(
        self,
        request: str,
        status: int | None,
        message: str,
        *,
        rate_limited: bool = False,
    ) -> None:
        answer = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"{request} failed: {message}{answer}")
        self.request = request
        """Method and path, e.g. `GET /repos/o/r/actions/runs/1/artifacts`."""
        self.status = status
        """None when no answer came (the host could not be reached)."""
        self.message = message
        self.rate_limited = rate_limited

    @property
    def denied(self) -> bool:
        """No permission or not found: what a token that may not see the resource gets."""
        return self.status in DENIED_STATUSES and not self.rate_limited


class GitHubRest:
    """One repository's endpoints, with one token; close it (or use `with`) when done."""

    def __init__(
        self,
        api_url: str,
        repository: str,
        token: str,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        max_pages: int = MAX_PAGES,
    ) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise GitHubError(f"GITHUB_API_URL is not an http(s) URL: {api_url}")
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise GitHubError(f"GITHUB_REPOSITORY is not owner/repository: {repository!r}")
        self.api_url = api_url.rstrip("/")
        self.repository = repository
        self._origin = (parts.scheme, parts.netloc.lower())
        self._token = token
        self._retry = retry
        self._max_pages = max_pages
        self._session = requests.Session()

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], token: str, *, retry: RetryPolicy = DEFAULT_RETRY
    ) -> GitHubRest:
        """GITHUB_API_URL (default api.github.com) and GITHUB_REPOSITORY, as the runner sets."""
        api_url = env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL
        return cls(api_url, env.get("GITHUB_REPOSITORY", "").strip(), token, retry=retry)

    def repo_path(self, suffix: str = "") -> str:
        owner, _, name = self.repository.partition("/")
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}{suffix}"

    def get(self, path: str, params: Mapping[str, str | int] | None = None) -> object:
        return _json(self.request("GET", path, params=params))

    def post(self, path: str, body: Mapping[str, object]) -> object:
        return _json(self.request("POST", path, body=body))

    def patch(self, path: str, body: Mapping[str, object]) -> object:
        return _json(self.request("PATCH", path, body=body))

    def delete(self, path: str) -> None:
        self.request("DELETE", path)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
    ) -> requests.Response:
        """A successful answer (2xx) to `method path`; raises GitHubApiError for any other."""
        response = self._api(method, self.api_url + path, f"{method} {path}", params, body)
        if not response.ok:
            raise _api_error(f"{method} {path}", response)
        return response

    def paginate(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        items: str | None = None,
    ) -> Iterator[dict[str, object]]:
        """Every object of a list endpoint, page after page while there is a `next` link.

        `items` names the field holding the list (`workflow_runs`, `artifacts`) when the answer
        is an object rather than the list itself. Stops quietly after `max_pages` pages.
        """
        what = f"GET {path}"
        url: str | None = self.api_url + path
        query: Mapping[str, str | int] | None = {**(params or {}), "per_page": PER_PAGE}
        for _ in range(self._max_pages):
            if url is None:
                return
            response = self._api("GET", url, what, query, None)
            if not response.ok:
                raise _api_error(what, response)
            answer = _json(response)
            page = answer.get(items) if items is not None and isinstance(answer, dict) else answer
            if not isinstance(page, list):
                raise GitHubApiError(what, response.status_code, "the answer is not a list")
            yield from (item for item in page if isinstance(item, dict))
            url, query = self._next_page(response, what), None

    def download(self, path: str, sink: IO[bytes], max_bytes: int) -> int:
        """Write what `GET path` serves into `sink`, following its redirect without the token;
        answer the number of bytes. More than `max_bytes` is a failure."""
        what = f"GET {path}"
        response = self._api("GET", self.api_url + path, what, None, None)
        if response.status_code in _REDIRECTS:
            location = response.headers.get("Location", "")
            if not location:
                raise GitHubApiError(what, response.status_code, "a redirect without a Location")
            what = f"{what} (redirected download)"
            # A pre-signed URL: its signature is the credential, and the token must not go along.
            response = self._send(
                "GET",
                urljoin(response.url, location),
                what,
                headers={"User-Agent": _user_agent()},
                stream=True,
            )
        if not response.ok:
            raise _api_error(what, response)
        with response:
            size = 0
            try:
                for chunk in response.iter_content(_DOWNLOAD_CHUNK):
                    size += len(chunk)
                    if size > max_bytes:
                        raise GitHubApiError(what, None, f"the download is over {max_bytes} bytes")
                    sink.write(chunk)
            except _UNREACHABLE as error:
                problem = f"the download broke off: {_describe(error)}"
                raise GitHubApiError(what, None, problem) from None
        return size

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> GitHubRest:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _api(
        self,
        method: str,
        url: str,
        what: str,
        params: Mapping[str, str | int] | None,
        body: Mapping[str, object] | None,
    ) -> requests.Response:
        if not self._same_origin(url):
            raise GitHubApiError(what, None, "refusing to send the token outside the API's host")
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": _user_agent(),
        }
        return self._send(method, url, what, headers=headers, params=params, json=body)

    def _send(
        self,
        method: str,
        url: str,
        what: str,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str | int] | None = None,
        json: Mapping[str, object] | None = None,
        stream: bool = False,
    ) -> requests.Response:
        """The first answer worth returning; raises when GitHub cannot be reached."""
        attempt = 1
        while True:
            try:
                response = self._session.request(
                    method,
                    url,
                    headers=dict(headers),
                    params=params,
                    json=json,
                    timeout=self._retry.timeout_s,
                    allow_redirects=False,
                    stream=stream,
                )
            except _UNREACHABLE as error:
                if attempt >= self._retry.attempts:
                    problem = f"cannot reach GitHub after {attempt} attempts: {_describe(error)}"
                    raise GitHubApiError(what, None, problem) from None
                wait_s = self._retry.backoff_s(attempt)
            except requests.RequestException as error:
                raise GitHubApiError(what, None, _describe(error)) from None
            else:
                retry_wait_s = _retry_wait_s(response, attempt, self._retry)
                if retry_wait_s is None or attempt >= self._retry.attempts:
                    return response
                response.close()
                wait_s = retry_wait_s
            time.sleep(wait_s)
            attempt += 1

    def _next_page(self, response: requests.Response, what: str) -> str | None:
        url = response.links.get("next", {}).get("url")
        if url is None:
            return None
        url = urljoin(response.url, url)
        if not self._same_origin(url):
            raise GitHubApiError(what, response.status_code, "the next page is on another host")
        return url

    def _same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        return (parts.scheme, parts.netloc.lower()) == self._origin


def _retry_wait_s(response: requests.Response, attempt: int, retry: RetryPolicy) -> float | None:
    """How long to wait before trying again, or None when the answer is to be returned."""
    status = response.status_code
    if status >= 500:
        return retry.backoff_s(attempt)
    if status == 429 or _rate_limited(response):
        wait_s = _rate_limit_wait_s(response)
        if wait_s is None:
            return retry.backoff_s(attempt) if status == 429 else None
        # Coming back earlier than GitHub says only extends the limit.
        return wait_s if wait_s <= retry.max_delay_s else None
    return None


def _rate_limited(response: requests.Response) -> bool:
    if response.status_code not in (403, 429):
        return False
    headers = response.headers
    return "Retry-After" in headers or headers.get("x-ratelimit-remaining") == "0"


def _rate_limit_wait_s(response: requests.Response) -> float | None:
    """Retry-After (seconds or an HTTP date), else x-ratelimit-reset when none are left."""
    header = response.headers.get("Retry-After", "").strip()
    if header.isdigit():
        return float(header)
    if header:
        try:
            return max((parsedate_to_datetime(header) - datetime.now(UTC)).total_seconds(), 0.0)
        except (TypeError, ValueError):
            return None
    reset = response.headers.get("x-ratelimit-reset", "").strip()
    if response.headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(float(reset) - time.time(), 0.0)
    return None


def _api_error(what: str, response: requests.Response) -> GitHubApiError:
    return GitHubApiError(
        what,
        response.status_code,
        _message(response),
        rate_limited=response.status_code == 429 or _rate_limited(response),
    )


def _message(response: requests.Response) -> str:
    """GitHub's `message`, with the messages of a validation failure's `errors`."""
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("message"), str):
        return response.reason or "no message"
    message: str = answer["message"]
    errors = answer.get("errors")
    error_messages = [
        error["message"] if isinstance(error, dict) and "message" in error else str(error)
        for error in (errors if isinstance(errors, list) else [])
    ]
    text = f"{message}: {'; '.join(error_messages)}" if error_messages else message
    return " ".join(text.split())


def _json(response: requests.Response) -> object:
    if response.status_code == 204 or not response.content:
        return None
    try:
        answer: object = response.json()
    except ValueError:
        raise GitHubApiError(
            f"{response.request.method} {urlsplit(response.url).path}",
            response.status_code,
            "the answer is not JSON",
        ) from None
    return answer


def _describe(error: Exception) -> str:
    # requests quotes URLs, and a pre-signed URL's query is a credential.
    text = re.sub(r"\?[^\s'\"]*", "?...", str(error))
    return f"{type(error).__name__}: {' '.join(text.split())}"


def _user_agent() -> str:
    return f"scbench-ci/{__version__}"
