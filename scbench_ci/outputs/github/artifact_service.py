"""GitHub's artifact service v4, the exchange actions/toolkit's @actions/artifact makes:
CreateArtifact (Twirp, JSON, proto field names, version 7, mime_type application/zip) answers a
signed Azure Blob URL, the zip goes there as blocks and then a block list, and FinalizeArtifact
records the zip's size and SHA-256 and answers the artifact id.

Retries follow the toolkit too: the Twirp client retries 429, 500, 502, 503 and 504 only, and
fails at once on a quota error or when the service cannot be reached; blob requests are retried
as the Azure SDK's storage retry policy does (500, 503 and connection errors). Every failure is
one ArtifactUploadError whose one-line message names neither the token nor the URL's signature.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import IO
from urllib.parse import quote

import requests

from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.version import __version__
from scbench_ci.outputs.github.retry import RetryPolicy

SERVICE = "github.actions.results.api.v1.ArtifactService"
ARTIFACT_VERSION = 7
"""The `version` the current toolkit sends in CreateArtifact."""
ARTIFACT_MIME_TYPE = "application/zip"
"""The `mime_type` it sends for a zipped artifact, also the blob's content type."""
BLOB_API_VERSION = "2025-11-05"
_USER_AGENT = f"scbench-ci/{__version__}"
_TWIRP_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
"""actions/toolkit's ArtifactHttpClient.isRetryableHttpStatusCode."""
_BLOB_RETRIED_STATUSES = frozenset({500, 503})
"""@azure/storage-blob's StorageRetryPolicy.shouldRetry."""
_UNREACHABLE_ERRORS = (requests.ConnectionError, requests.Timeout)
"""The toolkit's NetworkError codes (ECONNRESET, ENOTFOUND, ETIMEDOUT, ECONNREFUSED,
EHOSTUNREACH) as requests raises them."""
_QUOTA_MESSAGE = "insufficient usage"
"""What the service's error message holds when the storage quota is spent (UsageError)."""


class ArtifactUploadError(InfrastructureError):
    """The artifact could not be uploaded; the message is one line, fit for a workflow warning."""


class _TwirpError(ArtifactUploadError):
    def __init__(self, method: str, status: int, code: str, message: str) -> None:
        super().__init__(f"{method} failed: {code}: {message} (HTTP {status})")
        self.code = code


@dataclass(frozen=True)
class ServiceAccess:
    """Where the run's artifact service is, and who calls it: the runtime token, and the
    backend ids of the workflow run and the job that it carries."""

    token: str
    results_origin: str
    run_backend_id: str
    job_backend_id: str


