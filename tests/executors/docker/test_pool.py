"""Containers made ahead of need, against the real daemon: each serves one evaluation (a
submission never sees what another left, and never the container another used), the next one
is made while one runs, and nothing of a run's outlives it, Ctrl-C included; other runs'
containers on the daemon are never touched."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import docker

from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.docker.container import RUN_LABEL, build_name, labels
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.processes import OWNER_LABEL, owner, this_host
from testing.paths import EXAMPLES, REPO_ROOT
from testing.probes import PROBE_KEY, PROBE_OUTPUT, probe_command

# What a submission leaves where it can write (the workspace, /tmp, its home) and the id of the
# container it ran in (its hostname is the id's first 12 characters); then whether what the
# submission before it left is there.
PROBE = """
import json, os, pathlib, socket
left = ["/workspace/left-behind", "/tmp/left-behind", os.environ["HOME"] + "/left-behind"]
seen = [path for path in left if os.path.exists(path)]
for path in left:
    pathlib.Path(path).write_text("from an earlier submission")
pathlib.Path(PROBE_OUTPUT).write_text(json.dumps({"host": socket.gethostname(), "seen": seen}))
"""


def probe(executor: DockerExecutor, folder: Path) -> dict[str, object]:
    workspace = folder / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    logs = folder / "logs"
    logs.mkdir()
    result: ExecutionResult = executor.execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=(),
            command=probe_command(workspace, PROBE),
            session_timeout_s=120,
            seal_key=PROBE_KEY,
            echo=None,
        )
    )
    assert result.exit_code == 0, (logs / "pytest.log").read_text()
    found: dict[str, object] = json.loads((workspace / PROBE_OUTPUT).read_text())
    return found


def mine(client: docker.DockerClient, label: str = f"{OWNER_LABEL}={owner()}") -> list[str]:
    """The ids of the containers (any state) that carry `label`."""
    return [
        str(c.id)
        for c in client.containers.list(all=True, ignore_removed=True, filters={"label": label})
    ]


def test_each_evaluation_has_a_container_no_other_had_made_ahead_of_it(
    docker_client: docker.DockerClient, test_image: str, tmp_path: Path
) -> None:
    executor = DockerExecutor(DockerSettings(image=test_image))
    executor.expect(None, 1)
    try:
        first = probe(executor, tmp_path / "a")
        # While nothing runs, the next one's container is made: it is there before it is asked for.
        deadline = time.monotonic() + 120
        while not (
            ahead := [i for i in mine(docker_client) if not i.startswith(str(first["host"]))]
        ):
            assert time.monotonic() < deadline, "no container was made ahead"
            time.sleep(0.2)
        second = probe(executor, tmp_path / "b")
        third = probe(executor, tmp_path / "c")
    finally:
        executor.close()
    hosts = [first["host"], second["host"], third["host"]]
    assert len(set(hosts)) == 3, hosts
    assert ahead[0].startswith(str(second["host"]))
    assert first["seen"] == second["seen"] == third["seen"] == []
    # Closed: the used ones and the one made for a fourth evaluation are gone.
    assert mine(docker_client) == []


def test_a_batch_makes_no_container_beyond_its_runs(
    docker_client: docker.DockerClient, test_image: str, tmp_path: Path
) -> None:
    executor = DockerExecutor(DockerSettings(image=test_image))
    executor.expect(2, 1)
    # Watched as they come: the daemon keeps too few past events for a busy machine.
    events = docker_client.events(
        decode=True,
        filters={"type": "container", "event": "create", "label": f"{OWNER_LABEL}={owner()}"},
    )
    created: list[str] = []

    def watch() -> None:
        with contextlib.suppress(Exception):  # the stream closed under it
            for event in events:
                # A run's, not a throwaway one that measures the image or the disk for them.
                if not event["Actor"]["Attributes"]["name"].startswith(build_name("")):
                    created.append(event["id"][:12])

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        first = probe(executor, tmp_path / "a")
        second = probe(executor, tmp_path / "b")
    finally:
        executor.close()
        time.sleep(1)
        events.close()
        watcher.join(30)
    assert created == [first["host"], second["host"]]
    assert mine(docker_client) == []


SESSION_LOOP = """
import sys
from pathlib import Path
import scbench_ci
from scbench_ci import Target

wordstat = Path(sys.argv[1])
target = Target(wordstat, "checkpoint_1", wordstat / "solutions" / "checkpoint_1")
with scbench_ci.Session(jobs=1, image=sys.argv[2]) as session:
    while True:
        session.evaluate([target])
"""


def test_ctrl_c_leaves_no_container_of_the_run_and_touches_no_other_run_s(
    docker_client: docker.DockerClient, test_image: str
) -> None:
    # Another run's container on the same daemon: an owner of this host that is not the loop.
    other_run = docker_client.containers.create(
        test_image,
        ["sleep", "infinity"],
        name=f"scbench-ci-other-{uuid.uuid4().hex[:12]}",
        labels={**labels(uuid.uuid4().hex), OWNER_LABEL: f"{this_host()}/{os.getpid()}"},
    )
    loop = subprocess.Popen(
        [sys.executable, "-c", SESSION_LOOP, str(EXAMPLES / "wordstat"), test_image],
        cwd=REPO_ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    theirs = f"{OWNER_LABEL}={this_host()}/{loop.pid}"
    try:
        # Stopped while one evaluation runs and the next one's container is made.
        deadline = time.monotonic() + 300
        while len(mine(docker_client, theirs)) < 2:
            assert loop.poll() is None, loop.communicate()[1]
            assert time.monotonic() < deadline, "the loop never had two containers"
            time.sleep(0.2)
        loop.send_signal(signal.SIGINT)
        _, stderr = loop.communicate(timeout=120)
        assert "KeyboardInterrupt" in stderr
        assert mine(docker_client, theirs) == []
        assert docker_client.volumes.list(filters={"label": theirs}) == []
        other_run.reload()
        assert other_run.labels[RUN_LABEL]
    finally:
        if loop.poll() is None:
            loop.kill()
        other_run.remove(force=True)
