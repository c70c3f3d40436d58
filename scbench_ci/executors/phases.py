"""Test runner, setup, then tests: the order, logs, timeout, timings and result every executor
shares.

An executor supplies how to run one step (`RunStep`) and the steps that are its own (how the test
runner is installed, how the tests are started); this module decides which steps run, in which
log they land, when to stop, and what the result says. A failing setup command does not stop the
run, as in SCBench's entry script (its setup commands are lines of a `sh` script without `set -e`):
the tests decide; the session timeout and a failing installation of the test runner do.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from scbench_ci.executors.base import ExecutionRequest, ExecutionResult, Phase
from scbench_ci.executors.output import LogSink
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.standalone.pytest_runner import SEAL_KEY_VARIABLE

PHASE_ORDER = ("image", "container", "runner", "setup", "tests", "collect", "quality", "cleanup")
"""The phases an executor may time, in the order they happen (`ExecutionResult.phases`):
`image` (the image is there), `container` (the run's container made, started and the workspace
copied in), `runner` (the test runner's environment made available), `setup`, `tests`, `collect`
(the reports and the limit counters copied out), `quality` (the code-quality measure, its
environment's installation included), `cleanup` (container and volume removed)."""


class PhaseClock:
    """Seconds spent per phase; a phase timed twice (a retried run) adds up."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    def add(self, phase: str, seconds: float) -> None:
        self._seconds[phase] = self._seconds.get(phase, 0.0) + seconds

    @contextmanager
    def timing(self, phase: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.add(phase, time.monotonic() - start)

    def phases(self) -> dict[str, float]:
        """In PHASE_ORDER, then any other in the order first timed."""
        known = [phase for phase in PHASE_ORDER if phase in self._seconds]
        others = [phase for phase in self._seconds if phase not in PHASE_ORDER]
        return {phase: self._seconds[phase] for phase in (*known, *others)}


@dataclass(frozen=True)
class Step:
    argv: list[str]
    user: Literal["runner", "tests"] = "tests"
    """`runner` steps install the test runner before any of the submission's code runs, as a user
    the tests cannot impersonate (where the executor has one)."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    tests: bool = False
    """The tests' step: what it leaves running is the plan's `after_tests`'s, when it has one."""


RunStep = Callable[[Step, LogSink, float], tuple[int | None, int]]
"""Run a step to completion or to the deadline (a monotonic time), its output into the log.
Returns the exit code (None when the deadline stopped it) and how many processes it left
running, which it killed."""


@dataclass(frozen=True)
class PhasePlan:
    run: RunStep
    runner_install: tuple[list[str], ...]
    test_argv: list[str]
    before_tests: Callable[[], None] | None = None
    """Called between setup and tests (to cut the network, say)."""
    install_quality: Callable[[], None] | None = None
    """Called after setup, before `before_tests`, timed as `quality`: installs the quality
    measure's environment while the run is still online (a failure is the measure's)."""
    after_tests: Callable[[], int] | None = None
    """Called when the tests' step ended (not at the session timeout), timed as `collect`: kills
    what the tests left running and returns how many, taking what is to be collected along; the
    tests' step then leaves that to it."""
    setup_commands: tuple[str, ...] | None = None
    """The setup commands to run; None: the request's. An executor that already did what they
    do (from a cache) gives none."""
    setup_log: LogSink | None = None
    """setup.log, when the executor opened it (to say where the runner and the setup came from);
    the executor closes it."""
    deadline: float | None = None
    """The session's end (a monotonic time), when the executor's own work before the phases
    counts toward the session timeout; else the timeout counts from now."""
    clock: PhaseClock | None = None
    """Where the runner, setup and tests phases are timed; the result's phases come from it."""


def run_phases(request: ExecutionRequest, plan: PhasePlan, started: float) -> ExecutionResult:
    deadline = plan.deadline or time.monotonic() + request.session_timeout_s
    clock = plan.clock or PhaseClock()
    leftovers = 0
    setup_commands = request.setup_commands if plan.setup_commands is None else plan.setup_commands
    steps = [Step(argv, user="runner") for argv in plan.runner_install]
    steps += [Step(["/bin/sh", "-c", command]) for command in setup_commands]
    own_log = (
        None
        if plan.setup_log is not None or not steps
        else LogSink(request.log_dir / SETUP_LOG, request.echo, setup=True)
    )
    log = plan.setup_log or own_log
    setup_failed: int | None = None
    try:
        if log is not None and steps:
            setup = _run_setup(steps, request, plan.run, deadline, log, clock)
            leftovers, setup_failed = setup.leftovers, setup.setup_failed
            if setup.stopped:
                return _result(
                    started,
                    clock,
                    None,
                    setup_failed,
                    setup.runner_failed,
                    "setup" if setup.runner_failed is None else None,
                    leftovers,
                )
    finally:
        if own_log is not None:
            own_log.close()
    if plan.install_quality is not None:
        with clock.timing("quality"):
            plan.install_quality()
    if plan.before_tests is not None:
        with clock.timing("setup"):
            plan.before_tests()
    tests = Step(plan.test_argv, extra_env={SEAL_KEY_VARIABLE: request.seal_key}, tests=True)
    with LogSink(request.log_dir / PYTEST_LOG, request.echo) as log:
        with clock.timing("tests"):
            code, left = plan.run(tests, log, deadline)
        if code is not None and plan.after_tests is not None:
            with clock.timing("collect"):
                left += plan.after_tests()
        _note_end(log, "tests", code, left, request.session_timeout_s)
    return _result(
        started,
        clock,
        code,
        setup_failed,
        None,
        "tests" if code is None else None,
        leftovers + left,
    )


@dataclass(frozen=True)
class _Setup:
    leftovers: int
    setup_failed: int | None
    """The first failing setup command's exit code."""
    runner_failed: int | None
    """The failing step of the test runner's installation's exit code."""
    stopped: bool
    """Whether the run stops here: the runner's installation failed, or the session timeout."""


def _run_setup(
    steps: list[Step],
    request: ExecutionRequest,
    run: RunStep,
    deadline: float,
    log: LogSink,
    clock: PhaseClock,
) -> _Setup:
    """Run the steps in order: the runner's until one fails, the setup commands all (a failing
    one is noted, and the next runs), unless the session timeout comes first."""
    leftovers = 0
    setup_failed: int | None = None
    for step in steps:
        user: Literal["runner", "setup"] = "runner" if step.user == "runner" else "setup"
        with clock.timing(user):
            log.note(f"$ {step.argv[-1] if user == 'setup' else ' '.join(step.argv)}")
            code, left = run(step, log, deadline)
            leftovers += left
            _note_end(log, "setup", code, left, request.session_timeout_s)
            if code:
                what = "the test runner's installation" if user == "runner" else "setup command"
                log.note(f"{what} failed with exit code {code}")
        if code is None:
            return _Setup(leftovers, setup_failed, None, stopped=True)
        if code and user == "runner":
            return _Setup(leftovers, setup_failed, code, stopped=True)
        if code and setup_failed is None:
            setup_failed = code
    return _Setup(leftovers, setup_failed, None, stopped=False)


def _note_end(
    log: LogSink, phase: Phase, code: int | None, leftovers: int, session_timeout_s: float
) -> None:
    if leftovers:
        log.note(f"killed {leftovers} process(es) still running after the {phase} ended")
    if code is None:
        log.note(f"{phase} stopped at the session timeout ({session_timeout_s:g} s)")


def _result(
    started: float,
    clock: PhaseClock,
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
        phases=clock.phases(),
    )


def with_phases(result: ExecutionResult, clock: PhaseClock, started: float) -> ExecutionResult:
    """The result with the clock's phases and its duration, both up to now (what the executor
    timed after run_phases returned included)."""
    return dataclasses.replace(result, phases=clock.phases(), duration_s=time.monotonic() - started)
