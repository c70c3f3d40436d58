"""`baseline: artifact:<name>`: the results.json of this workflow's last successful run on a branch.

The runs are those of the workflow file that is running now (GITHUB_WORKFLOW_REF), on the branch
asked for or the repository's default one, successful, newest first, this run left out, and made
from this repository (a fork's pull request run can carry a branch of the same name). The first
run with an artifact of exactly that name that has not expired gives it; its zip is extracted with
every member checked first. Whatever goes wrong is a warning: a comparison without a baseline is
still an evaluation.

`command: publish` takes its results the same way from the artifact of one run, the one that
triggered its `workflow_run` event (`download_run_artifact`).
"""

from __future__ import annotations

import stat
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO
from urllib.parse import quote

from scbench_ci.outputs.github.event import event_payload
from scbench_ci.outputs.github.rest import DEFAULT_RETRY, GitHubApiError, GitHubError, GitHubRest
from scbench_ci.outputs.github.retry import RetryPolicy

RESULTS_FILE = "results.json"
MAX_RUNS = 30
"""How many successful runs are looked at, newest first, for an artifact that has not expired."""


@dataclass(frozen=True)
class ZipLimits:
    max_bytes: int = 1024**3
    """Of the zip as downloaded, and of its files once extracted."""
    max_files: int = 10_000


DEFAULT_LIMITS = ZipLimits()
_UNREADABLE = (
    zipfile.BadZipFile,  # also a member whose CRC does not match
    zipfile.LargeZipFile,
    EOFError,
    zlib.error,  # a broken deflate stream
    NotImplementedError,  # a compression method zipfile lacks
    RuntimeError,  # an encrypted member
    ValueError,
)


class UnsafeZipError(Exception):
    """The zip cannot be used as a baseline."""


@dataclass(frozen=True)
class ArtifactDownload:
    results: Path | None
    """The extracted results.json, or None."""
    warning: str | None
    """Why there are no results (for a baseline, a warning, never a failure)."""
    source: str
    """What was looked for or found, e.g. "artifact scbench-results (id 42) of run 1234 on
    main, 2026-11-20"."""


@dataclass(frozen=True)
class _Found:
    artifact_id: int
    run_id: int
    size: int
    created_at: str


def download_baseline(
    name: str,
    branch: str | None,
    env: Mapping[str, str],
    token: str,
    target: Path,
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
    limits: ZipLimits = DEFAULT_LIMITS,
) -> ArtifactDownload:
    """Find the artifact `name` of the last successful run and extract it into `target`."""
    wanted = f"artifact {name}"
    workflow = workflow_file(env)
    if workflow is None:
        return ArtifactDownload(
            None,
            f"GITHUB_WORKFLOW_REF does not name a workflow file, so the runs that "
            f"made {wanted} cannot be listed",
            wanted,
        )
    if not token:
        return ArtifactDownload(None, f"there is no GitHub token to download {wanted} with", wanted)
    source = wanted
    try:
        with GitHubRest.from_env(env, token, retry=retry) as api:
            branch = branch or _default_branch(env, api)
            source = f"{wanted} of workflow {workflow} on {branch}"
            found, warning = _find(api, name, workflow, branch, env.get("GITHUB_RUN_ID", ""))
            if found is None:
                return ArtifactDownload(None, warning, source)
            source = (
                f"artifact {name} (id {found.artifact_id}) of run {found.run_id} on {branch}, "
                f"{found.created_at[:10]}"
            )
            return _fetched(api, found, source, target, limits)
    except GitHubApiError as error:
        return ArtifactDownload(None, _api_warning(source, error), source)
    except GitHubError as error:
        return ArtifactDownload(None, str(error), source)
    except (UnsafeZipError, OSError) as error:
        return ArtifactDownload(None, f"{source} cannot be used: {error}", source)


def _fetched(
    api: GitHubRest, found: _Found, source: str, target: Path, limits: ZipLimits
) -> ArtifactDownload:
    """The artifact `found` downloaded into `target`, unless it is over the size allowed."""
    if found.size > limits.max_bytes:
        return ArtifactDownload(
            None,
            f"{source} is {found.size} bytes, over the {limits.max_bytes} bytes allowed",
            source,
        )
    results = _download(api, found.artifact_id, target, limits)
    if results is None:
        return ArtifactDownload(None, f"{source} has no {RESULTS_FILE}", source)
    return ArtifactDownload(results, None, source)