class ArtifactService:
    """The two Twirp methods of the artifact service, in its JSON encoding."""

    def __init__(
        self, session: requests.Session, access: ServiceAccess, retry: RetryPolicy
    ) -> None:
        self._session = session
        self._access = access
        self._retry = retry

    def create(self, name: str, expires_at: str | None) -> str:
        """Answer the signed URL the zip is to be written to."""
        # proto3 JSON: a StringValue wrapper (mime_type) is the bare string.
        request: dict[str, object] = {
            **self._ids(),
            "name": name,
            "mime_type": ARTIFACT_MIME_TYPE,
            "version": ARTIFACT_VERSION,
        }
        if expires_at is not None:
            request["expires_at"] = expires_at
        try:
            answer = self._call("CreateArtifact", request)
        except _TwirpError as error:
            if error.code != "already_exists":
                raise
            raise ArtifactUploadError(
                f"an artifact named {name!r} already exists in this workflow run; "
                "set artifact_name to a name unique to this job"
            ) from None
        url = _field(answer, "signed_upload_url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ArtifactUploadError("CreateArtifact answered no signed_upload_url")
        return url

    def finalize(self, name: str, size: int, digest: str) -> int:
        # proto3 JSON: int64 is a string, and a StringValue wrapper is the bare string.
        request = {**self._ids(), "name": name, "size": str(size), "hash": f"sha256:{digest}"}
        artifact_id = _field(self._call("FinalizeArtifact", request), "artifact_id")
        if isinstance(artifact_id, bool) or not isinstance(artifact_id, str | int):
            raise ArtifactUploadError("FinalizeArtifact answered no artifact_id")
        try:
            return int(artifact_id)
        except ValueError:
            raise ArtifactUploadError(
                f"FinalizeArtifact answered artifact_id {artifact_id!r}"
            ) from None

    def _ids(self) -> dict[str, object]:
        return {
            "workflow_run_backend_id": self._access.run_backend_id,
            "workflow_job_run_backend_id": self._access.job_backend_id,
        }

    def _call(self, method: str, request: Mapping[str, object]) -> Mapping[str, object]:
        post = functools.partial(
            self._session.post,
            f"{self._access.results_origin}/twirp/{SERVICE}/{method}",
            data=json.dumps(request),
            headers={
                "Authorization": f"Bearer {self._access.token}",
                "Content-Type": "application/json",
                "User-Agent": _USER_AGENT,
            },
            timeout=self._retry.timeout_s,
        )
        response = _send(post, method, self._retry, _TWIRP)
        if not response.ok:
            code, message = _twirp_error(response)
            raise _TwirpError(method, response.status_code, code, message)
        answer = _json_object(response)
        if answer is None or _field(answer, "ok") is not True:
            raise ArtifactUploadError(f"{method} did not answer ok (HTTP {response.status_code})")
        return answer


def _field(answer: Mapping[str, object], name: str) -> object:
    """A field by its proto name or its lowerCamelCase JSON name: proto3 JSON allows either."""
    camel = re.sub(r"_([a-z])", lambda match: match.group(1).upper(), name)
    return answer.get(name, answer.get(camel))


def _json_object(response: requests.Response) -> Mapping[str, object] | None:
    try:
        answer = response.json()
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _twirp_error(response: requests.Response) -> tuple[str, str]:
    """Code and message of a Twirp error; a proxy's non-Twirp answer is described by its status."""
    answer = _json_object(response) or {}
    code, message = answer.get("code"), answer.get("msg")
    if isinstance(code, str) and isinstance(message, str):
        return code, " ".join(message.split())
    return "http_error", response.reason or "no Twirp error in the answer"


def _twirp_problem(response: requests.Response) -> str:
    code, message = _twirp_error(response)
    return f"{code}: {message} (HTTP {response.status_code})"


def _twirp_fatal(response: requests.Response) -> str | None:
    """The toolkit's UsageError: a spent storage quota is not retried, whatever the status."""
    code, message = _twirp_error(response)
    if _QUOTA_MESSAGE not in message:
        return None
    return (
        "the artifact storage quota has been hit: no new artifact can be uploaded until usage "
        f"is recalculated (every 6-12 hours): {code}: {message} (HTTP {response.status_code})"
    )


def upload_blob(
    session: requests.Session,
    signed_url: str,
    archive: IO[bytes],
    block_size: int,
    retry: RetryPolicy,
) -> None:
    """Put Block for each `block_size` chunk, then Put Block List to commit them in order."""
    block_ids: list[str] = []
    while chunk := archive.read(block_size):
        block_id = _block_id(len(block_ids))
        query = f"comp=block&blockid={quote(block_id, safe='')}"
        what = f"uploading block {len(block_ids) + 1} of the zip"
        _put_blob(session, signed_url, query, chunk, {}, what, retry)
        block_ids.append(block_id)
    latest = "".join(f"<Latest>{block_id}</Latest>" for block_id in block_ids)
    block_list = f'<?xml version="1.0" encoding="utf-8"?><BlockList>{latest}</BlockList>'
    headers = {"Content-Type": "application/xml", "x-ms-blob-content-type": ARTIFACT_MIME_TYPE}
    what = "committing the zip's block list"
    _put_blob(session, signed_url, "comp=blocklist", block_list.encode(), headers, what, retry)


def _block_id(index: int) -> str:
    # The ids of one blob must all be of one length; a blob holds at most 50,000 blocks.
    return base64.b64encode(f"{index:06d}".encode()).decode()


def _put_blob(
    session: requests.Session,
    signed_url: str,
    query: str,
    body: bytes,
    headers: Mapping[str, str],
    what: str,
    retry: RetryPolicy,
) -> None:
    separator = "&" if "?" in signed_url else "?"
    put = functools.partial(
        session.put,
        f"{signed_url}{separator}{query}",
        data=body,
        headers={"x-ms-version": BLOB_API_VERSION, "User-Agent": _USER_AGENT, **headers},
        timeout=retry.timeout_s,
    )
    response = _send(put, what, retry, _BLOB)
    if not response.ok:
        raise ArtifactUploadError(f"{what} failed: {_blob_problem(response)}")


def _blob_problem(response: requests.Response) -> str:
    # The error code header only: the body can quote the string the signature was made from.
    code = response.headers.get("x-ms-error-code") or response.reason
    return f"HTTP {response.status_code} {code}"


@dataclass(frozen=True)
class _Retrying:
    """What one kind of request retries, and how its failed answers are described."""

    statuses: frozenset[int]
    unreachable_retried: bool
    """Whether a refused, reset, unresolved or timed-out connection is tried again."""
    describe: Callable[[requests.Response], str]
    fatal: Callable[[requests.Response], str | None]
    """A failed answer's description when it must not be retried, whatever its status."""


_TWIRP = _Retrying(_TWIRP_RETRIED_STATUSES, False, _twirp_problem, _twirp_fatal)
_BLOB = _Retrying(_BLOB_RETRIED_STATUSES, True, _blob_problem, lambda response: None)


def _send(
    request: Callable[[], requests.Response],
    what: str,
    retry: RetryPolicy,
    retrying: _Retrying,
) -> requests.Response:
    """The first answer that is a success or not worth retrying; raises when attempts run out."""
    attempt = 1
    while True:
        try:
            response = request()
        except _UNREACHABLE_ERRORS as error:
            if not retrying.unreachable_retried:
                raise ArtifactUploadError(
                    f"{what} failed: the service cannot be reached: {describe_exception(error)}"
                ) from None
            problem, wait_s = describe_exception(error), retry.backoff_s(attempt)
        except requests.exceptions.ChunkedEncodingError as error:  # a broken answer
            problem, wait_s = describe_exception(error), retry.backoff_s(attempt)
        except requests.RequestException as error:
            raise ArtifactUploadError(f"{what} failed: {describe_exception(error)}") from None
        else:
            if response.ok:
                return response
            fatal = retrying.fatal(response)
            if fatal is not None:
                raise ArtifactUploadError(f"{what} failed: {fatal}")
            if response.status_code not in retrying.statuses:
                return response
            problem = retrying.describe(response)
            wait_s = _retry_after_s(response, attempt, retry)
        if attempt >= retry.attempts:
            raise ArtifactUploadError(f"{what} failed after {attempt} attempts: {problem}")
        time.sleep(wait_s)
        attempt += 1


def _retry_after_s(response: requests.Response, attempt: int, retry: RetryPolicy) -> float:
    """Retry-After (seconds or an HTTP date) when the answer has one, bounded; else the backoff."""
    header = response.headers.get("Retry-After", "").strip()
    if header.isdigit():
        return min(float(header), retry.max_delay_s)
    try:
        seconds = (parsedate_to_datetime(header) - datetime.now(UTC)).total_seconds()
    except (TypeError, ValueError):
        return retry.backoff_s(attempt)
    return min(max(seconds, 0.0), retry.max_delay_s)


def describe_exception(error: OSError) -> str:
    # requests quotes the URL, and a signed URL's `sig` is a credential.
    text = re.sub(r"(?i)(sig=)[^&\s'\"]+", r"\1REDACTED", str(error))
    return f"{type(error).__name__}: {' '.join(text.split())}"
