"""The phases every executor shares, timed: with a stand-in for running a step (no processes)."""

from __future__ import annotations

import time
from pathlib import Path

from scbench_ci.executors.base import ExecutionRequest
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhaseClock, PhasePlan, RunStep, Step, run_phases
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from testing.probes import PROBE_KEY, probe_command


def _request(tmp_path: Path, setup: tuple[str, ...] = ()) -> ExecutionRequest:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return ExecutionRequest(
        workspace=workspace,
        log_dir=tmp_path,
        setup_commands=setup,
        command=probe_command(workspace, "pass"),
        session_timeout_s=60,
        seal_key=PROBE_KEY,
        echo=None,
    )


def _taking(seconds: dict[str, float], codes: dict[str, int] | None = None) -> RunStep:
    """A RunStep that takes the given time per kind of step (runner, setup, tests)."""

    def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
        kind = "tests" if step.tests else ("runner" if step.user == "runner" else "setup")
        time.sleep(seconds[kind])
        log.write(f"{kind}\n".encode())
        return (codes or {}).get(kind, 0), 0

    return run


def test_each_phase_is_timed_in_order(tmp_path: Path) -> None:
    request = _request(tmp_path, setup=("one", "two"))
    clock = PhaseClock()
    with clock.timing("container"):
        time.sleep(0.01)
    plan = PhasePlan(
        _taking({"runner": 0.02, "setup": 0.01, "tests": 0.03}),
        (["install"],),
        ["pytest"],
        after_tests=lambda: 2,
        clock=clock,
    )

    result = run_phases(request, plan, time.monotonic())

    assert list(result.phases) == ["container", "runner", "setup", "tests", "collect"]
    assert result.phases["runner"] >= 0.02
    assert result.phases["setup"] >= 0.02  # both commands
    assert result.phases["tests"] >= 0.03
    # What after_tests killed counts as left over, and is said in the tests' log.
    assert result.leftover_processes == 2
    assert "killed 2 process(es) still running after the tests ended" in (
        (tmp_path / PYTEST_LOG).read_text()
    )


def test_a_failed_setup_command_does_not_stop_the_tests(tmp_path: Path) -> None:
    """As SCBench's entry script: its setup commands are lines without `set -e`."""
    request = _request(tmp_path, setup=("broken", "fine"))
    plan = PhasePlan(_taking({"runner": 0, "setup": 0, "tests": 0}, {"setup": 3}), (), ["pytest"])

    result = run_phases(request, plan, time.monotonic())

    assert (result.setup_exit_code, result.exit_code) == (3, 0)
    assert list(result.phases) == ["setup", "tests"]


def test_a_failed_installation_of_the_runner_stops_the_run(tmp_path: Path) -> None:
    request = _request(tmp_path, setup=("fine",))
    plan = PhasePlan(
        _taking({"runner": 0, "setup": 0, "tests": 0}, {"runner": 2}), (["uv", "venv"],), ["pytest"]
    )

    result = run_phases(request, plan, time.monotonic())

    assert (result.runner_exit_code, result.setup_exit_code, result.exit_code) == (2, None, None)
    assert list(result.phases) == ["runner"]


def test_an_executor_may_run_the_setup_itself_and_keep_setup_log_open(tmp_path: Path) -> None:
    """A cache stood in for the setup commands: none runs; the executor's setup.log stays open
    for it (it closes it)."""
    request = _request(tmp_path, setup=("uv init",))
    with LogSink(tmp_path / SETUP_LOG, None) as log:
        log.note("from the cache")
        plan = PhasePlan(
            _taking({"runner": 0, "setup": 0, "tests": 0}),
            (),
            ["pytest"],
            setup_commands=(),
            setup_log=log,
        )
        result = run_phases(request, plan, time.monotonic())
        log.note("still open")

    assert result.exit_code == 0
    assert list(result.phases) == ["tests"]
    assert (tmp_path / SETUP_LOG).read_text() == (
        "[scbench-ci] from the cache\n[scbench-ci] still open\n"
    )


def test_the_session_timeout_counts_from_the_executors_deadline(tmp_path: Path) -> None:
    request = _request(tmp_path)
    plan = PhasePlan(
        lambda step, log, deadline: (None if deadline < time.monotonic() + 1 else 0, 0),
        (),
        ["pytest"],
        deadline=time.monotonic(),  # already spent before the phases
    )

    result = run_phases(request, plan, time.monotonic())

    assert (result.exit_code, result.timed_out_in) == (None, "tests")


def test_phases_come_in_the_documented_order_whatever_the_order_timed() -> None:
    clock = PhaseClock()
    for phase in ("cleanup", "tests", "extra", "image", "tests"):
        clock.add(phase, 1.0)
    assert clock.phases() == {"image": 1.0, "tests": 2.0, "cleanup": 1.0, "extra": 1.0}