def workflow_file(env: Mapping[str, str]) -> str | None:
    """`nightly.yml` of `owner/repo/.github/workflows/nightly.yml@refs/heads/main`."""
    path, _, _ = env.get("GITHUB_WORKFLOW_REF", "").partition("@")
    parts = PurePosixPath(path).parts
    if len(parts) != 5 or parts[2:4] != (".github", "workflows"):
        return None
    return parts[4]


def _default_branch(env: Mapping[str, str], api: GitHubRest) -> str:
    """From the event payload when it has the repository, else asked of the API."""
    repository = (event_payload(env) or {}).get("repository")
    branch = repository.get("default_branch") if isinstance(repository, dict) else None
    if isinstance(branch, str) and branch:
        return branch
    answer = api.get(api.repo_path())
    branch = answer.get("default_branch") if isinstance(answer, dict) else None
    if not isinstance(branch, str) or not branch:
        raise GitHubError(f"the repository {api.repository} has no default branch")
    return branch


def _find(
    api: GitHubRest, name: str, workflow: str, branch: str, current_run: str
) -> tuple[_Found | None, str]:
    """The newest artifact `name` that has not expired, of the newest run that has one; or
    None and why."""
    runs = api.paginate(
        api.repo_path(f"/actions/workflows/{quote(workflow, safe='')}/runs"),
        {"branch": branch, "status": "success"},
        items="workflow_runs",
    )
    looked_at, expired = 0, 0
    for run in runs:
        run_id = run.get("id")
        if not isinstance(run_id, int) or str(run_id) == current_run:
            continue
        if not _from_repository(run, api.repository):
            continue
        if looked_at == MAX_RUNS:
            break
        looked_at += 1
        artifacts = _artifacts(api, run_id, name)
        live = [
            _found(artifact, run_id)
            for artifact in artifacts
            if artifact.get("expired") is not True
        ]
        expired += len(artifacts) - len(live)
        if live:
            return max(live, key=lambda found: (found.created_at, found.artifact_id)), ""
    runs_text = f"workflow {workflow} on branch {branch}"
    if not looked_at:
        return None, f"no successful earlier run of {runs_text}"
    last = "the last successful run" if looked_at == 1 else f"the last {looked_at} successful runs"
    if expired:
        return None, (
            f"the artifacts named {name} of {last} of {runs_text} have all expired "
            f"({expired} found); run the workflow on {branch} again to make a new one"
        )
    return None, f"none of {last} of {runs_text} has an artifact named {name}"


def download_run_artifact(
    name: str,
    run_id: int,
    env: Mapping[str, str],
    token: str,
    target: Path,
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
    limits: ZipLimits = DEFAULT_LIMITS,
) -> ArtifactDownload:
    """The newest artifact `name` of run `run_id` that has not expired, extracted into `target`
    with the same checks as a baseline's."""
    source = f"artifact {name} of run {run_id}"
    if not token:
        return ArtifactDownload(None, f"there is no GitHub token to download {source} with", source)
    try:
        with GitHubRest.from_env(env, token, retry=retry) as api:
            artifacts = _artifacts(api, run_id, name)
            live = [
                _found(artifact, run_id)
                for artifact in artifacts
                if artifact.get("expired") is not True
            ]
            if not live:
                why = "has expired" if artifacts else "does not exist"
                return ArtifactDownload(None, f"{source} {why}", source)
            found = max(live, key=lambda found: (found.created_at, found.artifact_id))
            source = f"artifact {name} (id {found.artifact_id}) of run {run_id}"
            return _fetched(api, found, source, target, limits)
    except GitHubApiError as error:
        return ArtifactDownload(None, _api_warning(source, error), source)
    except GitHubError as error:
        return ArtifactDownload(None, str(error), source)
    except (UnsafeZipError, OSError) as error:
        return ArtifactDownload(None, f"{source} cannot be used: {error}", source)


def _artifacts(api: GitHubRest, run_id: int, name: str) -> list[dict[str, object]]:
    """The run's artifacts named exactly `name`."""
    path = api.repo_path(f"/actions/runs/{run_id}/artifacts")
    return [
        artifact
        for artifact in api.paginate(path, {"name": name}, items="artifacts")
        if artifact.get("name") == name and isinstance(artifact.get("id"), int)
    ]


