"""The action's end-to-end cases: one workflow step run as GitHub's runner runs it
(`testing/runner.py`), and what each case needs in one fixture (`tests/action/conftest.py`)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import docker
import pytest

from testing.paths import EXAMPLES, REPO_ROOT
from testing.runner import ActionManifest, RunnerHost, Step, run_step
from testing.twirp_server import ArtifactService

ACTION_YML = REPO_ROOT / "action.yml"
MANIFEST = ActionManifest.load(ACTION_YML)
RETENTION_LIMIT_DAYS = 30
"""The repository's artifact retention, as the runner's github context has it."""
GITHUB_TOKEN = "ghs_secret_that_must_not_reach_the_tests"


@dataclasses.dataclass
class ActionRun:
    exit_code: int
    log: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    argv: list[str]
    """`docker run`'s arguments as the runner gives them."""
    environment: dict[str, str]
    """The action container's environment."""


def run_action(
    docker_client: docker.DockerClient,
    image: str,
    runner: Path,
    inputs: dict[str, str],
    service: ArtifactService | None,
    submission: str = "wordstat/solutions/checkpoint_2",
    *,
    files: dict[str, str] | None = None,
    manifest: ActionManifest = MANIFEST,
    problems: tuple[str, ...] = ("wordstat",),
) -> ActionRun:
    """One workflow step `uses:` the action `with:` problem, submission, checkpoint and `inputs`,
    its job's `env:` holding GITHUB_TOKEN. `files` are written into the workspace, and the
    examples named by `problems` into `problems/`."""
    host = RunnerHost(runner)
    host.create()
    for problem in problems:
        shutil.copytree(EXAMPLES / problem, host.workspace / "problems" / problem)
    shutil.copytree(EXAMPLES / submission, host.workspace / "submission")
    for relative, text in (files or {}).items():
        (host.workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (host.workspace / relative).write_text(text)
    service_env = service.environment() if service else {}
    step = Step(
        with_={
            "problem": "problems/wordstat",
            "submission": "submission",
            "checkpoint": "checkpoint_2",
            **inputs,
        },
        env={"GITHUB_TOKEN": GITHUB_TOKEN},
        github={
            "action": "__scbench_evaluate",
            "action_repository": "scbench/evaluate",
            "action_ref": "v1",
            "actor": "octocat",
            "api_url": "https://api.github.com",
            "event_name": "pull_request",
            "job": "evaluate",
            "ref": "refs/pull/7/merge",
            "repository": service_env.get("GITHUB_REPOSITORY", "scbench/demo"),
            "repository_owner": "scbench",
            "retention_days": str(RETENTION_LIMIT_DAYS),
            "run_attempt": "1",
            "run_id": service_env.get("GITHUB_RUN_ID", "4242"),
            "run_number": "7",
            "server_url": service_env.get("GITHUB_SERVER_URL", "https://github.com"),
            "sha": "0" * 40,
            "workflow": "problems",
        },
        runtime_token=service_env.get("ACTIONS_RUNTIME_TOKEN", "unused-runtime-token"),
        results_url=service_env.get("ACTIONS_RESULTS_URL"),
    )
    result = run_step(docker_client, image, manifest, host, step)
    return ActionRun(
        exit_code=result.exit_code,
        log=result.log,
        outputs=result.outputs,
        summary=result.summary,
        workspace=host.workspace,
        argv=result.argv,
        environment=result.environment,
    )


@dataclasses.dataclass(frozen=True)
class ActionHost:
    """What an end-to-end case runs the action with: the daemon, the action's image, the image
    its tests run in, a runner's folder, and GitHub's artifact service (started only for a case
    that uploads)."""

    docker_client: docker.DockerClient
    image: str
    runner: Path
    request: pytest.FixtureRequest

    @property
    def test_image(self) -> str:
        image: str = self.request.getfixturevalue("test_image")
        return image

    @property
    def artifact_service(self) -> ArtifactService:
        service: ArtifactService = self.request.getfixturevalue("artifact_service")
        return service

    def run(
        self,
        inputs: dict[str, str],
        submission: str = "wordstat/solutions/checkpoint_2",
        *,
        upload: bool = True,
        files: dict[str, str] | None = None,
        manifest: ActionManifest = MANIFEST,
        problems: tuple[str, ...] = ("wordstat",),
    ) -> ActionRun:
        """`run_action` on this host; `upload`: with the artifact service."""
        service = self.artifact_service if upload else None
        return run_action(
            self.docker_client,
            self.image,
            self.runner,
            inputs,
            service,
            submission,
            files=files,
            manifest=manifest,
            problems=problems,
        )
