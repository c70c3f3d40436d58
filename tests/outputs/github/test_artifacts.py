"""Artifact upload against the Twirp double and a real Azurite: the whole v4 exchange."""

from __future__ import annotations

import io
import math
import os
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from scbench_ci.outputs.github.artifact_service import ArtifactUploadError
from scbench_ci.outputs.github.artifacts import UploadedArtifact, upload_artifact
from scbench_ci.outputs.github.retry import RetryPolicy
from testing.twirp_server import (
    JOB_BACKEND_ID,
    RUN_BACKEND_ID,
    Artifact,
    ArtifactService,
    BlobAccount,
    make_token,
)

FAST = RetryPolicy(attempts=5, base_delay_s=0.01, max_delay_s=0.05, timeout_s=10)
RESULTS_TOKEN_SCOPE = f"Actions.Results:{RUN_BACKEND_ID}:{JOB_BACKEND_ID}"


@pytest.fixture
def scbench_folder(tmp_path: Path) -> Path:
    folder = tmp_path / ".scbench"
    (folder / "logs" / "empty").mkdir(parents=True)
    (folder / "results.json").write_text('{"verdict": "passed"}\n')
    (folder / "summary.md").write_text("# passed\n")
    (folder / "logs" / "pytest.log").write_text("collected 3 items\n")
    return folder


@pytest.fixture
def proxied_service(azurite: BlobAccount) -> Iterator[ArtifactService]:
    with ArtifactService(azurite, proxy_blobs=True) as service:
        yield service


def upload(
    service: ArtifactService,
    folder: Path,
    name: str = "scbench-results",
    *,
    retention_days: int | None = None,
    retry: RetryPolicy = FAST,
    block_size: int = 8 * 1024 * 1024,
    **env: str,
) -> UploadedArtifact:
    return upload_artifact(
        name,
        folder,
        retention_days=retention_days,
        env=service.environment(**env),
        block_size=block_size,
        retry=retry,
    )


def stored(service: ArtifactService, name: str = "scbench-results") -> Artifact:
    return service.artifacts[(RUN_BACKEND_ID, name)]


def blob_zip(service: ArtifactService, artifact: Artifact) -> zipfile.ZipFile:
    blob = service.container.get_blob_client(artifact.blob_name)
    return zipfile.ZipFile(io.BytesIO(blob.download_blob().readall()))


def assert_expires_in(artifact: Artifact, retention: timedelta) -> None:
    assert artifact.expires_at is not None
    assert artifact.expires_at.endswith("Z")
    expires = datetime.fromisoformat(artifact.expires_at)
    assert abs(expires - (datetime.now(UTC) + retention)) < timedelta(minutes=1)


def test_upload_round_trip(artifact_service: ArtifactService, scbench_folder: Path) -> None:
    uploaded = upload(artifact_service, scbench_folder)

    artifact = stored(artifact_service)
    assert uploaded == UploadedArtifact(
        id=1000,
        url="https://github.com/scbench/demo/actions/runs/4242/artifacts/1000",
        size=artifact.size,
        digest=artifact.digest,
        warnings=(),
    )
    assert (artifact.id, artifact.content_type, artifact.block_count) == (
        1000,
        "application/zip",
        1,
    )
    assert (artifact.version, artifact.mime_type) == (7, "application/zip")
    with blob_zip(artifact_service, artifact) as archive:
        assert archive.namelist() == [
            "results.json",
            "summary.md",
            "logs/pytest.log",
            "logs/empty/",
        ]
        assert archive.read("results.json") == b'{"verdict": "passed"}\n'
        assert archive.read("logs/pytest.log") == b"collected 3 items\n"