def _found(artifact: Mapping[str, object], run_id: int) -> _Found:
    artifact_id, size = artifact.get("id"), artifact.get("size_in_bytes")
    return _Found(
        artifact_id=artifact_id if isinstance(artifact_id, int) else 0,
        run_id=run_id,
        size=size if isinstance(size, int) else 0,
        created_at=str(artifact.get("created_at") or ""),
    )


def _from_repository(run: Mapping[str, object], repository: str) -> bool:
    head = run.get("head_repository")
    if not isinstance(head, dict):
        return True
    full_name = head.get("full_name")
    return not isinstance(full_name, str) or full_name.lower() == repository.lower()


def _download(api: GitHubRest, artifact_id: int, target: Path, limits: ZipLimits) -> Path | None:
    with tempfile.TemporaryFile() as archive:
        api.download(
            api.repo_path(f"/actions/artifacts/{artifact_id}/zip"), archive, limits.max_bytes
        )
        archive.seek(0)
        return extract_results(archive, target, limits)


def extract_results(
    archive: IO[bytes], target: Path, limits: ZipLimits = DEFAULT_LIMITS
) -> Path | None:
    """Extract the zip into `target` and answer its shallowest results.json (None: there is none).

    Every member is checked before any is written: no absolute path, drive or backslash, no `..`,
    no link or other special file, at most `limits.max_files` files and `limits.max_bytes` bytes
    (counted as they are written too: a zip's sizes are its own claim). Several results.json at
    the shallowest depth are ambiguous, and refused.
    """
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            paths = [_checked_path(member) for member in members]
            files = [member for member in members if not member.is_dir()]
            if len(files) > limits.max_files:
                raise UnsafeZipError(f"it holds {len(files)} files, over {limits.max_files}")
            if sum(member.file_size for member in files) > limits.max_bytes:
                raise UnsafeZipError(f"its files are over {limits.max_bytes} bytes")
            target.mkdir(parents=True, exist_ok=True)
            written = 0
            for member, path in zip(members, paths, strict=True):
                destination = target.joinpath(*path.parts)
                if member.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(member) as source, destination.open("xb") as sink:
                    while chunk := source.read(1024 * 1024):
                        written += len(chunk)
                        if written > limits.max_bytes:
                            raise UnsafeZipError(f"its files are over {limits.max_bytes} bytes")
                        sink.write(chunk)
    except _UNREADABLE as error:
        raise UnsafeZipError(f"it is not a readable zip: {error}") from None
    file_paths = [path for member, path in zip(members, paths, strict=True) if not member.is_dir()]
    return _shallowest_results(target, file_paths)


def _checked_path(member: zipfile.ZipInfo) -> PurePosixPath:
    name = member.filename
    mode = member.external_attr >> 16
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafeZipError(f"the member {name!r} has an absolute or Windows path")
    path = PurePosixPath(name)
    if ".." in path.parts or not path.parts:
        raise UnsafeZipError(f"the member {name!r} leaves the folder")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UnsafeZipError(f"the member {name!r} is a link or a special file")
    return path


def _shallowest_results(target: Path, files: list[PurePosixPath]) -> Path | None:
    candidates = [path for path in files if path.name == RESULTS_FILE]
    if not candidates:
        return None
    depth = min(len(path.parts) for path in candidates)
    shallowest = sorted(path.as_posix() for path in candidates if len(path.parts) == depth)
    if len(shallowest) > 1:
        raise UnsafeZipError(f"it holds several {RESULTS_FILE}: {', '.join(shallowest)}")
    return target / shallowest[0]


def _api_warning(wanted: str, error: GitHubApiError) -> str:
    if error.status in (401, 403):
        why = (
            "the token may not read workflow runs and artifacts (the job needs "
            "`permissions: actions: read`)"
        )
        return f"cannot read {wanted}: {why}: {error}"
    if error.status == 404:
        return f"cannot read {wanted}: not found, or hidden from the token: {error}"
    if error.status == 410:
        return f"{wanted} expired before it could be downloaded: {error}"
    return f"cannot download {wanted}: {error}"
