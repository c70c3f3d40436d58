"""Test runner, setup, then tests: the order, logs, timeout and result every executor shares.

An executor supplies how to run one step (`RunStep`) and the steps that are its own (how the test
runner is installed, how the tests are started); this module decides which steps run, in which
log they land, when to stop, and what the result says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from scbench_ci.executors.base import (
    PYTEST_LOG,
    SETUP_LOG,
    ExecutionRequest,
    ExecutionResult,
    Phase,
)
from scbench_ci.executors.output import LogSink
from scbench_ci.pytest_runner import SEAL_KEY_VARIABLE


@dataclass(frozen=True)
class Step:
    argv: list[str]
    user: Literal["runner", "tests"] = "tests"
    """`runner` steps install the test runner before any of the submission's code runs, as a user
    the tests cannot impersonate (where the executor has one)."""
    extra_env: Mapping[str, str] = field(default_factory=dict)


RunStep = Callable[[Step, LogSink, float], tuple[int | None, int]]
"""Run a step to completion or to the deadline (a monotonic time), its output into the log.
Returns the exit code (None when the deadline stopped it) and how many processes it left
running, which it killed."""


@dataclass(frozen=True)
class Plan:
    run: RunStep
    runner_install: tuple[list[str], ...]
    test_argv: list[str]
    before_tests: Callable[[], None] | None = None
    """Called between setup and tests (to cut the network, say)."""


def run_phases(request: ExecutionRequest, plan: Plan, started: float) -> ExecutionResult:
    deadline = time.monotonic() + request.session_timeout_s
    leftovers = 0
    steps = [Step(argv, user="runner") for argv in plan.runner_install]
    steps += [Step(["/bin/sh", "-c", command]) for command in request.setup_commands]
    if steps:
        code, leftovers, failed = _run_setup(steps, request, plan.run, deadline)
        if code != 0:
            return _result(
                started,
                None,
                code if failed == "setup" else None,
                code if failed == "runner" else None,
                "setup" if code is None else None,
                leftovers,
            )
    if plan.before_tests is not None:
        plan.before_tests()
    tests = Step(plan.test_argv, extra_env={SEAL_KEY_VARIABLE: request.seal_key})
    with LogSink(request.log_dir / PYTEST_LOG, request.echo) as log:
        code, left = plan.run(tests, log, deadline)
        _note_end(log, "tests", code, left, request.session_timeout_s)
    return _result(started, code, None, None, "tests" if code is None else None, leftovers + left)


def _run_setup(
    steps: list[Step], request: ExecutionRequest, run: RunStep, deadline: float
) -> tuple[int | None, int, Literal["runner", "setup"]]:
    """Run the steps in order until one fails; the last exit code, the leftovers, whose step."""
    code: int | None = 0
    leftovers = 0
    user: Literal["runner", "setup"] = "setup"
    with LogSink(request.log_dir / SETUP_LOG, request.echo) as log:
        for step in steps:
            user = "runner" if step.user == "runner" else "setup"
            log.note(f"$ {step.argv[-1] if user == 'setup' else ' '.join(step.argv)}")
            code, left = run(step, log, deadline)
            leftovers += left
            _note_end(log, "setup", code, left, request.session_timeout_s)
            if code:
                what = "the test runner's installation" if user == "runner" else "setup command"
                log.note(f"{what} failed with exit code {code}")
            if code != 0:
                break
    return code, leftovers, user


def _note_end(
    log: LogSink, phase: Phase, code: int | None, leftovers: int, session_timeout_s: float
) -> None:
    if leftovers:
        log.note(f"killed {leftovers} process(es) still running after the {phase} ended")
    if code is None:
        log.note(f"{phase} stopped at the session timeout ({session_timeout_s:g} s)")


def _result(
    started: float,
    exit_code: int | None,
    setup_exit_code: int | None,
    runner_exit_code: int | None,
    timed_out_in: Phase | None,
    leftover_processes: int,
) -> ExecutionResult:
    return ExecutionResult(
        exit_code=exit_code,
        setup_exit_code=setup_exit_code,
        runner_exit_code=runner_exit_code,
        timed_out_in=timed_out_in,
        duration_s=time.monotonic() - started,
        leftover_processes=leftover_processes,
    )
