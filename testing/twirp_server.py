"""A stand-in for GitHub's artifact service v4, in front of a real Azurite.

It speaks Twirp's JSON encoding as a Go Twirp server does: POST only, `Content-Type:
application/json`, request fields by proto name or lowerCamelCase, unknown fields ignored,
answers with proto names, int64 as strings, and errors as `{"code", "msg"}` with Twirp's HTTP
status for the code. CreateArtifact takes the versions actions/toolkit sends (4, and 7 with a
mime_type since) and answers a SAS URL into Azurite; FinalizeArtifact reads the committed blob back
and checks its block list, size and SHA-256. It checks the bearer token it
issued against the backend ids of each request, can fail the next requests on demand, and can put
itself between the client and Azurite to fail blob requests too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import requests
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobSasPermissions, BlobServiceClient, generate_blob_sas

SERVICE = "github.actions.results.api.v1.ArtifactService"
RUN_BACKEND_ID = "ce7f54c7-61c7-4aae-887f-30da475f5f1a"
JOB_BACKEND_ID = "ca395085-040a-526b-2ce8-bdc85f692774"
ALREADY_EXISTS = "an artifact with this name already exists on the workflow run"
CLIENT_VERSIONS = (4, 7)
"""CreateArtifact's `version` as actions/toolkit has sent it: 4, then 7 with `mime_type`."""