def test_requests_use_proto_names_and_proto3_json_types(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    uploaded = upload(artifact_service, scbench_folder)

    [create] = artifact_service.calls_to("CreateArtifact")
    # The current toolkit's request: protocol version 7 and the zip's mime_type.
    assert create.body == {
        "workflow_run_backend_id": RUN_BACKEND_ID,
        "workflow_job_run_backend_id": JOB_BACKEND_ID,
        "name": "scbench-results",
        "mime_type": "application/zip",
        "version": 7,
    }
    [finalize] = artifact_service.calls_to("FinalizeArtifact")
    assert finalize.body["size"] == str(uploaded.size)
    assert finalize.body["hash"] == f"sha256:{uploaded.digest}"


def test_only_the_origin_of_the_results_url_is_used(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    results_url = f"{artifact_service.url}/some/prefix/"
    assert upload(artifact_service, scbench_folder, ACTIONS_RESULTS_URL=results_url).id == 1000


def test_answers_in_lower_camel_case_are_read_too(
    azurite: BlobAccount, scbench_folder: Path
) -> None:
    with ArtifactService(azurite, camel_case=True) as service:
        assert upload(service, scbench_folder).id == 1000


def test_zip_is_the_same_for_the_same_folder(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    first = upload(artifact_service, scbench_folder, "first")
    second = upload(artifact_service, scbench_folder, "second")
    assert first.digest == second.digest


def test_many_blocks_are_committed_in_order(
    artifact_service: ArtifactService, tmp_path: Path
) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    payload = os.urandom(300 * 1024)
    (folder / "random.bin").write_bytes(payload)

    uploaded = upload(artifact_service, folder, block_size=64 * 1024)

    artifact = stored(artifact_service)
    blocks = math.ceil(uploaded.size / (64 * 1024))
    assert blocks >= 5
    assert artifact.block_count == blocks
    with blob_zip(artifact_service, artifact) as archive:
        assert archive.read("random.bin") == payload


def test_symlinks_are_skipped_not_followed(
    artifact_service: ArtifactService, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "secrets").mkdir(parents=True)
    (outside / "secrets" / "key.txt").write_text("do not upload\n")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "kept.txt").write_text("kept\n")
    (folder / "linked-file.txt").symlink_to(outside / "secrets" / "key.txt")
    (folder / "linked-folder").symlink_to(outside / "secrets")
    (folder / "dangling").symlink_to(tmp_path / "nowhere")

    upload(artifact_service, folder)

    with blob_zip(artifact_service, stored(artifact_service)) as archive:
        assert archive.namelist() == ["kept.txt"]


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ('a"b', "double quote"),
        ("a:b", "colon"),
        ("a<b", "less than"),
        ("a>b", "greater than"),
        ("a|b", "vertical bar"),
        ("a*b", "asterisk"),
        ("a?b", "question mark"),
        ("a\rb", "carriage return"),
        ("a\nb", "line feed"),
        ("a\\b", "backslash"),
        ("a/b", "forward slash"),
        ("", "empty"),
    ],
)
def test_forbidden_names_are_refused_before_any_request(
    artifact_service: ArtifactService, scbench_folder: Path, name: str, named: str
) -> None:
    with pytest.raises(ArtifactUploadError, match=named) as raised:
        upload(artifact_service, scbench_folder, name)
    assert "\n" not in str(raised.value)
    assert artifact_service.calls == []


def test_the_message_names_every_bad_character(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    with pytest.raises(ArtifactUploadError, match="colon :, asterisk \\*, forward slash /"):
        upload(artifact_service, scbench_folder, "run:1/*")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "ACTIONS_RUNTIME_TOKEN is not set"),
        ("not-a-jwt", "ACTIONS_RUNTIME_TOKEN is not a JWT"),
        ("aGVhZA.%%%not-base64%%%.c2ln", "cannot be decoded"),
        ("aGVhZA.bm90IGpzb24.c2ln", "cannot be decoded"),
        (make_token(b"k", "Actions.GenericRead:0"), "has no Actions.Results scope"),
        (make_token(b"k", "Actions.ResultsX:a:b"), "has no Actions.Results scope"),
        (make_token(b"k", "Actions.Results:only-one"), "malformed Actions.Results scope"),
        (make_token(b"k", "Actions.Results:a:b:c"), "malformed Actions.Results scope"),
        (make_token(b"k", "Actions.Results::job"), "malformed Actions.Results scope"),
        (make_token(b"k", f"Actions.Results:x {RESULTS_TOKEN_SCOPE}"), "malformed Actions.Results"),
    ],
    ids=[
        "missing",
        "not-a-jwt",
        "bad-base64",
        "not-json",
        "no-results-scope",
        "another-scope",
        "two-parts",
        "four-parts",
        "empty-id",
        "malformed-before-a-good-one",
    ],
)
def test_unusable_tokens_are_refused_before_any_request(
    artifact_service: ArtifactService, scbench_folder: Path, token: str, message: str
) -> None:
    with pytest.raises(ArtifactUploadError, match=message) as raised:
        upload(artifact_service, scbench_folder, ACTIONS_RUNTIME_TOKEN=token)
    assert token == "" or token not in str(raised.value)
    assert artifact_service.calls == []


