"""A stand-in for the endpoints of GitHub's REST API that scbench-ci calls, on 127.0.0.1.

As GitHub documents them (API version 2022-11-28): workflow runs of a workflow file filtered by
`branch`, `status` (a status or a conclusion) and `event`, newest first, as `{total_count,
workflow_runs}`; a run's artifacts filtered by `name`, as `{total_count, artifacts}`; an artifact's
zip as a 302 to a short-lived signed URL (410 once it has expired), served by a "blob" route that,
like a pre-signed storage URL, refuses a request that carries an Authorization header; an issue's
comments oldest first, created (201 with Location), edited, deleted (204), with the 65,536
character limit answered as a 422; a pull request (its head); check runs created (201) and updated,
as the checks API documents them: `name` and `head_sha` required, `status` and `conclusion` from
their lists (a completed run needs a conclusion), `output.title` and `output.summary` required,
`output.summary` and `output.text` at most 65,535 characters, at most 50 annotations a request
(each with `path`, `start_line`, `end_line`, `annotation_level` notice, warning or failure, and
`message`; a `title` of at most 255 characters), appended by each update, all of them read back
(`check_runs`, and GET .../annotations); a 422 for anything else, and a token without `checks:
write` gets the 403. The payload of a `workflow_run` event for a run is made as GitHub sends it
(`workflow_run_event`): its `pull_requests` list the run's pull request, unless that comes from a
fork, for which GitHub lists none. Lists take `per_page` (default 30, at most 100) and `page`
and answer a `Link` header with `prev`, `next`, `last` and `first` whose URLs, as GitHub's do,
name the repository by id (`/repositories/{id}/...`). Errors are `{message, documentation_url,
status}`. Tokens are checked: none or an unknown one is a 401, a token without the permission a 403
"Resource not accessible by integration". The next requests can be made to fail or to wait, and
hooks run before each request and after each comment is created (to race two jobs).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import math
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

REPOSITORY = "scbench/demo"
REPOSITORY_ID = 700042
WORKFLOW = "nightly.yml"
API_VERSIONS = ("2022-11-28",)
WRITE_TOKEN = "ghs_write0000000000000000000000000000000"
READ_TOKEN = "ghs_read00000000000000000000000000000000"
"""The job token of a pull request from a fork: it reads, and every write is a 403."""
COMMENT_LIMIT = 65_536
CHECK_OUTPUT_LIMIT = 65_535
ANNOTATIONS_PER_REQUEST = 50
ANNOTATION_TITLE_LIMIT = 255
CHECK_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CONCLUSIONS = (
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
)
ANNOTATION_LEVELS = ("notice", "warning", "failure")
FORK = "contributor/demo"
"""A fork of the repository, where pull requests come from."""
NOT_ACCESSIBLE = "Resource not accessible by integration"
_DOCS = "https://docs.github.com/rest"
_EPOCH = datetime(2026, 11, 1, tzinfo=UTC)
_RUN_STATUSES = {"queued", "in_progress", "completed", "requested", "waiting", "pending"}


@dataclass(frozen=True)
class User:
    login: str
    id: int
    type: str = "User"


BOT = User("github-actions[bot]", 41898282, "Bot")


@dataclass
class Grant:
    """What a token may do, and who it writes as."""

    actions: bool = True
    """Read workflow runs and artifacts (`actions: read`)."""
    write: bool = True
    """Create, edit and delete comments (`pull-requests: write`)."""
    checks: bool = True
    """Create and update check runs (`checks: write`)."""
    user: User = BOT


@dataclass
class Run:
    id: int
    created_at: str
    workflow: str = WORKFLOW
    head_branch: str = "main"
    status: str = "completed"
    conclusion: str | None = "success"
    event: str = "push"
    head_repository: str = REPOSITORY
    head_sha: str = "0" * 40
    pull_request: int | None = None
    """The pull request the run was for (event `pull_request`)."""


@dataclass
class Artifact:
    id: int
    run_id: int
    name: str
    content: bytes
    created_at: str
    expired: bool = False


@dataclass
class Comment:
    id: int
    issue: int
    body: str
    user: User
    created_at: str
    updated_at: str


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    title: str
    summary: str
    text: str | None
    created_at: str
    annotations: list[dict[str, object]] = field(default_factory=list)
    """Every annotation of every request, in order."""
    requests: int = 1
    """The create, then each update."""


@dataclass
class State:
    """The repository as the tests set it up; the double reads and changes it under its lock."""

    default_branch: str = "main"
    workflows: set[str] = field(default_factory=lambda: {WORKFLOW})
    pull_requests: dict[int, str] = field(default_factory=lambda: {7: "7" * 40})
    """Each pull request's number and head commit."""
    runs: list[Run] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    check_runs: list[CheckRun] = field(default_factory=list)
    tokens: dict[str, Grant] = field(
        default_factory=lambda: {
            WRITE_TOKEN: Grant(),
            READ_TOKEN: Grant(write=False, checks=False),
        }
    )


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    status: int


