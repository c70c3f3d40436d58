"""The action's baseline, sticky comment, plan and merge end to end: its image run as GitHub's
runner runs it (testing/runner.py), against the REST double (testing/rest_double.py) and
the artifact service double. Both listen on loopback, which the action's container reaches on the
host's network, as runner.py runs it.

A nightly job on main evaluates wordstat's checkpoint_2 and uploads its artifact; the REST double
then holds that run, a later run on main whose results.json differs in two tests (one that fails
now passed, one that passes now failed) and a run on `release` with the nightly's own artifact. A
pull request's job compared with main's newest artifact has exactly one regression and one fix.
Each job runs on a runner of its own, as on GitHub; the runs are made once per module and their
findings asserted by several tests.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from scbench_ci.job.reports import FAILING, Status
from scbench_ci.problem.model import Group
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.schema import SCHEMA_VERSION
from scbench_ci.results.verdict import count_groups
from scbench_ci.trust.markdown import html_text
from scbench_ci.trust.markdown import text as markdown_text
from testing.action_run import MANIFEST
from testing.paths import EXAMPLES, REPO_ROOT
from testing.rest_double import (
    REPOSITORY,
    WORKFLOW,
    WRITE_TOKEN,
    Grant,
    Recorded,
    RestDouble,
)
from testing.runner import (
    JOB_TOKEN,
    ActionManifest,
    RunnerHost,
    RunnerResult,
    Step,
    run_step,
)
from testing.twirp_server import ArtifactService, BlobAccount

PR = 7
CHECK_PROBLEMS = REPO_ROOT / "tests/data/check_repo/problems"
NAME = "scbench-wordstat-checkpoint_2-submission"
"""The nightly's artifact: the default name of a step evaluating `submission`."""
STALE_NAME = "scbench-nightly-old"
"""An artifact whose every copy has expired."""
FOREIGN_NAME = "scbench-from-the-future"
"""An artifact whose results.json this scbench-ci cannot read."""
RESTRICTED_TOKEN = "ghs_restricted000000000000000000000000000"
"""A token without `actions: read` or `pull-requests: write`, as a fork's pull request gets."""
NIGHTLY_RUN_ID = "4242"
"""The artifact service double's run: the nightly's upload lands there."""
PR_RUN_ID = "5150"
REPOSITORY_EVENT = {"full_name": REPOSITORY, "default_branch": "main"}
PUSH = {"ref": "refs/heads/main", "repository": REPOSITORY_EVENT}
PULL_REQUEST = {
    "action": "synchronize",
    "number": PR,
    "pull_request": {
        "number": PR,
        "head": {"ref": "feature", "repo": {"full_name": REPOSITORY}},
        "base": {"ref": "main", "repo": {"full_name": REPOSITORY}},
    },
    "repository": REPOSITORY_EVENT,
}
WARNING = re.compile(r"^::warning title=scbench-ci::(.*)$", re.MULTILINE)
TAG = re.compile(r"\n\n(<!-- scbench-ci:[0-9a-f]{16} -->)$")
COMMENTS = f"/repos/{REPOSITORY}/issues/{PR}/comments"
MATRIX_JOBS = [
    ("kvserver", "checkpoint_1"),
    ("kvserver", "checkpoint_2"),
    ("wordstat", "checkpoint_1"),
    ("wordstat", "checkpoint_2"),
    ("wordstat", "checkpoint_3"),
]


@dataclasses.dataclass(frozen=True)
class StepRun:
    result: RunnerResult
    requests: list[Recorded]
    """What the step asked of the REST double."""
    workspace: Path


