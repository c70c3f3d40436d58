"""`artifact:<name>` baselines against the REST double: which run, which artifact, safe extraction,
and a warning (never an exception) for everything that can go wrong."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from scbench_ci.action.artifact_download import (
    DEFAULT_LIMITS,
    ArtifactDownload,
    UnsafeZipError,
    ZipLimits,
    download_baseline,
    extract_results,
    workflow_file,
)
from scbench_ci.outputs.github.retry import RetryPolicy
from testing.ports import free_port
from testing.rest_double import (
    READ_TOKEN,
    REPOSITORY,
    WRITE_TOKEN,
    Grant,
    RestDouble,
    Run,
)

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=1.0, timeout_s=5.0)
NAME = "scbench-results"
CURRENT_RUN = 999999
RUNS_PATH = f"/repos/{REPOSITORY}/actions/workflows/nightly.yml/runs"
LOOKED_FOR = f"artifact {NAME} of workflow nightly.yml on main"


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        yield double


@pytest.fixture
def env(double: RestDouble, tmp_path: Path) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"repository": {"full_name": REPOSITORY, "default_branch": "main"}})
    )
    return double.environment(GITHUB_EVENT_PATH=str(event))


def make_zip(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def results(label: str) -> bytes:
    return json.dumps({"label": label}).encode()


def download(
    env: Mapping[str, str],
    target: Path,
    *,
    branch: str | None = None,
    token: str = WRITE_TOKEN,
) -> ArtifactDownload:
    return download_baseline(NAME, branch, env, token, target, retry=FAST)


def source_of(double: RestDouble, run: Run, artifact_id: int) -> str:
    [artifact] = [a for a in double.state.artifacts if a.id == artifact_id]
    return f"artifact {NAME} (id {artifact_id}) of run {run.id} on main, {artifact.created_at[:10]}"


def test_the_newest_successful_run_of_this_workflow_and_branch_is_picked(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    old = double.add_run()
    double.add_artifact(old, NAME, make_zip({"results.json": results("old")}))
    good = double.add_run()
    artifact = double.add_artifact(good, NAME, make_zip({"results.json": results("good")}))
    double.add_artifact(good, "other-artifact", make_zip({"results.json": results("other")}))
    failed = double.add_run(conclusion="failure")
    double.add_artifact(failed, NAME, make_zip({"results.json": results("failed")}))
    feature = double.add_run(head_branch="feature")
    double.add_artifact(feature, NAME, make_zip({"results.json": results("feature")}))
    other_workflow = double.add_run(workflow="ci.yml")
    double.add_artifact(other_workflow, NAME, make_zip({"results.json": results("ci")}))
    current = double.add_run(id=CURRENT_RUN)
    double.add_artifact(current, NAME, make_zip({"results.json": results("current")}))
    double.state.workflows.add("ci.yml")

    target = tmp_path / "baseline"
    found = download(env, target)

    assert found == ArtifactDownload(
        target / "results.json", None, source_of(double, good, artifact.id)
    )
    assert json.loads((target / "results.json").read_text()) == {"label": "good"}
    [runs] = double.requests_to(RUNS_PATH)
    assert dict(runs.query) == {"branch": "main", "status": "success", "per_page": "100"}
    assert [r.path for r in double.requests_to("/artifacts")] == [
        f"/repos/{REPOSITORY}/actions/runs/{good.id}/artifacts",
        f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip",
    ]


def test_the_newest_of_several_artifacts_of_that_name_in_a_run(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run()
    double.add_artifact(run, NAME, make_zip({"results.json": results("first")}))
    newest = double.add_artifact(run, NAME, make_zip({"results.json": results("second")}))
    found = download(env, tmp_path / "baseline")
    assert found.source == source_of(double, run, newest.id)
    assert found.results is not None
    assert json.loads(found.results.read_text()) == {"label": "second"}


def test_runs_are_read_over_pages_and_runs_from_forks_are_left_out(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    good = double.add_run()
    artifact = double.add_artifact(good, NAME, make_zip({"results.json": results("ours")}))
    for _ in range(120):  # pull request runs from a fork whose branch is also named main
        fork = double.add_run(head_repository="someone/demo", event="pull_request")
        double.add_artifact(fork, NAME, make_zip({"results.json": results("fork")}))

    found = download(env, tmp_path / "baseline")

    assert found.source == source_of(double, good, artifact.id)
    assert found.warning is None
    pages = double.requests_to(RUNS_PATH)
    assert [recorded.query.get("page") for recorded in pages] == [None, "2"]
    assert len(double.requests_to("/actions/runs/")) == 1


def test_artifacts_are_read_over_pages_and_expired_ones_skipped(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run()
    live = double.add_artifact(run, NAME, make_zip({"results.json": results("live")}))
    for _ in range(110):
        double.add_artifact(run, NAME, b"gone", expired=True)

    found = download(env, tmp_path / "baseline")

    assert found.source == source_of(double, run, live.id)
    listed = double.requests_to(f"/actions/runs/{run.id}/artifacts")
    assert [dict(recorded.query) for recorded in listed] == [
        {"name": NAME, "per_page": "100"},
        {"name": NAME, "per_page": "100", "page": "2"},
    ]


def test_an_expired_artifact_sends_the_search_to_an_older_run(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    older = double.add_run()
    artifact = double.add_artifact(older, NAME, make_zip({"results.json": results("older")}))
    newer = double.add_run()
    double.add_artifact(newer, NAME, make_zip({"results.json": results("newer")}), expired=True)
    found = download(env, tmp_path / "baseline")
    assert found.source == source_of(double, older, artifact.id)
    assert found.results is not None
    assert json.loads(found.results.read_text()) == {"label": "older"}


def test_only_expired_artifacts_is_a_warning_that_says_so(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    for _ in range(2):
        double.add_artifact(double.add_run(), NAME, b"gone", expired=True)
    double.add_run()  # a run without the artifact
    found = download(env, tmp_path / "baseline")
    assert found == ArtifactDownload(
        None,
        f"the artifacts named {NAME} of the last 3 successful runs of workflow "
        "nightly.yml on branch main have all expired (2 found); run the workflow on main again "
        "to make a new one",
        LOOKED_FOR,
    )
    assert double.requests_to("/zip") == []


def test_no_successful_earlier_run_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(id=CURRENT_RUN), NAME, make_zip({"results.json": b"{}"}))
    double.add_artifact(double.add_run(conclusion="failure"), NAME, make_zip({"results.json": b""}))
    found = download(env, tmp_path / "baseline")
    assert found == ArtifactDownload(
        None,
        "no successful earlier run of workflow nightly.yml on branch main",
        LOOKED_FOR,
    )


def test_runs_without_the_artifact_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(), "something-else", make_zip({"results.json": b"{}"}))
    found = download(env, tmp_path / "baseline")
    assert found == ArtifactDownload(
        None,
        "none of the last successful run of workflow nightly.yml on branch main "
        f"has an artifact named {NAME}",
        LOOKED_FOR,
    )


@pytest.mark.slow
def test_only_the_last_thirty_runs_are_looked_at(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    for _ in range(30):
        double.add_run()
    found = download(env, tmp_path / "baseline")
    assert found.results is None
    assert found.warning == (
        "none of the last 30 successful runs of workflow nightly.yml on branch main "
        f"has an artifact named {NAME}"
    )
    assert len(double.requests_to("/actions/runs/")) == 30


def test_a_token_without_actions_read_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.state.tokens["ghs_noactions"] = Grant(actions=False)
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    found = download(env, tmp_path / "baseline", token="ghs_noactions")
    assert found == ArtifactDownload(
        None,
        f"cannot read {LOOKED_FOR}: the token may not read workflow runs and "
        "artifacts (the job needs `permissions: actions: read`): "
        f"GET {RUNS_PATH} failed: Resource not accessible by integration (HTTP 403)",
        LOOKED_FOR,
    )


def test_a_read_only_token_is_enough(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    assert download(env, tmp_path / "baseline", token=READ_TOKEN).warning is None


def test_a_bad_token_is_a_warning(double: RestDouble, env: dict[str, str], tmp_path: Path) -> None:
    found = download(env, tmp_path / "baseline", token="ghs_revoked")
    assert found.results is None
    assert found.warning == (
        f"cannot read {LOOKED_FOR}: the token may not read workflow runs and "
        "artifacts (the job needs `permissions: actions: read`): "
        f"GET {RUNS_PATH} failed: Bad credentials (HTTP 401)"
    )


def test_no_token_is_a_warning_without_a_request(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    found = download(env, tmp_path / "baseline", token="")
    assert found == ArtifactDownload(
        None,
        f"there is no GitHub token to download artifact {NAME} with",
        f"artifact {NAME}",
    )
    assert double.requests == []


def test_an_unknown_workflow_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    env["GITHUB_WORKFLOW_REF"] = f"{REPOSITORY}/.github/workflows/gone.yml@refs/heads/main"
    found = download(env, tmp_path / "baseline")
    path = f"/repos/{REPOSITORY}/actions/workflows/gone.yml/runs"
    assert found.warning == (
        f"cannot read artifact {NAME} of workflow gone.yml on main: not found, "
        f"or hidden from the token: GET {path} failed: Not Found (HTTP 404)"
    )


def test_no_workflow_ref_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    del env["GITHUB_WORKFLOW_REF"]
    found = download(env, tmp_path / "baseline")
    assert found.warning == (
        "GITHUB_WORKFLOW_REF does not name a workflow file, so the runs that made "
        f"artifact {NAME} cannot be listed"
    )
    assert double.requests == []


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("octo/hello/.github/workflows/nightly.yml@refs/heads/main", "nightly.yml"),
        ("octo/hello/.github/workflows/ci.yaml@refs/pull/7/merge", "ci.yaml"),
        ("octo/hello/.github/workflows/ci.yml", "ci.yml"),
        ("octo/hello/dynamic/pages/pages-build-deployment@refs/heads/main", None),
        ("", None),
    ],
)
def test_workflow_file(ref: str, expected: str | None) -> None:
    assert workflow_file({"GITHUB_WORKFLOW_REF": ref}) == expected


def test_the_default_branch_is_asked_of_the_api_without_an_event(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    del env["GITHUB_EVENT_PATH"]
    double.state.default_branch = "trunk"
    run = double.add_run(head_branch="trunk")
    artifact = double.add_artifact(run, NAME, make_zip({"results.json": b"{}"}))
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    found = download(env, tmp_path / "baseline")
    assert found.source == (
        f"artifact {NAME} (id {artifact.id}) of run {run.id} on trunk, {artifact.created_at[:10]}"
    )
    assert [r.path for r in double.requests].count(f"/repos/{REPOSITORY}") == 1
    assert double.requests_to(RUNS_PATH)[0].query["branch"] == "trunk"


def test_a_branch_given_wins_over_the_default(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run(head_branch="release")
    double.add_artifact(run, NAME, make_zip({"results.json": b"{}"}))
    found = download(env, tmp_path / "baseline", branch="release")
    assert found.warning is None
    assert found.source.startswith(f"artifact {NAME} (id ") and " on release, " in found.source
    assert f"/repos/{REPOSITORY}" not in [r.path for r in double.requests]


def test_results_in_a_sub_folder_are_found(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    files = {".scbench/results.json": results("sub"), ".scbench/summary.md": b"# sub\n"}
    double.add_artifact(double.add_run(), NAME, make_zip(files))
    target = tmp_path / "baseline"
    found = download(env, target)
    assert found.results == target / ".scbench" / "results.json"
    assert (target / ".scbench" / "summary.md").read_bytes() == b"# sub\n"


def test_the_shallowest_results_wins(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    files = {"shard/results.json": results("deep"), "results.json": results("root")}
    double.add_artifact(double.add_run(), NAME, make_zip(files))
    target = tmp_path / "baseline"
    assert download(env, target).results == target / "results.json"


def test_several_results_at_one_depth_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    files = {"b/results.json": results("b"), "a/results.json": results("a")}
    artifact = double.add_artifact(double.add_run(), NAME, make_zip(files))
    found = download(env, tmp_path / "baseline")
    run = double.state.runs[0]
    source = source_of(double, run, artifact.id)
    assert found == ArtifactDownload(
        None,
        f"{source} cannot be used: it holds several results.json: a/results.json, b/results.json",
        source,
    )


def test_no_results_json_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run()
    artifact = double.add_artifact(run, NAME, make_zip({"summary.md": b"# hi\n"}))
    found = download(env, tmp_path / "baseline")
    source = source_of(double, run, artifact.id)
    assert found == ArtifactDownload(None, f"{source} has no results.json", source)


def test_a_path_that_leaves_the_folder_is_refused(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    files = {"results.json": results("fine"), "../escaped.txt": b"out"}
    run = double.add_run()
    artifact = double.add_artifact(run, NAME, make_zip(files))
    target = tmp_path / "deep" / "baseline"
    found = download(env, target)
    source = source_of(double, run, artifact.id)
    assert found == ArtifactDownload(
        None,
        f"{source} cannot be used: the member '../escaped.txt' leaves the folder",
        source,
    )
    assert not (tmp_path / "deep" / "escaped.txt").exists()
    assert not target.exists()


def test_an_authorization_header_never_reaches_the_blob(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    assert download(env, tmp_path / "baseline").warning is None
    [blob] = double.requests_to("/_blob/")
    assert blob.status == 200
    assert "authorization" not in blob.headers
    assert all(
        recorded.headers["authorization"] == f"Bearer {WRITE_TOKEN}"
        for recorded in double.requests
        if recorded is not blob
    )


def test_5xx_answers_are_tried_again(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    double.add_artifact(double.add_run(), NAME, make_zip({"results.json": b"{}"}))
    double.fail_next(1, 502, path_contains="/runs")
    double.fail_next(1, 500, path_contains="/_blob/")
    found = download(env, tmp_path / "baseline")
    assert found.warning is None
    assert [recorded.status for recorded in double.requests_to(RUNS_PATH)] == [502, 200]
    assert [recorded.status for recorded in double.requests_to("/_blob/")] == [500, 200]


def test_an_artifact_that_expires_before_its_download_is_a_warning(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run()
    artifact = double.add_artifact(run, NAME, make_zip({"results.json": b"{}"}))
    double.fail_next(1, 410, path_contains="/zip", message="Artifact has expired")
    found = download(env, tmp_path / "baseline")
    source = source_of(double, run, artifact.id)
    path = f"/repos/{REPOSITORY}/actions/artifacts/{artifact.id}/zip"
    assert found == ArtifactDownload(
        None,
        f"{source} expired before it could be downloaded: "
        f"GET {path} failed: Artifact has expired (HTTP 410)",
        source,
    )


def test_an_unreachable_api_is_a_warning(env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    env["GITHUB_API_URL"] = f"http://127.0.0.1:{port}"
    found = download(env, tmp_path / "baseline")
    assert found.results is None
    assert found.warning is not None
    assert found.warning.startswith(
        f"cannot download {LOOKED_FOR}: GET {RUNS_PATH} failed: cannot reach GitHub "
        "after 3 attempts: ConnectionError"
    )


def test_a_bad_zip_is_a_warning(double: RestDouble, env: dict[str, str], tmp_path: Path) -> None:
    run = double.add_run()
    artifact = double.add_artifact(run, NAME, b"this is not a zip")
    found = download(env, tmp_path / "baseline")
    source = source_of(double, run, artifact.id)
    assert found == ArtifactDownload(
        None,
        f"{source} cannot be used: it is not a readable zip: File is not a zip file",
        source,
    )


def test_an_artifact_over_the_size_limit_is_not_downloaded(
    double: RestDouble, env: dict[str, str], tmp_path: Path
) -> None:
    run = double.add_run()
    artifact = double.add_artifact(run, NAME, make_zip({"results.json": b"{}" * 100}))
    found = download_baseline(
        NAME, None, env, WRITE_TOKEN, tmp_path / "b", retry=FAST, limits=ZipLimits(max_bytes=50)
    )
    source = source_of(double, run, artifact.id)
    size = len(artifact.content)
    assert found == ArtifactDownload(
        None, f"{source} is {size} bytes, over the 50 bytes allowed", source
    )
    assert double.requests_to("/zip") == []


# --- extraction on its own ---


def extract(zip_bytes: bytes, target: Path, limits: ZipLimits = DEFAULT_LIMITS) -> Path | None:
    return extract_results(io.BytesIO(zip_bytes), target, limits)


def refusal(zip_bytes: bytes, target: Path, limits: ZipLimits = DEFAULT_LIMITS) -> str:
    with pytest.raises(UnsafeZipError) as caught:
        extract(zip_bytes, target, limits)
    return str(caught.value)


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ("/etc/passwd", "has an absolute or Windows path"),
        ("C:/Windows/evil", "has an absolute or Windows path"),
        ("..\\evil", "has an absolute or Windows path"),
        ("a/../../evil", "leaves the folder"),
    ],
)
def test_unsafe_paths_are_refused(tmp_path: Path, member: str, reason: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("results.json", b"{}")
        archive.writestr(zipfile.ZipInfo(member), b"evil")
    target = tmp_path / "out"
    assert refusal(buffer.getvalue(), target) == f"the member {member!r} {reason}"
    assert not target.exists()


def test_a_link_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("results.json")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    target = tmp_path / "out"
    assert refusal(buffer.getvalue(), target) == (
        "the member 'results.json' is a link or a special file"
    )
    assert not target.exists()


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    files = {f"f{n}.txt": b"x" for n in range(4)}
    assert refusal(make_zip(files), tmp_path / "out", ZipLimits(max_files=3)) == (
        "it holds 4 files, over 3"
    )


def test_too_many_bytes_are_refused(tmp_path: Path) -> None:
    files = {"results.json": b"0" * 60, "more.txt": b"0" * 60}
    assert refusal(make_zip(files), tmp_path / "out", ZipLimits(max_bytes=100)) == (
        "its files are over 100 bytes"
    )


def test_folders_and_files_are_extracted(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("logs/"), b"")
        archive.writestr("logs/pytest.log", b"collected 1 item\n")
        archive.writestr("results.json", b"{}")
    target = tmp_path / "out"
    assert extract(buffer.getvalue(), target) == target / "results.json"
    assert (target / "logs" / "pytest.log").read_bytes() == b"collected 1 item\n"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "logs",
        "logs/pytest.log",
        "results.json",
    ]


def test_a_member_whose_data_is_damaged_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("results.json", b'{"label": "intact"}')
    damaged = buffer.getvalue().replace(b"intact", b"broken")
    assert refusal(damaged, tmp_path / "out") == (
        "it is not a readable zip: Bad CRC-32 for file 'results.json'"
    )
