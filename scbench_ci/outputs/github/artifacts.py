"""Upload a folder as a workflow artifact through GitHub's artifact service v4
(artifact_service.py): the folder zipped, the artifact's name checked, the run's backend ids read
from the `Actions.Results` scope of the runtime token, the retention cut to the repository's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import requests

from scbench_ci.outputs.github.artifact_service import (
    ArtifactService,
    ArtifactUploadError,
    ServiceAccess,
    describe_exception,
    upload_blob,
)
from scbench_ci.outputs.github.retry import RetryPolicy

BLOCK_SIZE = 8 * 1024 * 1024
_READ_CHUNK = 1024 * 1024
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


DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True)
class _Run:
    access: ServiceAccess
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
            service = ArtifactService(session, run.access, retry)
            signed_url = service.create(name, expires_at)
            upload_blob(session, signed_url, archive, block_size, retry)
            artifact_id = service.finalize(name, size, digest)
    except OSError as error:  # writing or reading the temporary file
        raise ArtifactUploadError(f"artifact upload failed: {describe_exception(error)}") from None
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
        access=ServiceAccess(
            token=token,
            results_origin=_origin(_required(env, "ACTIONS_RESULTS_URL")),
            run_backend_id=run_backend_id,
            job_backend_id=job_backend_id,
        ),
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