@dataclasses.dataclass
class Job:
    """One job of a workflow run on a runner of its own: its steps `uses:` the action in one
    workspace, with `problems` (examples) in `problems/` and wordstat's checkpoint_2 solution in
    `submission/`."""

    docker_client: docker.DockerClient
    image: str
    root: Path
    double: RestDouble
    name: str = "evaluate"
    event: dict[str, Any] = dataclasses.field(default_factory=lambda: PULL_REQUEST)
    run_id: str = PR_RUN_ID
    attempt: int = 1
    problems: tuple[str, ...] = ("wordstat",)
    service: ArtifactService | None = None
    manifest: ActionManifest = MANIFEST

    def __post_init__(self) -> None:
        self.host = RunnerHost(self.root, repository=REPOSITORY)
        self.host.create()
        for problem in self.problems:
            shutil.copytree(EXAMPLES / problem, self.workspace / "problems" / problem)
        shutil.copytree(EXAMPLES / "wordstat/solutions/checkpoint_2", self.workspace / "submission")

    @property
    def workspace(self) -> Path:
        return self.host.workspace

    def step(self, with_: dict[str, str]) -> StepRun:
        pull_request = "pull_request" in self.event
        ref = f"refs/pull/{PR}/merge" if pull_request else "refs/heads/main"
        service = self.service.environment(GITHUB_RUN_ID=self.run_id) if self.service else {}
        step = Step(
            with_=with_,
            # A token in the job's env that the action must not use in place of its input.
            env={"GITHUB_TOKEN": WRITE_TOKEN},
            github={
                "action": "__scbench_evaluate",
                "action_repository": "scbench/evaluate",
                "action_ref": "v1",
                "actor": "octocat",
                "api_url": self.double.url,
                "event_name": "pull_request" if pull_request else "push",
                "job": self.name,
                "ref": ref,
                "repository": REPOSITORY,
                "repository_owner": REPOSITORY.split("/")[0],
                "retention_days": "30",
                "run_attempt": str(self.attempt),
                "run_id": self.run_id,
                "run_number": "7",
                "server_url": "https://github.com",
                "sha": "0" * 40,
                "workflow": "Nightly",
                "workflow_ref": f"{REPOSITORY}/.github/workflows/{WORKFLOW}@{ref}",
            },
            runtime_token=service.get("ACTIONS_RUNTIME_TOKEN", "unused-runtime-token"),
            results_url=service.get("ACTIONS_RESULTS_URL"),
            event=self.event,
        )
        before = len(self.double.requests)
        result = run_step(self.docker_client, self.image, self.manifest, self.host, step)
        return StepRun(result, self.double.requests[before:], self.workspace)


@dataclasses.dataclass(frozen=True)
class Nightly:
    run: StepRun
    edited: Path
    """The later nightly's results.json."""
    regressed: str
    """The test that fails now and passed in the later nightly."""
    fixed: str
    """The Core test that passes now and failed in the later nightly."""
    artifact_id: int
    """The later nightly's artifact."""
    run_id: int


MakeJob = Callable[..., Job]


@pytest.fixture(scope="module")
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        double.state.tokens[JOB_TOKEN] = Grant()
        double.state.tokens[RESTRICTED_TOKEN] = Grant(actions=False, write=False)
        yield double


@pytest.fixture(scope="module")
def job(
    docker_client: docker.DockerClient,
    action_image: str,
    tmp_path_factory: pytest.TempPathFactory,
    double: RestDouble,
) -> MakeJob:
    """Makes a Job on a fresh runner."""

    def make(**fields: Any) -> Job:
        root = tmp_path_factory.mktemp("runner")
        return Job(docker_client, action_image, root, double, **fields)

    return make


@pytest.fixture(scope="module")
def nightly(
    job: MakeJob,
    test_image: str,
    azurite: BlobAccount,
    double: RestDouble,
    tmp_path_factory: pytest.TempPathFactory,
) -> Nightly:
    with ArtifactService(azurite) as service:
        nightly_job = job(event=PUSH, run_id=NIGHTLY_RUN_ID, service=service, name="nightly")
        run = nightly_job.step(
            {
                "problem": "problems/wordstat",
                "checkpoint": "checkpoint_2",
                "submission": "submission",
                "image": test_image,
                # As docs/workflows.md has it: one step for pushes and pull requests.
                "comment": "true",
            }
        )
        assert run.result.exit_code == 0, run.result.log
        (artifact,) = service.artifacts.values()
        assert artifact.name == NAME
        uploaded = service.container.get_blob_client(artifact.blob_name).download_blob().readall()
    edited, regressed, fixed = _later_nightly(
        run.workspace / ".scbench/results.json", tmp_path_factory.mktemp("later")
    )
    first = double.add_run(id=int(NIGHTLY_RUN_ID))
    double.add_artifact(first, NAME, uploaded)
    double.add_artifact(first, STALE_NAME, b"gone", expired=True)
    future = _replaced(uploaded, json.dumps({"schema_version": 99}).encode())
    double.add_artifact(first, FOREIGN_NAME, future)
    later = double.add_run()
    later_artifact = double.add_artifact(later, NAME, _replaced(uploaded, edited.read_bytes()))
    double.add_artifact(double.add_run(head_branch="release"), NAME, uploaded)
    return Nightly(run, edited, regressed, fixed, later_artifact.id, later.id)


