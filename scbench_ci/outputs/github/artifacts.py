"""Upload a folder as a workflow artifact through GitHub's artifact service v4.

The exchange is the one actions/toolkit's @actions/artifact makes: CreateArtifact (Twirp, JSON,
proto field names, version 7, mime_type application/zip) answers a signed Azure Blob URL, the zip
goes there as blocks and then a block list, and FinalizeArtifact records the zip's size and SHA-256
and answers the artifact id. The run's backend ids come from the `Actions.Results` scope of the
runtime token. Retries follow the toolkit too: the Twirp client retries 429, 500, 502, 503 and 504
only, and fails at once on a quota error or when the service cannot be reached; blob requests are
retried as the Azure SDK's storage retry policy does (500, 503 and connection errors). Every failure
is one ArtifactUploadError whose one-line message names neither the token nor the URL's signature.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import os
import re
import stat
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO
from urllib.parse import quote, urlsplit

import requests

from scbench_ci import __version__
from scbench_ci.errors import InfrastructureError

SERVICE = "github.actions.results.api.v1.ArtifactService"
ARTIFACT_VERSION = 7
"""The `version` the current toolkit sends in CreateArtifact."""
ARTIFACT_MIME_TYPE = "application/zip"
"""The `mime_type` it sends for a zipped artifact, also the blob's content type."""
BLOB_API_VERSION = "2025-11-05"
BLOCK_SIZE = 8 * 1024 * 1024
_READ_CHUNK = 1024 * 1024
_USER_AGENT = f"scbench-ci/{__version__}"
_RESULTS_SCOPE = "Actions.Results"
FORBIDDEN_IN_NAME = {
    '"': 'double quote "',
    ":": "colon :",
    "<": "less than <",
    ">": "greater than >",
    "|": "vertical bar |",
    "*": "asterisk *",
    "?": "question mark ?",
    "\r": "carriage return \\r",
    "\n": "line feed \\n",
    "\\": "backslash \\",
    "/": "forward slash /",
}
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
class UploadedArtifact:
    id: int
    url: str
    """The artifact's page on GitHub."""
    size: int
    """Bytes of the zip as uploaded."""
    digest: str
    """SHA-256 of the zip in hex, as actions/upload-artifact reports it (`artifact-digest`)."""
    warnings: tuple[str, ...] = ()
    """What the upload changed from what was asked, as the toolkit warns of it."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a retried request is tried again (what is retried is fixed)."""

    attempts: int = 5
    base_delay_s: float = 2.0
    max_delay_s: float = 30.0
    """Also the longest Retry-After that is waited for."""
    timeout_s: float = 60.0

    def backoff_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))


DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True)
class _Run:
    token: str
    run_backend_id: str
    job_backend_id: str
    results_origin: str
    run_url: str
    max_retention_days: int | None


