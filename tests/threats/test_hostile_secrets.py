"""The caller's secrets never reach a submission, however hard it looks for them.

tests/threats/hostile/secrets/ is laid over the broken wordstat submission: it counts as the
broken one does and, every time it runs, searches its environment, /proc/*/environ and
/proc/*/cmdline of every process it can read, its HOME and the credential files of its working
directory, then appends what it found to stderr, which the checkpoint_2 tests show in their
failure messages.
The made-up secrets carry the prefix it looks for (`scbench-planted-`). It brings a decoy with that
prefix in an environment file (for the tests' environment) and in a .netrc, and must find it in
both: the proof that it ran, that its hunt works and that its report lands in the logs.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from testing.action_run import run_action
from testing.examples import EXPECTED, group_counts, scbench_evaluate
from testing.hostile_submissions import hostile
from testing.results import checkpoint_documents
from testing.twirp_server import ArtifactService
from tests.outputs.github.test_artifacts import blob_zip

# They talk to the artifact service double (testing.azurite) on this machine.
# Each runs scbench-ci end to end, as every test under tests/integration does.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("loopback_without_proxy")]

BROKEN_COUNTS = EXPECTED[("wordstat", "checkpoint_2", "submissions/broken")][1]
CALLER_SECRETS = (
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RESULTS_URL",
    "AWS_SECRET_ACCESS_KEY",
    f"MY_SECRET_{secrets.token_hex(3)}",
)
ENVIRONMENT = "environment.yaml"
DECOY = "scbench-planted-decoy"
DECOY_FINDINGS = {(DECOY, "in"), (f"SCBENCH_DECOY_TOKEN={DECOY}", "in")}
"""What the submission reports of the variable environment.yaml gives the tests."""
SEARCHED = re.compile(
    r"HOSTILE-SECRETS-REPORT searched (\d+) environments, (\d+) command lines, (\d+) files"
)
FINDING = re.compile(r"HOSTILE-SECRETS-REPORT found (\S+) (in|outside) the run: ([^\\\n]+)")
JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+")


def planted() -> str:
    return f"scbench-planted-{secrets.token_hex(12)}"


@pytest.fixture
def submission(tmp_path: Path) -> tuple[Path, str]:
    """The hostile submission, checked out as actions/checkout leaves a repository: with its
    token in .git/config. Returns the folder and that token."""
    folder = hostile(tmp_path, "secrets")
    token = planted()
    (folder / ".git").mkdir()
    (folder / ".git/config").write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {token}\n'
    )
    return folder, token


@pytest.fixture
def caller_secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Made-up secrets in the environment the CLI is started with."""
    values = {name: planted() for name in CALLER_SECRETS}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def findings(pytest_log: str) -> set[tuple[str, str]]:
    """What the submission reported finding: (the value or NAME=value, `in` or `outside`)."""
    searched = [tuple(map(int, counts)) for counts in SEARCHED.findall(pytest_log)]
    assert searched, "the hostile submission did not report: did it run?"
    # Its own environment and at least one other process of the run (its parent, `uv run`), and
    # at least its .netrc.
    assert all(env >= 2 and cmd >= 2 and files >= 1 for env, cmd, files in searched), searched
    reported = FINDING.findall(pytest_log)
    assert all(".netrc" in where for finding, _, where in reported if finding == DECOY)
    found = {(finding, scope) for finding, scope, _ in reported}
    assert found >= DECOY_FINDINGS, found
    return found


