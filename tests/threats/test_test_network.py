"""The tests' network reaches the internet (here, PyPI) and nothing of the daemon's host and of the
evaluations beside them: two evaluations side by side, each serving on a port while its tests
wait, are probed from inside each other's network namespace (a process of the tests user, run in
the container while its tests run) for the other one, the host's address on the default bridge
and on the run's own network (a server of the test listens there), and a container on the default
bridge. Before, on the default bridge, every one of them answered.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL, owner
from testing.cli import cli_argv
from testing.problems import ProblemFolder

PORT = 8765
TESTS = f"""
import os
import socket
import time


def test_serves_until_probed():
    server = socket.socket()
    server.bind(("0.0.0.0", {PORT}))
    server.listen(16)
    server.settimeout(0.2)
    deadline = time.monotonic() + 120
    while not os.path.exists("/tmp/probed") and time.monotonic() < deadline:
        try:
            server.accept()[0].close()
        except OSError:
            pass
    assert os.path.exists("/tmp/probed")
"""
PROBE = """
import json, socket, sys, urllib.request
def reach(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "reached"
    except OSError as error:
        return type(error).__name__ + ": " + str(error)
found = {name: reach(host, int(port)) for name, host, port in json.loads(sys.argv[1])}
try:
    found["pypi"] = str(urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=20).status)
except OSError as error:
    found["pypi"] = type(error).__name__ + ": " + str(error)
print(json.dumps(found))
"""


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A server of this test on every address of the host: what a container must not reach."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen(16)
    server.settimeout(0.2)
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                server.accept()[0].close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join()
        server.close()


@pytest.fixture
def bystander(docker_client: docker.DockerClient, test_image: str) -> Iterator[str]:
    """A container on the default bridge serving PORT (as an evaluation of an older version, a
    Ray node, anyone's): its address."""
    container = docker_client.containers.run(
        test_image,
        ["python3", "-m", "http.server", str(PORT)],
        name=f"scbench-ci-test-bystander-{uuid.uuid4().hex[:12]}",
        detach=True,
        remove=True,
    )
    try:
        container.reload()
        yield container.attrs["NetworkSettings"]["IPAddress"]
    finally:
        container.remove(force=True)


def test_evaluations_side_by_side_reach_pypi_and_not_each_other_or_the_host(
    tmp_path: Path,
    docker_client: docker.DockerClient,
    test_image: str,
    host_listener: int,
    bystander: str,
) -> None:
    problem = ProblemFolder(
        tmp_path / "demo",
        {
            "name": "demo",
            "entry_file": "main",
            "checkpoints": {
                "checkpoint_1": {"include_prior_tests": False},
                "checkpoint_2": {"include_prior_tests": False},
            },
        },
    )
    for name in ("checkpoint_1", "checkpoint_2"):
        problem.write(f"tests/test_{name}.py", TESTS)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('ok')\n")
    output = tmp_path / "out"
    argv = [
        *cli_argv("evaluate"),
        "--problem", str(problem.root), "--checkpoint", "all", "--submission", str(submission),
        "--output", str(output), "--image", test_image, "--jobs", "2", "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as cli:
        try:
            runs = _serving_side_by_side(docker_client, cli)
            probes = {}
            for container, other in ((runs[0], runs[1]), (runs[1], runs[0])):
                targets = [
                    ("the other evaluation", _address(other), PORT),
                    ("the host on the default bridge", "172.17.0.1", host_listener),
                    ("the host on its own network", _gateway(container), host_listener),
                    ("a container on the default bridge", bystander, PORT),
                ]
                code, out = container.exec_run(
                    ["python3", "-c", PROBE, json.dumps(targets)], user="1000:1000"
                )
                assert code == 0, out
                probes[container.name] = json.loads(out.decode())
            for container in runs:
                container.exec_run(["touch", "/tmp/probed"], user="1000:1000")
            stdout, stderr = cli.communicate(timeout=300)
        finally:
            if cli.poll() is None:
                cli.kill()
    print(json.dumps(probes, indent=2))
    for name, found in probes.items():
        assert found.pop("pypi") == "200", (name, found)
        reached = [target for target, outcome in found.items() if outcome == "reached"]
        assert reached == [], (name, found)
    assert cli.returncode == 0, stdout + stderr


def _serving_side_by_side(
    client: docker.DockerClient, cli: subprocess.Popen[str]
) -> list[docker.models.containers.Container]:
    """The CLI's two run containers once both serve PORT (their tests wait to be probed)."""
    label = f"{OWNER_LABEL}={owner(cli.pid)}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert cli.poll() is None, cli.communicate()
        serving = []
        for container in client.containers.list(
            ignore_removed=True, filters={"label": [RUN_LABEL, label]}
        ):
            if container.name.startswith("scbench-ci-build-"):
                continue
            check = f"import socket; socket.create_connection(('127.0.0.1', {PORT}), 1).close()"
            code, _ = container.exec_run(["python3", "-c", check], user="1000:1000")
            if code == 0:
                serving.append(container)
        if len(serving) == 2:
            for container in serving:
                container.reload()
            return serving
        time.sleep(0.5)
    raise AssertionError("the two evaluations never served side by side")


def _address(container: docker.models.containers.Container) -> str:
    networks = container.attrs["NetworkSettings"]["Networks"]
    return next(str(network["IPAddress"]) for network in networks.values())


def _gateway(container: docker.models.containers.Container) -> str:
    networks = container.attrs["NetworkSettings"]["Networks"]
    return next(str(network["Gateway"]) for network in networks.values())