def test_a_token_without_scp_is_refused(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"  # claims: {"sub": "x"}
    with pytest.raises(ArtifactUploadError, match="no scp claim"):
        upload(artifact_service, scbench_folder, ACTIONS_RUNTIME_TOKEN=token)


def test_a_token_the_service_rejects_is_not_retried(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    forged = make_token(b"not the service's key", RESULTS_TOKEN_SCOPE)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder, ACTIONS_RUNTIME_TOKEN=forged)
    assert str(raised.value) == (
        "CreateArtifact failed: unauthenticated: invalid token signature (HTTP 401)"
    )
    assert len(artifact_service.calls) == 1


@pytest.mark.parametrize(
    "variable",
    ["ACTIONS_RESULTS_URL", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"],
)
def test_missing_run_variables_are_named(
    artifact_service: ArtifactService, scbench_folder: Path, variable: str
) -> None:
    env = artifact_service.environment()
    del env[variable]
    with pytest.raises(ArtifactUploadError, match=f"^{variable} is not set"):
        upload_artifact("results", scbench_folder, retention_days=None, env=env, retry=FAST)


def test_a_duplicate_name_in_the_run_asks_for_another_artifact_name(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    upload(artifact_service, scbench_folder)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder)
    assert str(raised.value) == (
        "an artifact named 'scbench-results' already exists in this workflow run; "
        "set artifact_name to a name unique to this job"
    )
    assert [call.status for call in artifact_service.calls_to("CreateArtifact")] == [200, 409]


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_two_retryable_errors_are_retried(
    artifact_service: ArtifactService, scbench_folder: Path, status: int
) -> None:
    artifact_service.fail_next(2, status=status)
    assert upload(artifact_service, scbench_folder).id == 1000
    statuses = [call.status for call in artifact_service.calls_to("CreateArtifact")]
    assert statuses == [status, status, 200]


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "invalid_argument"), (403, "permission_denied"), (501, "unimplemented")],
)
def test_other_errors_are_not_retried(
    artifact_service: ArtifactService, scbench_folder: Path, status: int, code: str
) -> None:
    artifact_service.fail_next(2, status=status)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder)
    assert str(raised.value) == (
        f"CreateArtifact failed: {code}: injected failure ({status}) (HTTP {status})"
    )
    assert len(artifact_service.calls) == 1


@pytest.mark.parametrize("status", [429, 403])
def test_a_spent_storage_quota_fails_at_once(
    artifact_service: ArtifactService, scbench_folder: Path, status: int
) -> None:
    """actions/toolkit's UsageError: an error whose message says `insufficient usage` is never
    retried, not even as a 429."""
    message = "insufficient usage to create artifact"
    artifact_service.fail_next(5, status=status, message=message)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder)
    assert str(raised.value).startswith(
        "CreateArtifact failed: the artifact storage quota has been hit: no new artifact can be "
        "uploaded until usage is recalculated (every 6-12 hours): "
    )
    assert str(raised.value).endswith(f"{message} (HTTP {status})")
    assert len(artifact_service.calls) == 1