def _later_nightly(results: Path, folder: Path) -> tuple[Path, str, str]:
    """The nightly's results with its one failing test passed and a passing Core test failed;
    and those two tests."""
    run = load_results(results)
    (problem,) = run.problems
    (checkpoint,) = problem.checkpoints
    tests = list(checkpoint.tests)
    (failing,) = [i for i, test in enumerate(tests) if test.status in FAILING]
    core = next(
        i
        for i, test in enumerate(tests)
        if test.group is Group.CORE and test.status is Status.PASSED
    )
    regressed, fixed = tests[failing].id, tests[core].id
    tests[failing] = dataclasses.replace(
        tests[failing], status=Status.PASSED, message=None, traceback=None
    )
    tests[core] = dataclasses.replace(
        tests[core], status=Status.FAILED, message="AssertionError: no output", traceback=None
    )
    later = dataclasses.replace(
        checkpoint,
        passed=False,
        tests=tuple(tests),
        groups=count_groups(tests, run.flaky_passes),
    )
    edited = dataclasses.replace(
        run, problems=(dataclasses.replace(problem, checkpoints=(later,)),)
    )
    return write_results(edited, folder), regressed, fixed


def _replaced(archive: bytes, results: bytes) -> bytes:
    """The artifact's zip with another results.json."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(buffer, "w") as target:
        for member in source.infolist():
            content = results if member.filename == "results.json" else source.read(member)
            target.writestr(member, content)
    return buffer.getvalue()


def _warnings(run: StepRun) -> list[str]:
    return WARNING.findall(run.result.log)


def _requests(run: StepRun) -> list[tuple[str, str, int]]:
    return [(r.method, r.path, r.status) for r in run.requests]


def _comments(double: RestDouble) -> list[tuple[int, str]]:
    return [(comment.id, comment.body) for comment in double.comments_on(PR)]


def _not_uploaded(outputs: dict[str, str]) -> dict[str, str]:
    """A step's outputs had it uploaded no artifact."""
    return {name: "" if name.startswith("artifact_") else value for name, value in outputs.items()}


# --- a pull request against main's newest nightly, with a sticky comment ---


@dataclasses.dataclass(frozen=True)
class PullRequestRuns:
    first: StepRun
    after_first: list[tuple[int, str]]
    rerun: StepRun
    after_rerun: list[tuple[int, str]]
    other_job: StepRun
    after_other_job: list[tuple[int, str]]


def pr_inputs(test_image: str, **more: str) -> dict[str, str]:
    return {
        "problem": "problems/wordstat",
        "checkpoint": "checkpoint_2",
        "submission": "submission",
        "image": test_image,
        "upload_artifact": "false",
        "baseline": f"artifact:{NAME}",
        **more,
    }


@pytest.fixture(scope="module")
def pull_request(
    job: MakeJob, test_image: str, double: RestDouble, nightly: Nightly
) -> PullRequestRuns:
    """The step runs, is run again (the job's second attempt), then runs in another job."""
    inputs = pr_inputs(test_image, fail_on="regressions", comment="true")
    first = job().step(inputs)
    after_first = _comments(double)
    rerun = job(attempt=2).step(inputs)
    after_rerun = _comments(double)
    other_job = job(name="evaluate-again").step(inputs)
    return PullRequestRuns(first, after_first, rerun, after_rerun, other_job, _comments(double))


