"""The Docker executor on the bundled examples: the same results as the local executor, and the
CLI run from inside a container that talks to the host's daemon (no bind mounts)."""

import io
import json
import tarfile
from pathlib import Path

import docker
import pytest

from testing.examples import EXPECTED, SharedEvaluations, group_counts
from testing.paths import EXAMPLES
from testing.results import checkpoint_documents

RUNS = [
    *EXPECTED,
    ("kvserver", "checkpoint_1", "submissions/leaky"),
    ("kvserver", "checkpoint_2", "submissions/leaky"),
]


def _per_test(results: dict) -> dict[str, tuple[str, str, str]]:
    (checkpoint,) = checkpoint_documents(results)
    return {t["id"]: (t["checkpoint"], t["group"], t["status"]) for t in checkpoint["tests"]}


@pytest.mark.parametrize(("problem", "checkpoint", "submission"), RUNS)
def test_docker_and_local_agree(
    problem: str,
    checkpoint: str,
    submission: str,
    test_image: str,
    shared_evaluations: SharedEvaluations,
) -> None:
    local_evaluation = shared_evaluations(problem, checkpoint, submission, executor="local")
    docker_evaluation = shared_evaluations(
        problem, checkpoint, submission, "--image", test_image, executor="docker"
    )
    local_run, local = local_evaluation.run, local_evaluation.results
    docker_run, in_docker = docker_evaluation.run, docker_evaluation.results
    assert docker_run.returncode == local_run.returncode, docker_run.stdout + docker_run.stderr
    assert in_docker["executor"] == "docker" and local["executor"] == "local"
    assert _per_test(in_docker) == _per_test(local)
    assert len(_per_test(local)) > 0


def _tar(entries: dict[str, Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, source in entries.items():
            tar.add(source, arcname=name)
    return buffer.getvalue()


def _file_from(container: docker.models.containers.Container, path: str) -> bytes:
    chunks, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
        member = tar.extractfile(tar.getmembers()[0])
        assert member is not None
        return member.read()


def test_the_cli_inside_a_container_uses_no_host_paths(
    docker_client: docker.DockerClient, action_image: str, test_image: str
) -> None:
    """The problem and submission exist only inside this container: the evaluation container,
    a sibling on the host's daemon, can get them only as an archive."""
    assert not Path("/scbench-data").exists()
    container = docker_client.containers.create(
        action_image,
        entrypoint=["/opt/venv/bin/scbench-ci"],
        command=[
            "evaluate",
            "--problem",
            "/scbench-data/problem",
            "--checkpoint",
            "checkpoint_2",
            "--submission",
            "/scbench-data/submission",
            "--executor",
            "docker",
            "--image",
            test_image,
            "--output",
            "/scbench-data/out",
            "--quiet",
        ],
        volumes={"/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"}},
        working_dir="/",
    )
    try:
        container.put_archive(
            "/",
            _tar(
                {
                    "scbench-data/problem": EXAMPLES / "wordstat",
                    "scbench-data/submission": EXAMPLES / "wordstat/solutions/checkpoint_2",
                }
            ),
        )
        container.start()
        exit_code = container.wait(timeout=600)["StatusCode"]
        output = container.logs().decode(errors="replace")
        assert exit_code == 0, output
        results = json.loads(_file_from(container, "/scbench-data/out/results.json"))
    finally:
        container.remove(force=True)
    assert results["executor"] == "docker"
    (checkpoint,) = checkpoint_documents(results)
    expected = EXPECTED[("wordstat", "checkpoint_2", "solutions/checkpoint_2")][1]
    assert group_counts(checkpoint) == expected
    assert "Verdict: PASSED" in output
