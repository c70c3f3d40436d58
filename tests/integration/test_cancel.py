"""Ctrl-C or SIGTERM in the middle of side-by-side evaluations: the run ends now, not when the
tests do, and nothing of it is left (containers, volumes, processes)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import pytest

from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.processes import OWNER_LABEL, owner
from testing.cli import cli_argv
from testing.hostile_submissions import processes_of_the_test
from testing.problems import ProblemFolder, waiting_problem
from testing.subprocesses import ended_with_the_block

pytestmark = pytest.mark.usefixtures("nothing_survives")

HANGING = "import time\n\ndef test_waits():\n    time.sleep(600)\n"


@pytest.mark.parametrize(
    ("executor", "stop"), [("docker", signal.SIGINT), ("local", signal.SIGTERM)]
)
def test_a_cancelled_run_stops_every_evaluation_at_once(
    executor: str,
    stop: signal.Signals,
    tmp_path: Path,
    test_image: str,
    docker_client: docker.DockerClient,
    nothing_survives: Path,
) -> None:
    problem = ProblemFolder(tmp_path / "problem")
    for name in ("checkpoint_1", "checkpoint_2", "checkpoint_3"):
        problem.write(f"tests/test_{name}.py", HANGING)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    output = tmp_path / "out"
    process = subprocess.Popen(
        [
            *cli_argv("evaluate", "--problem", problem.root),
            *("--checkpoint", "all", "--submission", str(submission), "--output", str(output)),
            *("--jobs", "2", "--executor", executor),
            *(("--image", test_image) if executor == "docker" else ()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with ended_with_the_block(process):
        if executor == "docker":
            wait_for_tests(process, 2, in_containers(docker_client, owner(process.pid)))
        else:
            wait_for_tests(process, 2, on_this_machine(nothing_survives))
        process.send_signal(stop)
        stopped = time.monotonic()
        out, err = process.communicate(timeout=60)
    assert time.monotonic() - stopped < 30
    assert process.returncode == (130 if stop == signal.SIGINT else 143), out + err
    assert err.strip().endswith("interrupted" if stop == signal.SIGINT else "terminated")
    assert "Traceback" not in err
    assert not (output / "results.json").exists()  # no verdict from a run that did not finish


TARGETS = {"pid": os.kill, "group": os.killpg}
"""`group`: the CLI's process group, as `timeout -s INT` and a terminal's Ctrl-C signal it."""


@pytest.mark.parametrize(
    ("signals", "apart_ms", "target", "jobs"),
    [
        ((signal.SIGINT, signal.SIGINT), 0, "pid", 2),
        ((signal.SIGINT, signal.SIGINT), 20, "group", 2),
        ((signal.SIGINT, signal.SIGINT), 50, "pid", 2),
        ((signal.SIGINT, signal.SIGINT), 100, "group", 2),
        ((signal.SIGTERM, signal.SIGTERM), 50, "group", 2),
        ((signal.SIGINT, signal.SIGTERM), 20, "pid", 2),
        ((signal.SIGTERM, signal.SIGINT), 100, "group", 2),
        ((signal.SIGINT,) * 6, 20, "group", 2),
        ((signal.SIGINT, signal.SIGINT), 50, "group", 1),
    ],
    ids=lambda value: (
        "+".join(signal.Signals(s).name for s in value) if isinstance(value, tuple) else None
    ),
)
def test_any_number_of_signals_leave_nothing_of_the_run(
    signals: tuple[signal.Signals, ...],
    apart_ms: int,
    target: str,
    jobs: int,
    tmp_path: Path,
    test_image: str,
    docker_client: docker.DockerClient,
) -> None:
    """Signals that follow the first while the run stops (a second Ctrl-C, `timeout`'s signal to
    the group) neither cut its cleanup short nor show a traceback: every container and volume of
    the run goes (`nothing_survives`), and the first signal says how it ended."""
    problem, _ = waiting_problem(tmp_path / "problem", 3, 600)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    process = subprocess.Popen(
        [
            *cli_argv("evaluate", "--problem", problem.root),
            *("--checkpoint", "all", "--submission", str(submission)),
            *("--output", str(tmp_path / "out"), "--jobs", str(jobs), "--timeout", "900"),
            *("--executor", "docker", "--image", test_image),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with ended_with_the_block(process):
        wait_for_tests(process, jobs, in_containers(docker_client, owner(process.pid)))
        for number, stop in enumerate(signals):
            if number:
                time.sleep(apart_ms / 1000)
            TARGETS[target](process.pid, stop)
        out, err = process.communicate(timeout=120)
    first = signals[0]
    assert process.returncode == (130 if first == signal.SIGINT else 143), out + err
    assert err.strip().endswith("interrupted" if first == signal.SIGINT else "terminated"), err
    assert "Traceback" not in err + out, err
    assert not (tmp_path / "out" / "results.json").exists()


def wait_for_tests(process: subprocess.Popen[str], count: int, running: Callable[[], int]) -> None:
    """Until `running()`, the run's pytest sessions that are running, is at least `count`."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if running() >= count:
            return
        time.sleep(0.5)
    raise AssertionError(f"the run's tests did not start within 300 s (pid {process.pid})")


def in_containers(client: docker.DockerClient, run_owner: str) -> Callable[[], int]:
    """The run's containers that have their pytest running."""

    def running() -> int:
        mine = {"label": [RUN_LABEL, f"{OWNER_LABEL}={run_owner}"], "status": "running"}
        testing = 0
        for container in client.containers.list(filters=mine, ignore_removed=True):
            with contextlib.suppress(docker.errors.APIError):
                listed = container.top(ps_args="-eo pid,args")["Processes"] or []
                testing += any("--checkpoint=" in " ".join(row) for row in listed)
        return testing

    return running


def on_this_machine(scratch: Path) -> Callable[[], int]:
    """The run's pytest sessions among the test's processes (`processes_of_the_test`); uv's
    processes that start them carry the same arguments and are not counted."""

    def running() -> int:
        return sum(
            Path(cmdline.split(" ", 1)[0]).name.startswith("python") and "--checkpoint=" in cmdline
            for _, cmdline in processes_of_the_test(scratch).values()
        )

    return running