def test_an_artifact_baseline_finds_the_regression_and_the_fix(
    pull_request: PullRequestRuns, nightly: Nightly
) -> None:
    run = pull_request.first
    outputs = run.result.outputs
    assert (outputs["passed"], outputs["regressions"], outputs["fixed"]) == ("true", "1", "1")
    assert outputs["flaky"] == "0"
    # fail_on: regressions fails a step whose verdict passed.
    assert run.result.exit_code == 1, run.result.log
    assert _warnings(run) == []
    source = f"artifact {NAME} (id {nightly.artifact_id}) of run {nightly.run_id} on main"
    assert re.search(f"^Baseline: {re.escape(source)}, 2026-11-01$", run.result.log, re.M)
    comparison = json.loads((run.workspace / ".scbench/results.json").read_text())["comparison"]
    assert [change["test"] for change in comparison["regressions"]] == [nightly.regressed]
    assert [change["test"] for change in comparison["fixed"]] == [nightly.fixed]


def test_the_summary_shows_each_change_once(
    pull_request: PullRequestRuns, nightly: Nightly
) -> None:
    summary = pull_request.first.result.summary
    changes = summary.index("### Changes since the baseline")
    assert summary.index("| Group |") < changes  # what failed first, then what changed
    lines = summary[changes:].splitlines()
    assert "| checkpoint\\_2 | ❌ → ✅ | 1 | 1 | 0 | 0 |" in lines
    assert "<details><summary><strong>Fixed</strong>: 1 test in checkpoint_2</summary>" in lines
    assert f"- <code>{markdown_text(nightly.fixed)}</code>" in lines
    # The regression is listed once: in its checkpoint's section, marked.
    assert summary.count(html_text(nightly.regressed)) == 1
    assert re.search(
        rf"<code>{re.escape(html_text(nightly.regressed))}</code> \w+, error \(newly failing\): "
        "FileNotFoundError: ",
        summary,
    )
    assert "| Core | 8 (+1) | 0 | 0 | 8 | 100.0% |" in summary.splitlines()
    assert "| Functionality | 1 (-1) | 1 | 0 | 2 | 50.0% |" in summary.splitlines()


def test_the_github_token_input_is_the_token_used(
    pull_request: PullRequestRuns, nightly: Nightly
) -> None:
    """The input's default, `${{ github.token }}`, not GITHUB_TOKEN of the job's env; and the
    token never goes to the artifact's storage."""
    run = pull_request.first
    environment = run.result.environment
    assert environment["INPUT_GITHUB_TOKEN"] == JOB_TOKEN  # action.yml's default, evaluated
    assert environment["GITHUB_EVENT_PATH"] == "/github/workflow/event.json"
    assert _requests(run) == [
        ("GET", f"/repos/{REPOSITORY}/actions/workflows/{WORKFLOW}/runs", 200),
        ("GET", f"/repos/{REPOSITORY}/actions/runs/{nightly.run_id}/artifacts", 200),
        ("GET", f"/repos/{REPOSITORY}/actions/artifacts/{nightly.artifact_id}/zip", 302),
        ("GET", f"/_blob/{nightly.artifact_id}.zip", 200),
        ("GET", COMMENTS, 200),
        ("POST", COMMENTS, 201),
        ("GET", COMMENTS, 200),
    ]
    assert run.requests[0].query == {"branch": "main", "status": "success", "per_page": "100"}
    authorizations = [r.headers.get("authorization") for r in run.requests]
    assert authorizations == [f"Bearer {JOB_TOKEN}"] * 3 + [None] + [f"Bearer {JOB_TOKEN}"] * 3


def test_one_comment_with_the_summary_and_a_hidden_tag(pull_request: PullRequestRuns) -> None:
    run = pull_request.first
    ((comment_id, body),) = pull_request.after_first
    tag = TAG.search(body)
    assert tag is not None
    assert body == f"{run.result.summary.rstrip()}\n\n{tag[1]}"
    url = f"https://github.com/{REPOSITORY}/pull/{PR}#issuecomment-{comment_id}"
    assert f"Pull request comment created: {url}" in run.result.log


def test_a_second_run_of_the_step_updates_the_comment_in_place(
    pull_request: PullRequestRuns,
) -> None:
    run = pull_request.rerun
    assert run.result.exit_code == 1, run.result.log
    ((first_id, first_body),) = pull_request.after_first
    ((comment_id, body),) = pull_request.after_rerun
    assert comment_id == first_id
    tag = TAG.search(first_body)
    assert tag is not None
    assert body == f"{run.result.summary.rstrip()}\n\n{tag[1]}"
    assert ("POST", COMMENTS, 201) not in _requests(run)
    assert f"Pull request comment updated: https://github.com/{REPOSITORY}/pull/{PR}" in (
        run.result.log
    )