TWIRP_STATUS = {
    "canceled": 408,
    "invalid_argument": 400,
    "malformed": 400,
    "deadline_exceeded": 408,
    "not_found": 404,
    "bad_route": 404,
    "already_exists": 409,
    "permission_denied": 403,
    "unauthenticated": 401,
    "resource_exhausted": 429,
    "failed_precondition": 412,
    "aborted": 409,
    "out_of_range": 400,
    "unimplemented": 501,
    "internal": 500,
    "unavailable": 503,
    "dataloss": 500,
    "unknown": 500,
}
_CODE_FOR_STATUS = {
    400: "invalid_argument",
    403: "permission_denied",
    429: "resource_exhausted",
    501: "unimplemented",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

_IDS = {"workflow_run_backend_id": "string", "workflow_job_run_backend_id": "string"}
_CREATE_FIELDS = {
    **_IDS,
    "name": "string",
    "expires_at": "timestamp",
    "version": "int32",
    "mime_type": "string",
}
_FINALIZE_FIELDS = {**_IDS, "name": "string", "size": "int64", "hash": "string"}


@dataclass(frozen=True)
class BlobAccount:
    """A storage account of the Azurite the tests run against."""

    endpoint: str
    """`http://127.0.0.1:<port>/<account>`"""
    name: str
    key: str

    def client(self) -> BlobServiceClient:
        return BlobServiceClient(
            self.endpoint, credential={"account_name": self.name, "account_key": self.key}
        )


@dataclass
class Artifact:
    name: str
    run_backend_id: str
    job_backend_id: str
    blob_name: str
    expires_at: str | None
    version: int = 0
    mime_type: str | None = None
    signed_url: str = ""
    id: int | None = None
    """Set by FinalizeArtifact."""
    size: int = 0
    digest: str = ""
    content_type: str | None = None
    block_count: int = 0


@dataclass(frozen=True)
class Call:
    method: str
    """The Twirp method, or the HTTP method and `comp` of a proxied blob request."""
    status: int
    body: Mapping[str, object] = field(default_factory=dict)


class TwirpFailure(Exception):
    """A Twirp error; injected ones may carry another status and headers such as Retry-After."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or TWIRP_STATUS[code]
        self.headers = dict(headers or {})


@dataclass
class _Faults:
    count: int = 0
    status: int = 500
    retry_after: str | None = None
    message: str | None = None

    def take(self) -> _Faults | None:
        if self.count <= 0:
            return None
        self.count -= 1
        return _Faults(1, self.status, self.retry_after, self.message)


def make_token(secret: bytes, scopes: str, *, lifetime_s: int = 3600) -> str:
    """A JWT (HS256) carrying `scopes` in its `scp` claim, as the runner's runtime token does."""
    header = _b64url(json.dumps({"typ": "JWT", "alg": "HS256"}).encode())
    claims = {"scp": scopes, "iss": "scbench-tests", "exp": int(time.time()) + lifetime_s}
    payload = _b64url(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64url(signature)}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ArtifactService:
    """The double; a context manager that serves on 127.0.0.1 at a free port."""

    def __init__(
        self, account: BlobAccount, *, camel_case: bool = False, proxy_blobs: bool = False
    ) -> None:
        self.account = account
        self.camel_case = camel_case
        self.calls: list[Call] = []
        self.blob_calls: list[Call] = []
        self.artifacts: dict[tuple[str, str], Artifact] = {}
        self.secret = secrets.token_bytes(32)
        self.container = account.client().create_container(f"artifacts-{uuid.uuid4().hex[:12]}")
        self._faults = _Faults()
        self._blob_faults = _Faults()
        self._next_id = 1000
        self._lock = threading.Lock()
        self._forwarder = requests.Session()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        self.signed_url_origin = self.url if proxy_blobs else None
        """Where signed URLs point instead of Azurite: this double's blob proxy, or nowhere."""

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def token(self) -> str:
        scope = f"Actions.GenericRead:0 Actions.Results:{RUN_BACKEND_ID}:{JOB_BACKEND_ID}"
        return make_token(self.secret, scope)

    def environment(self, **overrides: str) -> dict[str, str]:
        """What a container action finds in its environment, pointing at this double."""
        env = {
            "ACTIONS_RUNTIME_TOKEN": self.token(),
            "ACTIONS_RESULTS_URL": f"{self.url}/",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "scbench/demo",
            "GITHUB_RUN_ID": "4242",
        }
        return {**env, **overrides}

    def fail_next(
        self,
        count: int,
        status: int = 500,
        retry_after: str | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next `count` Twirp requests with `status`, as a Twirp error whose message
        is `message` (by default one that names the status)."""
        with self._lock:
            self._faults = _Faults(count, status, retry_after, message)

    def fail_next_blob_requests(self, count: int, status: int = 500) -> None:
        """Answer the next `count` blob requests with `status` (needs `proxy_blobs=True`)."""
        with self._lock:
            self._blob_faults = _Faults(count, status)

    def calls_to(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._forwarder.close()
        self.container.delete_container()

    def __enter__(self) -> ArtifactService:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # --- Twirp ---

    def handle_twirp(self, handler: _Handler, body: bytes) -> None:
        method = urlsplit(handler.path).path.removeprefix(f"/twirp/{SERVICE}/")
        headers: Mapping[str, str] = {}
        try:
            status, answer = 200, self._twirp(handler, method, body)
        except TwirpFailure as failure:
            status, headers = failure.status, failure.headers
            answer = {"code": failure.code, "msg": failure.message}
        self._record(method, status, body)
        handler.respond_json(status, answer, headers)

    def _twirp(self, handler: _Handler, method: str, body: bytes) -> Mapping[str, object]:
        routes: dict[str, Callable[[Mapping[str, object], tuple[str, str]], Mapping[str, object]]]
        routes = {"CreateArtifact": self._create, "FinalizeArtifact": self._finalize}
        route = routes.get(method)
        if handler.command != "POST" or route is None:
            raise TwirpFailure("bad_route", f"no handler for {handler.command} {handler.path}")
        content_type = handler.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type != "application/json":
            raise TwirpFailure("bad_route", f"unexpected Content-Type: {content_type!r}")
        self._inject_fault()
        scope = self._authorize(handler.headers.get("Authorization", ""))
        fields = _CREATE_FIELDS if method == "CreateArtifact" else _FINALIZE_FIELDS
        with self._lock:
            return self._answer(route(_decode(body, fields), scope))

    def _inject_fault(self) -> None:
        with self._lock:
            fault = self._faults.take()
        if fault is None:
            return
        code = _CODE_FOR_STATUS.get(fault.status, "internal")
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        message = fault.message or f"injected failure ({fault.status})"
        raise TwirpFailure(code, message, status=fault.status, headers=headers)

    def _authorize(self, header: str) -> tuple[str, str]:
        """The backend ids the bearer token is scoped to."""
        scheme, _, token = header.partition(" ")
        if scheme != "Bearer" or not token:
            raise TwirpFailure("unauthenticated", "missing bearer token")
        parts = token.split(".")
        if len(parts) != 3:
            raise TwirpFailure("unauthenticated", "malformed token")
        expected = hmac.new(self.secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256)
        if not hmac.compare_digest(_b64url(expected.digest()), parts[2]):
            raise TwirpFailure("unauthenticated", "invalid token signature")
        claims = json.loads(_b64url_decode(parts[1]))
        if claims.get("exp", 0) < time.time():
            raise TwirpFailure("unauthenticated", "token expired")
        for scope in str(claims.get("scp", "")).split(" "):
            pieces = scope.split(":")
            if len(pieces) == 3 and pieces[0] == "Actions.Results":
                return pieces[1], pieces[2]
        raise TwirpFailure("permission_denied", "token has no Actions.Results scope")

    def _create(self, request: Mapping[str, object], scope: tuple[str, str]) -> dict[str, object]:
        run_id, job_id = _check_scope(request, scope)
        name = str(request.get("name", ""))
        version = request.get("version", 0)
        if not isinstance(version, int) or version not in CLIENT_VERSIONS:
            raise TwirpFailure("invalid_argument", f"unknown version {version}")
        if not name:
            raise TwirpFailure("invalid_argument", "name is required")
        if (run_id, name) in self.artifacts:
            raise TwirpFailure("already_exists", ALREADY_EXISTS)
        expires_at, mime_type = request.get("expires_at"), request.get("mime_type")
        artifact = Artifact(
            name=name,
            run_backend_id=run_id,
            job_backend_id=job_id,
            blob_name=f"{run_id}/{job_id}/{uuid.uuid4().hex}.zip",
            expires_at=expires_at if isinstance(expires_at, str) else None,
            version=version,
            mime_type=mime_type if isinstance(mime_type, str) else None,
        )
        self.artifacts[(run_id, name)] = artifact
        artifact.signed_url = self._signed_url(artifact.blob_name)
        return {"ok": True, "signed_upload_url": artifact.signed_url}

    def _signed_url(self, blob_name: str) -> str:
        signature = generate_blob_sas(
            self.account.name,
            self.container.container_name,
            blob_name,
            account_key=self.account.key,
            permission=BlobSasPermissions(create=True, write=True),
            expiry=datetime.now(UTC) + timedelta(hours=1),
        )
        url = f"{self.container.get_blob_client(blob_name).url}?{signature}"
        if self.signed_url_origin is not None:
            url = url.replace(_origin(self.account.endpoint), self.signed_url_origin, 1)
        return url

    def _finalize(self, request: Mapping[str, object], scope: tuple[str, str]) -> dict[str, object]:
        run_id, _ = _check_scope(request, scope)
        artifact = self.artifacts.get((run_id, str(request.get("name", ""))))
        if artifact is None:
            raise TwirpFailure("not_found", "artifact not found")
        if artifact.id is not None:
            raise TwirpFailure("failed_precondition", "artifact is already finalized")
        blob = self.container.get_blob_client(artifact.blob_name)
        try:
            committed, _ = blob.get_block_list("committed")
            content = blob.download_blob().readall()
        except ResourceNotFoundError:
            raise TwirpFailure("failed_precondition", "no blob was committed") from None
        block_ids = [block.id for block in committed]
        if not block_ids or block_ids != sorted(set(block_ids)):
            raise TwirpFailure("failed_precondition", f"blocks committed out of order: {block_ids}")
        digest = hashlib.sha256(content).hexdigest()
        if request.get("size", 0) != len(content):
            raise TwirpFailure(
                "invalid_argument", f"size {request.get('size')} but the blob has {len(content)}"
            )
        if "hash" in request and request["hash"] != f"sha256:{digest}":
            raise TwirpFailure("invalid_argument", f"hash {request['hash']} does not match")
        artifact.id, self._next_id = self._next_id, self._next_id + 1
        artifact.size, artifact.digest, artifact.block_count = len(content), digest, len(block_ids)
        artifact.content_type = blob.get_blob_properties().content_settings.content_type
        return {"ok": True, "artifact_id": str(artifact.id)}

    def _answer(self, answer: Mapping[str, object]) -> Mapping[str, object]:
        if not self.camel_case:
            return answer
        return {_camel(name): value for name, value in answer.items()}

    def _record(self, method: str, status: int, body: bytes) -> None:
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = {}
        with self._lock:
            self.calls.append(Call(method, status, decoded if isinstance(decoded, dict) else {}))

    # --- blob proxy ---

    def handle_blob(self, handler: _Handler, body: bytes) -> None:
        comp = parse_qs(urlsplit(handler.path).query).get("comp", [""])[0]
        label = f"{handler.command} {comp}".strip()
        with self._lock:
            fault = self._blob_faults.take()
        if fault is not None:
            self._record_blob(label, fault.status)
            handler.respond(fault.status, b"", {"x-ms-error-code": "InjectedFailure"})
            return
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
        answer = self._forwarder.request(
            handler.command,
            _origin(self.account.endpoint) + handler.path,
            headers=headers,
            data=body,
            timeout=30,
            allow_redirects=False,
        )
        self._record_blob(label, answer.status_code)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
        kept.pop("Content-Encoding", None)
        handler.respond(answer.status_code, answer.content, kept)

    def _record_blob(self, label: str, status: int) -> None:
        with self._lock:
            self.blob_calls.append(Call(label, status))


def _check_scope(request: Mapping[str, object], scope: tuple[str, str]) -> tuple[str, str]:
    ids = (request.get("workflow_run_backend_id"), request.get("workflow_job_run_backend_id"))
    if ids != scope:
        raise TwirpFailure("permission_denied", "token is not valid for this workflow job run")
    return scope


def _decode(body: bytes, fields: Mapping[str, str]) -> dict[str, object]:
    """protojson with DiscardUnknown, as a Go Twirp server decodes a JSON request."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise TwirpFailure("malformed", "the json request could not be decoded")
    message: dict[str, object] = {}
    for name, kind in fields.items():
        value = data.get(name, data.get(_camel(name)))
        if value is not None:
            message[name] = _convert(name, kind, value)
    return message


def _convert(name: str, kind: str, value: object) -> object:
    malformed = TwirpFailure("malformed", f"the json request could not be decoded: {name}")
    if kind == "string":
        if not isinstance(value, str):
            raise malformed
        return value
    if kind == "timestamp":  # RFC 3339: an offset or Z is required
        try:
            offset = datetime.fromisoformat(value).utcoffset() if isinstance(value, str) else None
        except ValueError:
            offset = None
        if offset is None:
            raise malformed
        return value
    # int32 and int64: a JSON number, or a string of digits.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise malformed
    try:
        return int(value)
    except ValueError:
        raise malformed from None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, double: ArtifactService) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.double = double


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/twirp/"):
            self.server.double.handle_twirp(self, body)
        else:
            self.server.double.handle_blob(self, body)

    def respond_json(
        self, status: int, answer: Mapping[str, object], headers: Mapping[str, str] | None = None
    ) -> None:
        content = json.dumps(answer).encode()
        self.respond(status, content, {"Content-Type": "application/json", **(headers or {})})

    def respond(self, status: int, content: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: pytest shows what the tests assert."""