@dataclass
class _Fault:
    count: int
    status: int
    method: str | None
    path_contains: str
    headers: Mapping[str, str]
    message: str
    delay_s: float = 0.0


class _Answer(Exception):
    """An error answer, raised from anywhere in a route."""

    def __init__(
        self, status: int, message: str, headers: Mapping[str, str] | None = None, **extra: object
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, object] = {
            "message": message,
            **extra,
            "documentation_url": _DOCS,
            "status": str(status),
        }
        self.headers = headers or {}


_NOT_FOUND = "Not Found"


class RestDouble:
    def __init__(self) -> None:
        self.state = State()
        self.requests: list[Recorded] = []
        self.before_request: Callable[[str, str], None] | None = None
        """Called with the method and path of each request before it is answered."""
        self.after_comment_created: Callable[[Comment], None] | None = None
        """Called after a comment is created, before the POST is answered."""
        self._faults: list[_Fault] = []
        self._ids = itertools.count(1001)
        self._clock = itertools.count(1)
        self._secret = secrets.token_bytes(16)
        self._lock = threading.RLock()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def environment(self, **overrides: str) -> dict[str, str]:
        """What a job's step finds in its environment, pointing at this double."""
        env = {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_RUN_ID": "999999",
            "GITHUB_WORKFLOW_REF": f"{REPOSITORY}/.github/workflows/{WORKFLOW}@refs/heads/main",
            "GITHUB_WORKFLOW": "Nightly",
            "GITHUB_JOB": "evaluate",
            "GITHUB_EVENT_NAME": "pull_request",
        }
        return {**env, **overrides}

    # --- set-up ---

    def add_run(self, **fields: object) -> Run:
        """A run newer than every run added before it."""
        with self._lock:
            values: dict[str, object] = {"id": next(self._ids), "created_at": self._now()}
            run = Run(**{**values, **fields})  # type: ignore[arg-type]
            self.state.runs.append(run)
            return run

    def add_artifact(
        self, run: Run, name: str, content: bytes = b"", *, expired: bool = False
    ) -> Artifact:
        with self._lock:
            artifact = Artifact(next(self._ids), run.id, name, content, self._now(), expired)
            self.state.artifacts.append(artifact)
            return artifact

    def add_comment(self, issue: int, body: str, user: User = BOT) -> Comment:
        with self._lock:
            now = self._now()
            comment = Comment(next(self._ids), issue, body, user, now, now)
            self.state.comments.append(comment)
            return comment

    def comments_on(self, issue: int) -> list[Comment]:
        with self._lock:
            return sorted(
                (comment for comment in self.state.comments if comment.issue == issue),
                key=lambda comment: comment.id,
            )

    def check_runs_on(self, head_sha: str) -> list[CheckRun]:
        with self._lock:
            return [run for run in self.state.check_runs if run.head_sha == head_sha]

    def workflow_run_event(self, run: Run) -> dict[str, object]:
        """The payload of the `workflow_run` event GitHub sends when `run` completes."""
        with self._lock:
            return {
                "action": "completed",
                "workflow_run": self._run_json(run),
                "workflow": {"id": 161335, "name": "Nightly", "path": run.workflow},
                "repository": self._repository(),
                "sender": {"login": BOT.login, "id": BOT.id, "type": BOT.type},
            }

    def fail_next(
        self,
        count: int,
        status: int = 502,
        *,
        method: str | None = None,
        path_contains: str = "",
        headers: Mapping[str, str] | None = None,
        message: str = "Server Error",
    ) -> None:
        """Answer the next `count` requests (of `method`, with `path_contains` in their path)
        with `status` and GitHub's error body."""
        with self._lock:
            fault = _Fault(count, status, method, path_contains, headers or {}, message)
            self._faults.append(fault)

    def delay_next(self, count: int, seconds: float, *, path_contains: str = "") -> None:
        """Wait `seconds` before answering the next `count` matching requests (as usual)."""
        with self._lock:
            self._faults.append(_Fault(count, 0, None, path_contains, {}, "", seconds))

    def requests_to(self, path_contains: str, method: str | None = None) -> list[Recorded]:
        with self._lock:
            return [
                recorded
                for recorded in self.requests
                if path_contains in recorded.path and method in (None, recorded.method)
            ]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> RestDouble:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # --- serving ---

    def handle(self, handler: _Handler) -> None:
        parts = urlsplit(handler.path)
        path = _canonical(parts.path)
        query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
        headers = {name.lower(): value for name, value in handler.headers.items()}
        length = int(headers.get("content-length", "0") or "0")
        body = handler.rfile.read(length) if length else b""
        if self.before_request is not None:
            self.before_request(handler.command, path)
        status, content, answer_headers = self._answer(handler.command, path, query, headers, body)
        with self._lock:
            self.requests.append(Recorded(handler.command, path, query, headers, status))
        handler.respond(status, content, answer_headers)

    def _answer(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, bytes, dict[str, str]]:
        created: Comment | None = None
        try:
            self._inject_fault(method, path)
            if path.startswith("/_blob/"):
                return self._blob(path, query, headers)
            grant = self._authorize(headers)
            with self._lock:
                status, answer, extra = self._route(method, path, query, grant, body)
            if isinstance(answer, Comment) and method == "POST":
                created = answer
            content = answer if isinstance(answer, bytes) else None
        except _Answer as error:
            return error.status, json.dumps(error.body).encode(), _json_headers(error.headers)
        if created is not None and self.after_comment_created is not None:
            self.after_comment_created(created)
        if content is not None:
            return status, content, extra
        serialized = self._serialize(answer)
        data = b"" if serialized is None else json.dumps(serialized).encode()
        return status, data, _json_headers(extra) if data else extra

    def _inject_fault(self, method: str, path: str) -> None:
        with self._lock:
            fault = next(
                (
                    f
                    for f in self._faults
                    if f.count > 0 and f.path_contains in path and f.method in (None, method)
                ),
                None,
            )
            if fault is not None:
                fault.count -= 1
        if fault is None:
            return
        if fault.delay_s:
            time.sleep(fault.delay_s)
            return
        raise _Answer(fault.status, fault.message, fault.headers)

    def _authorize(self, headers: Mapping[str, str]) -> Grant:
        version = headers.get("x-github-api-version")
        if version is not None and version not in API_VERSIONS:
            raise _Answer(400, f"API version {version!r} is not supported.")
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if not token or scheme.lower() not in ("bearer", "token"):
            raise _Answer(401, "Requires authentication")
        grant = self.state.tokens.get(token)
        if grant is None:
            raise _Answer(401, "Bad credentials")
        return grant

    def _route(
        self, method: str, path: str, query: Mapping[str, str], grant: Grant, body: bytes
    ) -> tuple[int, object, dict[str, str]]:
        repo = f"/repos/{REPOSITORY}"
        if not path.startswith(repo):
            raise _Answer(404, _NOT_FOUND)
        rest = path[len(repo) :]
        if rest == "" and method == "GET":
            return 200, self._repository(), {}
        if rest.startswith("/actions/"):
            if method != "GET":
                raise _Answer(404, _NOT_FOUND)
            if not grant.actions:
                raise _Answer(403, NOT_ACCESSIBLE)
            return self._actions(rest, query)
        if rest.startswith("/issues/"):
            return self._issues(method, rest, query, grant, body)
        if rest.startswith("/check-runs"):
            return self._check_runs(method, rest, query, grant, body)
        if (match := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "GET":
            return 200, self._pull_request_json(int(match[1])), {}
        raise _Answer(404, _NOT_FOUND)

    # --- actions ---

    def _actions(self, rest: str, query: Mapping[str, str]) -> tuple[int, object, dict[str, str]]:
        if match := re.fullmatch(r"/actions/workflows/([^/]+)/runs", rest):
            if match[1] not in self.state.workflows:
                raise _Answer(404, _NOT_FOUND)
            runs = [run for run in self.state.runs if _run_matches(run, match[1], query)]
            runs.sort(key=lambda run: (run.created_at, run.id), reverse=True)
            return self._list(rest, query, runs, "workflow_runs")
        if match := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest):
            if not any(run.id == int(match[1]) for run in self.state.runs):
                raise _Answer(404, _NOT_FOUND)
            name = query.get("name")
            artifacts = [
                artifact
                for artifact in self.state.artifacts
                if artifact.run_id == int(match[1]) and name in (None, artifact.name)
            ]
            artifacts.sort(key=lambda artifact: artifact.id, reverse=True)
            return self._list(rest, query, artifacts, "artifacts")
        if match := re.fullmatch(r"/actions/artifacts/(\d+)/zip", rest):
            artifact = self._artifact(int(match[1]))
            if artifact.expired:
                raise _Answer(410, "Artifact has expired")
            return 302, b"", {"Location": self._signed_url(artifact), "Content-Length": "0"}
        raise _Answer(404, _NOT_FOUND)

    def _artifact(self, artifact_id: int) -> Artifact:
        for artifact in self.state.artifacts:
            if artifact.id == artifact_id:
                return artifact
        raise _Answer(404, _NOT_FOUND)

    def _signed_url(self, artifact: Artifact) -> str:
        expires = str(int(time.time()) + 60)
        return (
            f"{self.url}/_blob/{artifact.id}.zip?se={expires}&sig={self._sign(artifact, expires)}"
        )

    def _sign(self, artifact: Artifact, expires: str) -> str:
        return hmac.new(
            self._secret, f"{artifact.id}:{expires}".encode(), hashlib.sha256
        ).hexdigest()

    def _blob(
        self, path: str, query: Mapping[str, str], headers: Mapping[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        """A pre-signed storage URL: the signature is the credential, nothing else may come."""
        xml = {"Content-Type": "application/xml"}
        if "authorization" in headers:
            return 400, _storage_error("InvalidAuthenticationInfo"), xml
        match = re.fullmatch(r"/_blob/(\d+)\.zip", path)
        with self._lock:
            artifact = next(
                (a for a in self.state.artifacts if match and a.id == int(match[1])), None
            )
        expires = query.get("se", "0")
        if artifact is None or not hmac.compare_digest(
            query.get("sig", ""), self._sign(artifact, expires)
        ):
            return 403, _storage_error("AuthenticationFailed"), xml
        if int(expires) < time.time():
            return 403, _storage_error("AuthenticationFailed"), xml
        return 200, artifact.content, {"Content-Type": "application/zip"}

    # --- issues ---

    def _issues(
        self, method: str, rest: str, query: Mapping[str, str], grant: Grant, body: bytes
    ) -> tuple[int, object, dict[str, str]]:
        if match := re.fullmatch(r"/issues/(\d+)/comments", rest):
            issue = int(match[1])
            if issue not in self.state.pull_requests:
                raise _Answer(404, _NOT_FOUND)
            if method == "GET":
                return self._list(rest, query, self.comments_on(issue), None)
            if method == "POST":
                self._check_write(grant)
                now = self._now()
                comment = Comment(next(self._ids), issue, _comment_body(body), grant.user, now, now)
                self.state.comments.append(comment)
                return 201, comment, {"Location": self._comment_url(comment)}
        elif match := re.fullmatch(r"/issues/comments/(\d+)", rest):
            comment = self._comment(int(match[1]))
            if method == "GET":
                return 200, comment, {}
            if method == "PATCH":
                self._check_write(grant)
                comment.body, comment.updated_at = _comment_body(body), self._now()
                return 200, comment, {}
            if method == "DELETE":
                self._check_write(grant)
                self.state.comments.remove(comment)
                return 204, None, {}
        raise _Answer(404, _NOT_FOUND)

    # --- check runs ---

    def _check_runs(
        self, method: str, rest: str, query: Mapping[str, str], grant: Grant, body: bytes
    ) -> tuple[int, object, dict[str, str]]:
        if rest == "/check-runs" and method == "POST":
            self._check_checks(grant)
            request = _json_object(body)
            for name in ("name", "head_sha"):
                if not isinstance(request.get(name), str) or not request[name]:
                    raise _Answer(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
            if not re.fullmatch(r"[0-9a-f]{40}", request["head_sha"]):
                raise _Answer(422, f"No commit found for SHA: {request['head_sha']}")
            status, conclusion = _status(request, "queued", None)
            run = CheckRun(
                next(self._ids),
                request["name"],
                request["head_sha"],
                status,
                conclusion,
                "",
                "",
                None,
                self._now(),
            )
            if "output" in request:
                _apply_output(run, request["output"], creating=True)
            self.state.check_runs.append(run)
            return 201, run, {}
        if match := re.fullmatch(r"/check-runs/(\d+)", rest):
            run = self._check_run(int(match[1]))
            if method == "GET":
                return 200, run, {}
            if method == "PATCH":
                self._check_checks(grant)
                request = _json_object(body)
                status, conclusion = _status(request, run.status, run.conclusion)
                if "output" in request:
                    _apply_output(run, request["output"], creating=False)
                run.status, run.conclusion = status, conclusion
                if isinstance(request.get("name"), str) and request["name"]:
                    run.name = request["name"]
                run.requests += 1
                return 200, run, {}
        if (match := re.fullmatch(r"/check-runs/(\d+)/annotations", rest)) and method == "GET":
            return self._list(rest, query, self._check_run(int(match[1])).annotations, None)
        raise _Answer(404, _NOT_FOUND)

    def _check_run(self, check_run_id: int) -> CheckRun:
        for run in self.state.check_runs:
            if run.id == check_run_id:
                return run
        raise _Answer(404, _NOT_FOUND)

    @staticmethod
    def _check_checks(grant: Grant) -> None:
        if not grant.checks:
            raise _Answer(403, NOT_ACCESSIBLE)

    # --- pull requests ---

    def _pull_request_json(self, number: int) -> dict[str, object]:
        head = self.state.pull_requests.get(number)
        if head is None:
            raise _Answer(404, _NOT_FOUND)
        return {
            "id": 9000 + number,
            "number": number,
            "state": "open",
            "html_url": f"https://github.com/{REPOSITORY}/pull/{number}",
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": FORK}},
            "base": {"ref": self.state.default_branch, "repo": {"full_name": REPOSITORY}},
        }

    def _comment(self, comment_id: int) -> Comment:
        for comment in self.state.comments:
            if comment.id == comment_id:
                return comment
        raise _Answer(404, _NOT_FOUND)

    @staticmethod
    def _check_write(grant: Grant) -> None:
        if not grant.write:
            raise _Answer(403, NOT_ACCESSIBLE)

    # --- answers ---

    def _list(
        self, rest: str, query: Mapping[str, str], items: Sequence[object], key: str | None
    ) -> tuple[int, object, dict[str, str]]:
        per_page = min(max(_number(query.get("per_page"), 30), 1), 100)
        page = max(_number(query.get("page"), 1), 1)
        last = max(math.ceil(len(items) / per_page), 1)
        shown = list(items[(page - 1) * per_page : page * per_page])
        links = []
        for relation, number in (
            ("prev", page - 1),
            ("next", page + 1),
            ("last", last),
            ("first", 1),
        ):
            if (relation in ("prev", "first") and page > 1) or (
                relation in ("next", "last") and page < last
            ):
                url = f"{self.url}/repositories/{REPOSITORY_ID}{rest}"
                links.append(f'<{url}?{urlencode({**query, "page": number})}>; rel="{relation}"')
        headers = {"Link": ", ".join(links)} if links else {}
        answer: object = shown if key is None else {"total_count": len(items), key: shown}
        return 200, answer, headers

    def _serialize(self, answer: object) -> object:
        if isinstance(answer, list):
            return [self._serialize(item) for item in answer]
        if isinstance(answer, dict):
            return {name: self._serialize(value) for name, value in answer.items()}
        if isinstance(answer, Run):
            return self._run_json(answer)
        if isinstance(answer, Artifact):
            return self._artifact_json(answer)
        if isinstance(answer, Comment):
            return self._comment_json(answer)
        if isinstance(answer, CheckRun):
            return self._check_run_json(answer)
        return answer

    def _repository(self) -> dict[str, object]:
        owner = REPOSITORY.split("/")[0]
        return {
            "id": REPOSITORY_ID,
            "node_id": "R_kgDOdemo",
            "name": REPOSITORY.split("/")[1],
            "full_name": REPOSITORY,
            "private": False,
            "owner": {"login": owner, "id": 1, "type": "Organization"},
            "html_url": f"https://github.com/{REPOSITORY}",
            "url": f"{self.url}/repos/{REPOSITORY}",
            "default_branch": self.state.default_branch,
        }

    def _run_json(self, run: Run) -> dict[str, object]:
        head = {"id": REPOSITORY_ID if run.head_repository == REPOSITORY else REPOSITORY_ID + 1}
        return {
            "id": run.id,
            "name": "Nightly",
            "node_id": f"WFR_{run.id}",
            "head_branch": run.head_branch,
            "head_sha": run.head_sha,
            "path": f".github/workflows/{run.workflow}",
            "run_number": run.id - 1000,
            "run_attempt": 1,
            "event": run.event,
            "status": run.status,
            "conclusion": run.conclusion,
            "workflow_id": 161335,
            "url": f"{self.url}/repos/{REPOSITORY}/actions/runs/{run.id}",
            "html_url": f"https://github.com/{REPOSITORY}/actions/runs/{run.id}",
            "created_at": run.created_at,
            "updated_at": run.created_at,
            "run_started_at": run.created_at,
            "repository": {"id": REPOSITORY_ID, "full_name": REPOSITORY},
            "head_repository": {**head, "full_name": run.head_repository},
            "pull_requests": self._run_pull_requests(run),
        }

    def _run_pull_requests(self, run: Run) -> list[dict[str, object]]:
        """The run's pull request, as GitHub lists it: never one from a fork."""
        if run.pull_request is None or run.head_repository != REPOSITORY:
            return []
        repo = {"id": REPOSITORY_ID, "url": f"{self.url}/repos/{REPOSITORY}", "name": "demo"}
        return [
            {
                "id": 9000 + run.pull_request,
                "number": run.pull_request,
                "url": f"{self.url}/repos/{REPOSITORY}/pulls/{run.pull_request}",
                "head": {"ref": run.head_branch, "sha": run.head_sha, "repo": repo},
                "base": {"ref": self.state.default_branch, "sha": "b" * 40, "repo": repo},
            }
        ]

    def _artifact_json(self, artifact: Artifact) -> dict[str, object]:
        run = next(run for run in self.state.runs if run.id == artifact.run_id)
        created = datetime.fromisoformat(artifact.created_at)
        url = f"{self.url}/repos/{REPOSITORY}/actions/artifacts/{artifact.id}"
        return {
            "id": artifact.id,
            "node_id": f"MDg6QXJ0aWZhY3Q{artifact.id}",
            "name": artifact.name,
            "size_in_bytes": len(artifact.content),
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": artifact.expired,
            "created_at": artifact.created_at,
            "expires_at": _timestamp(created + timedelta(days=90)),
            "updated_at": artifact.created_at,
            "digest": f"sha256:{hashlib.sha256(artifact.content).hexdigest()}",
            "workflow_run": {
                "id": run.id,
                "repository_id": REPOSITORY_ID,
                "head_repository_id": REPOSITORY_ID,
                "head_branch": run.head_branch,
                "head_sha": run.head_sha,
            },
        }

    def _comment_json(self, comment: Comment) -> dict[str, object]:
        return {
            "id": comment.id,
            "node_id": f"IC_kwDO{comment.id}",
            "url": f"{self.url}/repos/{REPOSITORY}/issues/comments/{comment.id}",
            "html_url": self._comment_url(comment),
            "issue_url": f"{self.url}/repos/{REPOSITORY}/issues/{comment.issue}",
            "body": comment.body,
            "user": {"login": comment.user.login, "id": comment.user.id, "type": comment.user.type},
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "author_association": "NONE" if comment.user.type == "Bot" else "MEMBER",
        }

    def _check_run_json(self, run: CheckRun) -> dict[str, object]:
        url = f"{self.url}/repos/{REPOSITORY}/check-runs/{run.id}"
        return {
            "id": run.id,
            "head_sha": run.head_sha,
            "node_id": f"CR_kwDO{run.id}",
            "external_id": "",
            "url": url,
            "html_url": f"https://github.com/{REPOSITORY}/runs/{run.id}",
            "details_url": f"https://github.com/{REPOSITORY}/runs/{run.id}",
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": run.created_at,
            "completed_at": run.created_at if run.status == "completed" else None,
            "output": {
                "title": run.title or None,
                "summary": run.summary or None,
                "text": run.text,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "name": run.name,
            "check_suite": {"id": 5000 + run.id},
            "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
            "pull_requests": [],
        }

    @staticmethod
    def _comment_url(comment: Comment) -> str:
        return f"https://github.com/{REPOSITORY}/pull/{comment.issue}#issuecomment-{comment.id}"

    def _now(self) -> str:
        return _timestamp(_EPOCH + timedelta(minutes=next(self._clock)))


def _canonical(path: str) -> str:
    """`/repositories/{id}/...`, as GitHub's Link headers write it: `/repos/{owner}/{repo}/...`."""
    prefix = f"/repositories/{REPOSITORY_ID}"
    if path == prefix or path.startswith(prefix + "/"):
        return f"/repos/{REPOSITORY}{path[len(prefix) :]}"
    return path


def _run_matches(run: Run, workflow: str, query: Mapping[str, str]) -> bool:
    status = query.get("status")
    if status is not None and status != (run.status if status in _RUN_STATUSES else run.conclusion):
        return False
    return (
        run.workflow == workflow
        and query.get("branch", run.head_branch) == run.head_branch
        and query.get("event", run.event) == run.event
    )


def _comment_body(raw: bytes) -> str:
    try:
        request = json.loads(raw)
    except ValueError:
        raise _Answer(400, "Problems parsing JSON") from None
    body = request.get("body") if isinstance(request, dict) else None
    if not isinstance(body, str):
        raise _Answer(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
    if len(body) > COMMENT_LIMIT:
        error = {
            "resource": "IssueComment",
            "code": "unprocessable",
            "field": "data",
            "message": f"Body is too long (maximum is {COMMENT_LIMIT} characters)",
        }
        raise _Answer(422, "Validation Failed", errors=[error])
    return body


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        request = json.loads(raw)
    except ValueError:
        raise _Answer(400, "Problems parsing JSON") from None
    if not isinstance(request, dict):
        raise _Answer(400, "Problems parsing JSON")
    return request


def _invalid(field: str, message: str) -> _Answer:
    error = {"resource": "CheckRun", "code": "invalid", "field": field, "message": message}
    return _Answer(422, "Validation Failed", errors=[error])


def _missing(name: str) -> _Answer:
    return _Answer(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')


def _status(
    request: Mapping[str, Any], status: str, conclusion: str | None
) -> tuple[str, str | None]:
    """The status and conclusion a request leaves a check run with: a conclusion completes
    it, and a completed one needs a conclusion."""
    status = request.get("status", status)
    conclusion = request.get("conclusion", conclusion)
    if status not in CHECK_STATUSES:
        raise _invalid("status", f"status is not included in the list: {status!r}")
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise _invalid("conclusion", f"conclusion is not included in the list: {conclusion!r}")
    if conclusion is not None:
        status = "completed"
    if status == "completed" and conclusion is None:
        raise _invalid("conclusion", "conclusion can't be blank when status is completed")
    return status, conclusion


def _apply_output(run: CheckRun, output: object, *, creating: bool) -> None:
    """Check the request's `output` whole, then take it; its annotations are appended."""
    if not isinstance(output, dict):
        raise _invalid("output", "output is not an object")
    title, summary, text = output.get("title"), output.get("summary"), output.get("text")
    if creating and not isinstance(title, str):
        raise _missing("title")
    if not isinstance(summary, str):
        raise _missing("summary")
    for name, value in (("summary", summary), ("text", text)):
        if isinstance(value, str) and len(value) > CHECK_OUTPUT_LIMIT:
            raise _invalid(
                name, f"output.{name} is too long (maximum is {CHECK_OUTPUT_LIMIT} characters)"
            )
    annotations = output.get("annotations", [])
    if not isinstance(annotations, list):
        raise _invalid("annotations", "annotations is not an array")
    if len(annotations) > ANNOTATIONS_PER_REQUEST:
        raise _invalid(
            "annotations",
            f"Only {ANNOTATIONS_PER_REQUEST} annotations are allowed per request, "
            f"{len(annotations)} were given",
        )
    for annotation in annotations:
        _check_annotation(annotation)
    if isinstance(title, str):
        run.title = title
    run.summary = summary
    if isinstance(text, str):
        run.text = text
    run.annotations.extend(annotations)


def _check_annotation(annotation: object) -> None:
    if not isinstance(annotation, dict):
        raise _invalid("annotations", "an annotation is not an object")
    for name in ("path", "message"):
        if not isinstance(annotation.get(name), str) or not annotation[name]:
            raise _missing(name)
    for name in ("start_line", "end_line"):
        if type(annotation.get(name)) is not int:
            raise _missing(name)
    level = annotation.get("annotation_level")
    if level not in ANNOTATION_LEVELS:
        raise _invalid("annotation_level", f"annotation_level is not in the list: {level!r}")
    title = annotation.get("title")
    if title is not None and (not isinstance(title, str) or len(title) > ANNOTATION_TITLE_LIMIT):
        raise _invalid("title", f"title is too long (maximum is {ANNOTATION_TITLE_LIMIT})")
    if annotation["end_line"] < annotation["start_line"]:
        raise _invalid("end_line", "end_line is before start_line")


def _number(value: str | None, default: int) -> int:
    return int(value) if value is not None and value.isdigit() else default


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _storage_error(code: str) -> bytes:
    return f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code></Error>'.encode()


def _json_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {"Content-Type": "application/json; charset=utf-8", **headers}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, double: RestDouble) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.double = double


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.server.double.handle(self)

    do_POST = do_PATCH = do_DELETE = do_PUT = do_GET

    def respond(self, status: int, content: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
        except ConnectionError:  # the client gave up waiting (a delayed answer)
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: pytest shows what the tests assert."""