def test_another_job_makes_its_own_comment(pull_request: PullRequestRuns) -> None:
    run = pull_request.other_job
    assert run.result.exit_code == 1, run.result.log
    first, second = pull_request.after_other_job
    assert first == pull_request.after_rerun[0]
    assert second[0] > first[0]
    assert second[1].startswith(run.result.summary.rstrip())
    tags = [TAG.search(body) for _, body in (first, second)]
    assert all(tags)
    assert len({tag[1] for tag in tags if tag}) == 2


def test_fail_on_regressions_passes_a_failing_verdict_without_regressions(
    job: MakeJob, test_image: str, nightly: Nightly
) -> None:
    """Compared with the release branch's nightly (the same results), under a policy the
    submission fails: the verdict fails, nothing regressed, the step passes."""
    run = job(name="regressions-only").step(
        pr_inputs(
            test_image, fail_on="regressions", pass_policy="all-cases", baseline_branch="release"
        )
    )
    outputs = run.result.outputs
    assert (outputs["passed"], outputs["regressions"], outputs["fixed"]) == ("false", "0", "0")
    assert run.result.exit_code == 0, run.result.log
    release = rf"^Baseline: artifact {NAME} \(id \d+\) of run \d+ on release, "
    assert re.search(release, run.result.log, re.M)
    assert "## ✅ no regressions (0 of 1 checkpoint passes the policy)" in run.result.summary
    assert "| checkpoint\\_2 | ✅ → ❌ | 0 | 0 | 0 | 0 |" in run.result.summary
    assert "\nVerdict: no regressions (0 of 1 checkpoint passes the policy)\n" in run.result.log


# --- warnings: no baseline to be had, no comment to be written ---


def test_comment_on_a_push_is_a_line_of_the_log(nightly: Nightly) -> None:
    """Nothing to warn of: the workflow runs on pushes to main and on pull requests."""
    run = nightly.run
    assert "\nNo pull request comment: this run (event push) is not for a pull request\n" in (
        run.result.log
    )
    assert _warnings(run) == []
    assert run.requests == []


def test_no_permission_is_a_warning_and_a_run_without_comparison(
    job: MakeJob, test_image: str, double: RestDouble, nightly: Nightly
) -> None:
    """A token that may neither read artifacts nor write comments: two warnings, and the same
    step result as the nightly's, which had no baseline."""
    comments = _comments(double)
    run = job(name="fork").step(
        pr_inputs(test_image, comment="true", github_token=RESTRICTED_TOKEN)
    )
    assert run.result.exit_code == nightly.run.result.exit_code == 0, run.result.log
    assert run.result.outputs == _not_uploaded(nightly.run.result.outputs)
    runs = f"/repos/{REPOSITORY}/actions/workflows/{WORKFLOW}/runs"
    assert _warnings(run) == [
        f"no baseline to compare with: cannot read artifact {NAME} of workflow {WORKFLOW} on "
        "main: the token may not read workflow runs and artifacts (the job needs `permissions: "
        f"actions: read`): GET {runs} failed: Resource not accessible by integration (HTTP 403)",
        f"no pull request comment: pull request #{PR}: the token may not write comments (the "
        "job needs `permissions: pull-requests: write`; a pull request from a fork gets a "
        f"read-only token): POST {COMMENTS} failed: Resource not accessible by integration "
        "(HTTP 403)",
    ]
    assert _requests(run) == [("GET", runs, 403), ("GET", COMMENTS, 200), ("POST", COMMENTS, 403)]
    assert {r.headers["authorization"] for r in run.requests} == {f"Bearer {RESTRICTED_TOKEN}"}
    assert "Changes since the baseline" not in run.result.summary
    assert _comments(double) == comments


def test_an_expired_artifact_is_a_warning(job: MakeJob, test_image: str, nightly: Nightly) -> None:
    run = job(name="stale").step(pr_inputs(test_image, baseline=f"artifact:{STALE_NAME}"))
    assert run.result.exit_code == 0, run.result.log
    assert run.result.outputs == _not_uploaded(nightly.run.result.outputs)
    assert _warnings(run) == [
        f"no baseline to compare with: the artifacts named {STALE_NAME} of the last 2 "
        f"successful runs of workflow {WORKFLOW} on branch main have all expired (1 found); run "
        "the workflow on main again to make a new one"
    ]
    assert not [r for r in run.requests if r.path.endswith("/zip")]