def upload_artifact(
    name: str,
    folder: Path,
    *,
    retention_days: int | None,
    env: Mapping[str, str],
    block_size: int = BLOCK_SIZE,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> UploadedArtifact:
    """Zip `folder` and upload it as the artifact `name` of the run `env` describes.

    `retention_days` None or 0 keeps the repository's default retention, as in actions/toolkit;
    more days than the repository allows (GITHUB_RETENTION_DAYS) are cut to its limit, with a
    warning.
    """
    validate_artifact_name(name)
    run = _read_run(env)
    expires_at, warnings = _expiration(retention_days, run.max_retention_days)
    try:
        with tempfile.TemporaryFile() as archive, requests.Session() as session:
            # Zipped before CreateArtifact: an artifact created and never finalized keeps its name.
            size, digest = write_zip(folder, archive)
            service = _ArtifactService(session, run, retry)
            signed_url = service.create(name, expires_at)
            _upload_blob(session, signed_url, archive, block_size, retry)
            artifact_id = service.finalize(name, size, digest)
    except OSError as error:  # writing or reading the temporary file
        raise ArtifactUploadError(f"artifact upload failed: {_describe_exception(error)}") from None
    url = f"{run.run_url}/artifacts/{artifact_id}"
    return UploadedArtifact(artifact_id, url, size, digest, warnings)


def validate_artifact_name(name: str) -> None:
    """The characters actions/toolkit refuses in a name (NTFS cannot store them)."""
    if not name:
        raise ArtifactUploadError("the artifact name is empty")
    found = [label for character, label in FORBIDDEN_IN_NAME.items() if character in name]
    if found:
        raise ArtifactUploadError(
            f"the artifact name {name!r} contains {', '.join(found)}; none of "
            f"{' '.join(repr(character) for character in FORBIDDEN_IN_NAME)} may appear in it"
        )


def write_zip(folder: Path, target: IO[bytes]) -> tuple[int, str]:
    """Zip the files under `folder` into `target`, rewound; answer its size and SHA-256 (hex).

    Members come in a fixed order with paths relative to `folder`; symlinks are skipped, never
    followed, and so are sockets, fifos and devices.
    """
    if not folder.is_dir():
        raise ArtifactUploadError(f"{folder} is not a folder")
    files = 0
    try:
        with zipfile.ZipFile(
            target, "w", zipfile.ZIP_DEFLATED, compresslevel=6, strict_timestamps=False
        ) as archive:
            for path, member in _members(folder):
                archive.write(path, member)
                files += path.is_file()
    except OSError as error:
        raise ArtifactUploadError(f"cannot zip {folder}: {error}") from None
    if not files:
        raise ArtifactUploadError(f"no files to upload in {folder}")
    target.seek(0)
    sha256 = hashlib.sha256()
    while chunk := target.read(_READ_CHUNK):
        sha256.update(chunk)
    size = target.tell()
    target.seek(0)
    return size, sha256.hexdigest()


def _members(folder: Path) -> Iterator[tuple[Path, str]]:
    """Regular files, and folders with nothing else to keep them, in a fixed order.

    A folder's files come first, by name, then its sub-folders, by name.
    """
    for root, folders, names in os.walk(folder):
        here = Path(root)
        # os.walk lists links to folders among the folders but never enters them.
        folders[:] = sorted(name for name in folders if not (here / name).is_symlink())
        files = [here / name for name in sorted(names) if _is_regular(here / name)]
        relative = here.relative_to(folder)
        if here != folder and not files and not folders:
            yield here, relative.as_posix()
        for path in files:
            yield path, (relative / path.name).as_posix()


def _is_regular(path: Path) -> bool:
    return stat.S_ISREG(path.lstat().st_mode)


def _read_run(env: Mapping[str, str]) -> _Run:
    token = _required(env, "ACTIONS_RUNTIME_TOKEN")
    run_backend_id, job_backend_id = _backend_ids(token)
    run_url = "/".join(
        [
            _required(env, "GITHUB_SERVER_URL").rstrip("/"),
            _required(env, "GITHUB_REPOSITORY"),
            "actions/runs",
            _required(env, "GITHUB_RUN_ID"),
        ]
    )
    return _Run(
        token=token,
        run_backend_id=run_backend_id,
        job_backend_id=job_backend_id,
        results_origin=_origin(_required(env, "ACTIONS_RESULTS_URL")),
        run_url=run_url,
        max_retention_days=_max_retention_days(env),
    )


def _required(env: Mapping[str, str], variable: str) -> str:
    value = env.get(variable, "").strip()
    if not value:
        raise ArtifactUploadError(
            f"{variable} is not set: artifacts can only be uploaded from a GitHub Actions job"
        )
    return value


def _backend_ids(token: str) -> tuple[str, str]:
    """The workflow run's and the job's backend ids, from the `scp` claim of the runtime token.

    As actions/toolkit's getBackendIdsFromToken: the first `Actions.Results` scope is the one, and
    one that is not `Actions.Results:<run id>:<job id>` is an error, not skipped.
    """
    for scope in _scopes(token):
        parts = scope.split(":")
        if parts[0] != _RESULTS_SCOPE:
            continue
        if len(parts) != 3 or not parts[1] or not parts[2]:
            raise ArtifactUploadError(
                f"ACTIONS_RUNTIME_TOKEN has a malformed {_RESULTS_SCOPE} scope: it is not "
                f"{_RESULTS_SCOPE}:<run backend id>:<job backend id>"
            )
        return parts[1], parts[2]
    raise ArtifactUploadError(
        f"ACTIONS_RUNTIME_TOKEN has no {_RESULTS_SCOPE} scope: this runner does not offer "
        "GitHub's artifact service v4"
    )


def _scopes(token: str) -> list[str]:
    # The signature is the service's business; only the claims are read.
    segments = token.split(".")
    if len(segments) != 3:
        raise ArtifactUploadError("ACTIONS_RUNTIME_TOKEN is not a JWT")
    payload = segments[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError):
        raise ArtifactUploadError(
            "ACTIONS_RUNTIME_TOKEN has claims that cannot be decoded"
        ) from None
    scopes = claims.get("scp") if isinstance(claims, dict) else None
    if not isinstance(scopes, str):
        raise ArtifactUploadError("ACTIONS_RUNTIME_TOKEN has no scp claim")
    return scopes.split(" ")


def _origin(url: str) -> str:
    # As in actions/toolkit, only the origin is kept: the Twirp path is absolute.
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ArtifactUploadError(f"ACTIONS_RESULTS_URL is not an http(s) URL: {url}")
    return f"{parts.scheme}://{parts.netloc}"


def _max_retention_days(env: Mapping[str, str]) -> int | None:
    """The repository's limit, when GITHUB_RETENTION_DAYS states one (ignored otherwise)."""
    value = env.get("GITHUB_RETENTION_DAYS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _expiration(
    retention_days: int | None, max_days: int | None
) -> tuple[str | None, tuple[str, ...]]:
    """RFC 3339 expiry (None keeps the repository's default retention), and any warning.

    actions/toolkit's getExpiration: no days or 0 days is the default; more days than the
    repository's limit are cut to it; there is no other bound (a repository may allow more
    than 90 days).
    """
    if retention_days is not None and retention_days < 0:
        raise ArtifactUploadError(f"retention days must be 0 or more, not {retention_days}")
    if not retention_days:
        return None, ()
    warnings: tuple[str, ...] = ()
    days = retention_days
    if max_days is not None and max_days < days:
        warnings = (
            f"retention days cannot be more than the repository's limit of {max_days}; "
            f"using {max_days} instead of {days}",
        )
        days = max_days
    expires = (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return expires, warnings


class _ArtifactService:
    """The two Twirp methods of the artifact service, in its JSON encoding."""

    def __init__(self, session: requests.Session, run: _Run, retry: RetryPolicy) -> None:
        self._session = session
        self._run = run
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
            "workflow_run_backend_id": self._run.run_backend_id,
            "workflow_job_run_backend_id": self._run.job_backend_id,
        }

    def _call(self, method: str, request: Mapping[str, object]) -> Mapping[str, object]:
        post = functools.partial(
            self._session.post,
            f"{self._run.results_origin}/twirp/{SERVICE}/{method}",
            data=json.dumps(request),
            headers={
                "Authorization": f"Bearer {self._run.token}",
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


def _upload_blob(
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
                    f"{what} failed: the service cannot be reached: {_describe_exception(error)}"
                ) from None
            problem, wait_s = _describe_exception(error), retry.backoff_s(attempt)
        except requests.exceptions.ChunkedEncodingError as error:  # a broken answer
            problem, wait_s = _describe_exception(error), retry.backoff_s(attempt)
        except requests.RequestException as error:
            raise ArtifactUploadError(f"{what} failed: {_describe_exception(error)}") from None
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


def _describe_exception(error: OSError) -> str:
    # requests quotes the URL, and a signed URL's `sig` is a credential.
    text = re.sub(r"(?i)(sig=)[^&\s'\"]+", r"\1REDACTED", str(error))
    return f"{type(error).__name__}: {' '.join(text.split())}"
