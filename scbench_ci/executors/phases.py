"""Setup, then tests: the order, logs, timeout and result every executor shares.

An executor supplies how to run one command (`RunCommand`); this module decides which commands
run, in which log they land, when to stop, and what the result says.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scbench_ci.executors.base import (
    PYTEST_LOG,
    SETUP_LOG,
    ExecutionRequest,
    ExecutionResult,
    Phase,
)
from scbench_ci.executors.output import LogSink

RunCommand = Callable[[list[str], LogSink, float], tuple[int | None, int]]
"""Run argv to completion or to the deadline (a monotonic time), its output into the log.
Returns the exit code (None when the deadline stopped it) and how many processes it left
running, which it killed."""


def run_phases(request: ExecutionRequest, run: RunCommand, started: float) -> ExecutionResult:
    deadline = time.monotonic() + request.session_timeout_s
    leftovers = 0
    if request.setup_commands:
        setup = [["/bin/sh", "-c", command] for command in request.setup_commands]
        code, leftovers = _run_phase(setup, request, run, deadline, "setup")
        if code != 0:
            return _result(started, None, code, "setup" if code is None else None, leftovers)
    code, left = _run_phase([list(request.command.argv)], request, run, deadline, "tests")
    return _result(started, code, None, "tests" if code is None else None, leftovers + left)


def _run_phase(
    commands: list[list[str]],
    request: ExecutionRequest,
    run: RunCommand,
    deadline: float,
    phase: Phase,
) -> tuple[int | None, int]:
    """Run the commands in order until one fails; the last exit code and the leftovers."""
    log_name = SETUP_LOG if phase == "setup" else PYTEST_LOG
    code: int | None = 0
    leftovers = 0
    with LogSink(request.log_dir / log_name, request.echo) as log:
        for argv in commands:
            if phase == "setup":
                log.note(f"$ {argv[-1]}")
            code, left = run(argv, log, deadline)
            leftovers += left
            if left:
                log.note(f"killed {left} process(es) still running after the {phase} ended")
            if code is None:
                log.note(
                    f"{phase} stopped at the session timeout ({request.session_timeout_s:g} s)"
                )
            elif code != 0 and phase == "setup":
                log.note(f"setup command failed with exit code {code}")
            if code != 0:
                break
    return code, leftovers


def _result(
    started: float,
    exit_code: int | None,
    setup_exit_code: int | None,
    timed_out_in: Phase | None,
    leftover_processes: int,
) -> ExecutionResult:
    return ExecutionResult(
        exit_code=exit_code,
        setup_exit_code=setup_exit_code,
        timed_out_in=timed_out_in,
        duration_s=time.monotonic() - started,
        leftover_processes=leftover_processes,
    )