def test_an_artifact_that_cannot_be_read_is_a_warning(
    job: MakeJob, test_image: str, nightly: Nightly
) -> None:
    """A results.json of a later scbench-ci, say: the evaluation goes on without comparison."""
    run = job(name="foreign").step(pr_inputs(test_image, baseline=f"artifact:{FOREIGN_NAME}"))
    assert run.result.exit_code == 0, run.result.log
    assert run.result.outputs == _not_uploaded(nightly.run.result.outputs)
    (warning,) = _warnings(run)
    assert re.fullmatch(
        rf"no baseline to compare with: artifact {FOREIGN_NAME} \(id \d+\) of run "
        rf"{NIGHTLY_RUN_ID} on main, 2026-11-01 cannot be used: \S+/results\.json: "
        r"schema_version 99 is not supported "
        rf"\(this scbench-ci reads versions 1 to {SCHEMA_VERSION}\)",
        warning,
    )


# --- plan, the matrix's jobs, merge ---


@dataclasses.dataclass(frozen=True)
class FanOut:
    plan: StepRun
    sharded_plan: StepRun
    shards: list[StepRun]
    merge: StepRun
    merge_with_baseline: StepRun


@pytest.fixture(scope="module")
def fan_out(job: MakeJob, test_image: str, nightly: Nightly) -> FanOut:
    """A plan job, a matrix job per shard of its plan, and a merge job that gets the shards'
    artifacts as actions/download-artifact leaves them: a folder each under `shards/`."""
    problems = ("kvserver", "wordstat")
    planner = job(name="plan", event=PUSH, problems=problems)
    plan = planner.step({"command": "plan", "problem": "problems"})
    sharded_plan = planner.step({"command": "plan", "problem": "problems", "shards": "2"})
    entries = json.loads(sharded_plan.result.outputs["matrix"])["include"]
    shards = [
        job(name="evaluate", event=PUSH, problems=problems).step(
            {
                "problem": "problems",
                "checkpoint": "all",
                "select": entry["select"],
                "submission": "problems/{problem}/solutions/{checkpoint}",
                "image": test_image,
                "jobs": "2",
                "upload_artifact": "false",
            }
        )
        for entry in entries
    ]

    def merge_job(**inputs: str) -> StepRun:
        merger = job(name="merge", event=PUSH, problems=())
        for entry, shard in zip(entries, shards, strict=True):
            shutil.copytree(
                shard.workspace / ".scbench", merger.workspace / "shards" / entry["name"]
            )
        shutil.copy(nightly.edited, merger.workspace / "nightly.json")
        results = "\n".join(f"shards/{entry['name']}" for entry in entries)
        return merger.step(
            {"command": "merge", "results": results, "upload_artifact": "false", **inputs}
        )

    return FanOut(
        plan,
        sharded_plan,
        shards,
        merge_job(),
        merge_job(baseline="nightly.json", fail_on="regressions"),
    )


def test_plan_makes_a_matrix_entry_per_checkpoint(fan_out: FanOut) -> None:
    run = fan_out.plan
    assert run.result.exit_code == 0, run.result.log
    assert json.loads(run.result.outputs["matrix"]) == {
        "include": [
            {
                "name": f"{problem}-{checkpoint}",
                "problem": problem,
                "checkpoint": checkpoint,
                "select": f"{problem}/{checkpoint}",
            }
            for problem, checkpoint in MATRIX_JOBS
        ]
    }
    assert list(run.result.outputs) == ["matrix"]
    assert not (run.workspace / ".scbench").exists()


def test_plan_with_shards_makes_that_many_entries(fan_out: FanOut) -> None:
    run = fan_out.sharded_plan
    assert run.result.exit_code == 0, run.result.log
    assert json.loads(run.result.outputs["matrix"]) == {
        "include": [
            {
                "name": "shard-1-of-2",
                "shard": 1,
                "select": "kvserver/checkpoint_1 wordstat/checkpoint_1 wordstat/checkpoint_3",
                "checkpoints": 3,
                "estimated_s": 30.0,
            },
            {
                "name": "shard-2-of-2",
                "shard": 2,
                "select": "kvserver/checkpoint_2 wordstat/checkpoint_2",
                "checkpoints": 2,
                "estimated_s": 20.0,
            },
        ]
    }