def test_a_429_is_retried_after_its_retry_after(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    artifact_service.fail_next(1, status=429, retry_after="0")
    slow_backoff = RetryPolicy(attempts=5, base_delay_s=30, max_delay_s=30, timeout_s=10)
    started = time.monotonic()
    upload(artifact_service, scbench_folder, retry=slow_backoff)
    assert time.monotonic() - started < 10  # Retry-After: 0 was taken over the 30 s backoff
    statuses = [call.status for call in artifact_service.calls_to("CreateArtifact")]
    assert statuses == [429, 200]


def test_a_permanent_server_error_gives_up_after_the_attempts(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    artifact_service.fail_next(100, status=500)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder)
    assert str(raised.value) == (
        "CreateArtifact failed after 5 attempts: internal: injected failure (500) (HTTP 500)"
    )
    assert len(artifact_service.calls) == 5


def test_an_unreachable_service_fails_at_once(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    """The toolkit's NetworkError: a refused connection is not retried."""
    slow_backoff = RetryPolicy(attempts=5, base_delay_s=30, max_delay_s=30, timeout_s=10)
    started = time.monotonic()
    with pytest.raises(ArtifactUploadError) as raised:
        upload(
            artifact_service,
            scbench_folder,
            retry=slow_backoff,
            ACTIONS_RESULTS_URL="http://127.0.0.1:9/",
        )
    assert time.monotonic() - started < 10  # no 30 s wait before a second attempt
    assert str(raised.value).startswith(
        "CreateArtifact failed: the service cannot be reached: ConnectionError: "
    )


def test_blob_server_errors_are_retried(proxied_service: ArtifactService, tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "random.bin").write_bytes(os.urandom(200 * 1024))
    proxied_service.fail_next_blob_requests(2, status=503)

    upload(proxied_service, folder, block_size=64 * 1024)

    labels = [(call.method, call.status) for call in proxied_service.blob_calls]
    assert labels[:3] == [("PUT block", 503), ("PUT block", 503), ("PUT block", 201)]
    assert labels[-1] == ("PUT blocklist", 201)
    assert stored(proxied_service).block_count == 4


def test_blob_errors_are_retried_as_the_storage_sdk_retries_them(
    proxied_service: ArtifactService, scbench_folder: Path
) -> None:
    """@azure/storage-blob's StorageRetryPolicy retries 500 and 503, not a 502 or a 429."""
    proxied_service.fail_next_blob_requests(1, status=502)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(proxied_service, scbench_folder)
    assert str(raised.value) == "uploading block 1 of the zip failed: HTTP 502 InjectedFailure"
    assert [(call.method, call.status) for call in proxied_service.blob_calls] == [
        ("PUT block", 502)
    ]


def test_a_permanent_blob_error_names_no_signature(
    proxied_service: ArtifactService, scbench_folder: Path
) -> None:
    proxied_service.fail_next_blob_requests(100, status=500)
    with pytest.raises(ArtifactUploadError) as raised:
        upload(proxied_service, scbench_folder)
    assert str(raised.value) == (
        "uploading block 1 of the zip failed after 5 attempts: HTTP 500 InjectedFailure"
    )
    assert proxied_service.calls_to("FinalizeArtifact") == []


def test_a_refused_blob_connection_names_no_signature(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    artifact_service.signed_url_origin = "http://127.0.0.1:9"  # nothing listens there
    with pytest.raises(ArtifactUploadError) as raised:
        upload(artifact_service, scbench_folder)
    message = str(raised.value)
    assert message.startswith("uploading block 1 of the zip failed after 5 attempts: Connection")
    signature = parse_qs(urlsplit(stored(artifact_service).signed_url).query)["sig"][0]
    assert "sig=REDACTED" in message
    assert signature not in message
    assert quote(signature, safe="") not in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("days", "limit", "kept"),
    [
        (None, "5", None),
        (0, "5", None),  # 0 is the repository's default, as in actions/toolkit
        (0, None, None),
        (1, "90", 1),
        (1, None, 1),
        (3, "90", 3),
        (90, "90", 90),
        (90, None, 90),
        (91, None, 91),  # the toolkit has no bound of its own: the repository's limit is it
        (400, "400", 400),
        (400, "not-a-number", 400),
    ],
)
def test_retention_is_kept_within_the_repository_limit(
    artifact_service: ArtifactService,
    scbench_folder: Path,
    days: int | None,
    limit: str | None,
    kept: int | None,
) -> None:
    env = artifact_service.environment()
    if limit is not None:
        env["GITHUB_RETENTION_DAYS"] = limit
    uploaded = upload_artifact(
        "scbench-results", scbench_folder, retention_days=days, env=env, retry=FAST
    )
    artifact = stored(artifact_service)
    if kept is None:
        assert artifact.expires_at is None
    else:
        assert_expires_in(artifact, timedelta(days=kept))
    assert uploaded.warnings == ()


@pytest.mark.parametrize(("days", "limit"), [(30, 5), (91, 90), (400, 90)])
def test_retention_above_the_repository_limit_is_cut_with_a_warning(
    artifact_service: ArtifactService, scbench_folder: Path, days: int, limit: int
) -> None:
    uploaded = upload(
        artifact_service, scbench_folder, retention_days=days, GITHUB_RETENTION_DAYS=str(limit)
    )
    assert_expires_in(stored(artifact_service), timedelta(days=limit))
    assert uploaded.warnings == (
        f"retention days cannot be more than the repository's limit of {limit}; "
        f"using {limit} instead of {days}",
    )


def test_negative_retention_is_refused(
    artifact_service: ArtifactService, scbench_folder: Path
) -> None:
    with pytest.raises(ArtifactUploadError, match=r"retention days must be 0 or more, not -1$"):
        upload(artifact_service, scbench_folder, retention_days=-1)
    assert artifact_service.calls == []


def test_a_folder_without_files_is_refused(
    artifact_service: ArtifactService, tmp_path: Path
) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(ArtifactUploadError, match="no files to upload in"):
        upload(artifact_service, tmp_path / "empty")
    with pytest.raises(ArtifactUploadError, match="is not a folder"):
        upload(artifact_service, tmp_path / "missing")
    assert artifact_service.calls == []