def texts(folder: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield str(path), path.read_text(encoding="utf-8", errors="replace")


def run_cli(submission: Path, output: Path, *extra: str, executor: str) -> dict[str, str]:
    """`scbench-ci evaluate` on checkpoint_2 (its failure messages show the submission's
    stderr) with the submission's environment file: the broken verdict, exactly. Returns what
    it printed."""
    run, results = scbench_evaluate(
        "wordstat",
        "checkpoint_2",
        str(submission),  # absolute: joined onto the problem's folder unchanged
        output,
        "--environment",
        str(submission / ENVIRONMENT),
        *extra,
        executor=executor,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    (checkpoint,) = checkpoint_documents(results)
    assert group_counts(checkpoint) == BROKEN_COUNTS
    assert checkpoint["failure"] is None
    return {"stdout": run.stdout, "stderr": run.stderr}


def test_the_cli_in_docker_keeps_every_secret_out_of_reach(
    submission: tuple[Path, str],
    caller_secrets: dict[str, str],
    tmp_path: Path,
    test_image: str,
) -> None:
    folder, git_token = submission
    output = tmp_path / "out"
    console = run_cli(folder, output, "--image", test_image, executor="docker")
    # Nothing that looks like a secret but the decoy, in all the submission could read.
    assert findings((output / "wordstat/checkpoint_2/pytest.log").read_text()) == DECOY_FINDINGS
    everything = [*texts(output), *console.items()]
    assert {"results.json", "pytest.log", "summary.md"} <= {Path(n).name for n, _ in everything}
    for value in (*caller_secrets.values(), git_token):
        for name, text in everything:
            assert value not in text, f"{value} leaked into {name}"


def test_the_cli_locally_keeps_secrets_out_of_the_test_processes(
    submission: tuple[Path, str], caller_secrets: dict[str, str], tmp_path: Path
) -> None:
    """The local executor gives the test process an environment built from scratch and drops
    .git, so no secret is in the run. It isolates nothing else (docs/executors.md): the submission
    runs as the caller's user and may read the caller's own /proc/<pid>/environ, which is allowed
    here and nowhere else."""
    folder, git_token = submission
    output = tmp_path / "out"
    run_cli(folder, output, executor="local")
    log = (output / "wordstat/checkpoint_2/pytest.log").read_text()
    in_run = {finding for finding, scope in findings(log) if scope == "in"}
    for value in (*caller_secrets.values(), git_token):
        assert not any(value in finding for finding in in_run), value
    assert not {finding.partition("=")[0] for finding in in_run} & set(caller_secrets)
    for _, scope, where in FINDING.findall(log):
        if scope == "outside":
            assert re.fullmatch(r"/proc/\d+/environ(, /proc/\d+/environ)*", where), where


def test_the_action_keeps_every_secret_out_of_reach(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
    artifact_service: ArtifactService,
    submission: tuple[Path, str],
) -> None:
    """As GitHub's runner runs the action: GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN (a JWT),
    ACTIONS_RESULTS_URL, every INPUT_* (one of them a made-up secret) and the Docker socket."""
    folder, git_token = submission
    input_secret = planted()
    run = run_action(
        docker_client,
        action_image,
        tmp_path / "runner",
        {
            "image": test_image,
            "environment": f"submission/{ENVIRONMENT}",
            "my_secret": input_secret,
        },
        artifact_service,
        submission=str(folder),
    )
    assert run.exit_code == 1, run.log
    for group, (passed, _, _, total) in BROKEN_COUNTS.items():
        key = group.lower()
        assert (run.outputs[f"{key}_passed"], run.outputs[f"{key}_total"]) == (
            str(passed),
            str(total),
        )
    reports = run.workspace / ".scbench"
    assert findings((reports / "wordstat/checkpoint_2/pytest.log").read_text()) == DECOY_FINDINGS
    (artifact,) = artifact_service.artifacts.values()
    archive = blob_zip(artifact_service, artifact)
    everything = [
        *texts(reports),
        ("log", run.log),
        ("summary", run.summary),
        *run.outputs.items(),
        *((f"artifact:{n}", archive.read(n).decode(errors="replace")) for n in archive.namelist()),
    ]
    assert any(name.startswith("artifact:") for name, _ in everything)
    for name, text in everything:
        # `ghs_` starts run_action's GITHUB_TOKEN, as it starts GitHub's app tokens.
        for value in (input_secret, git_token, "ghs_", artifact_service.url):
            assert value not in text, f"{value} leaked into {name}"
        assert not JWT.search(text), f"a token leaked into {name}"