def test_merge_makes_one_run_of_the_shards(fan_out: FanOut) -> None:
    run = fan_out.merge
    assert [shard.result.exit_code for shard in fan_out.shards] == [0, 0]
    assert run.result.exit_code == 0, run.result.log
    merged = json.loads((run.workspace / ".scbench/results.json").read_text())
    shards = [
        json.loads((shard.workspace / ".scbench/results.json").read_text())
        for shard in fan_out.shards
    ]
    evaluated = {
        (problem["name"], checkpoint["name"]): checkpoint
        for shard in shards
        for problem in shard["problems"]
        for checkpoint in problem["checkpoints"]
    }
    assert sorted(evaluated) == MATRIX_JOBS
    assert [
        ((problem["name"], checkpoint["name"]), checkpoint)
        for problem in merged["problems"]
        for checkpoint in problem["checkpoints"]
    ] == [(key, evaluated[key]) for key in MATRIX_JOBS]
    assert merged["comparison"] is None
    assert (run.workspace / ".scbench/kvserver/checkpoint_1/pytest.log").is_file()
    assert (run.workspace / ".scbench/wordstat/checkpoint_2/pytest.log").is_file()
    outputs = run.result.outputs
    assert (outputs["passed"], outputs["regressions"], outputs["fixed"]) == ("true", "", "")
    # kvserver: Core 3 + 3; wordstat: Core 8 + 8 + 8 (its xfailed test is Functionality).
    assert (outputs["core_passed"], outputs["core_total"]) == ("30", "30")
    assert outputs["results_path"] == ".scbench/results.json"
    assert "## ✅ PASSED: 2 problems, 5 checkpoints" in run.result.summary


def test_merge_compares_the_whole_with_a_baseline_and_fails_on_regressions(
    fan_out: FanOut, nightly: Nightly
) -> None:
    run = fan_out.merge_with_baseline
    outputs = run.result.outputs
    assert (outputs["passed"], outputs["regressions"], outputs["fixed"]) == ("true", "1", "1")
    assert run.result.exit_code == 1, run.result.log
    comparison = json.loads((run.workspace / ".scbench/results.json").read_text())["comparison"]
    assert [
        (change["problem"], change["checkpoint"], change["test"])
        for change in comparison["regressions"]
    ] == [("wordstat", "checkpoint_2", nightly.regressed)]
    assert [change["test"] for change in comparison["fixed"]] == [nightly.fixed]
    summary = run.result.summary
    assert "### Changes since the baseline" in summary
    assert "Compared with the baseline **nightly.json**" in summary
    assert "(newly failing)" in summary


def test_check_proves_problems_sound_with_annotations_at_their_lines(
    job: MakeJob, test_image: str
) -> None:
    """`command: check` on a folder of problems: a clean one, and one using a marker it never
    declares; only the clean one reaches the container runs."""
    checker = job(name="check", event=PULL_REQUEST, problems=())
    for name in ("clean", "unregistered_marker"):
        shutil.copytree(CHECK_PROBLEMS / name, checker.workspace / "problems" / name)
    run = checker.step(
        {"command": "check", "problem": "problems", "image": test_image, "upload_artifact": "false"}
    )
    assert run.result.exit_code == 1, run.result.log
    assert run.result.outputs["passed"] == "false"
    assert run.result.outputs["results_path"] == ".scbench/results.json"
    assert (
        "::error title=unregistered_marker · static,"
        "file=problems/unregistered_marker/tests/test_checkpoint_1.py,line=11::marker"
    ) in run.result.log
    document = json.loads((run.workspace / ".scbench" / "results.json").read_text())
    checks = {p["name"]: p["check"] for p in document["problems"]}
    assert checks["clean"]["passed"] is True and checks["clean"]["findings"] == []
    assert [f["line"] for f in checks["unregistered_marker"]["findings"]] == [11]
    summary = run.result.summary
    assert summary.count("| clean |") + summary.count("| `clean` |") == 1, summary
