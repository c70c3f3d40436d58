"""What a run's phases do in its container: each step as its user, what happens between setup
and the tests, what the tests left, and the quality measure's installation. The executor gives
these to the phases (`phases.Plan`); the order and the timing are the phases'."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from docker.errors import APIError
from docker.models.containers import Container

from scbench_ci.executors.base import QUALITY_INSTALL_TIMEOUT_S
from scbench_ci.executors.child_env import index_variables, run_environment
from scbench_ci.executors.docker import quality
from scbench_ci.executors.docker.cache import RUNNER, Cached
from scbench_ci.executors.docker.cache_build import cached_venv, pycache_prefix
from scbench_ci.executors.docker.cache_use import (
    Caches,
    FirstBytes,
    reject_unchecked,
    restore_dependencies,
    run_checked,
)
from scbench_ci.executors.docker.container_layout import (
    CONTAINER_PATH,
    QUALITY_VENV,
    RUNNER_DIR,
    RUNNER_HOME,
    RUNNER_USER,
    RUNNER_UV_CACHE_DIR,
    RUNNER_VENV,
    TestsPlace,
)
from scbench_ci.executors.docker.exec import disconnect, run, run_captured
from scbench_ci.executors.docker.transfer import Collected, after_tests
from scbench_ci.executors.docker.warm_runner import WarmRunner
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import Step
from scbench_ci.standalone.pytest_runner import SEAL_KEY_VARIABLE


def runner_environment() -> dict[str, str]:
    """The runner user's environment: its own home and uv cache, the package index of this
    machine's."""
    return run_environment(
        path=CONTAINER_PATH,
        home=RUNNER_HOME,
        extra={**index_variables(os.environ), "UV_CACHE_DIR": RUNNER_UV_CACHE_DIR},
        variables={},
    )


def runner_python(
    cached: Cached | None, requirements: tuple[str, ...]
) -> tuple[list[str], tuple[list[str], ...]]:
    """The test runner's Python command, and the steps that install it when it is not cached."""
    if cached is not None:
        # pytest_runner leaves the prefix once pytest is imported.
        prefix = pycache_prefix(RUNNER)
        return [f"{cached_venv(RUNNER)}/bin/python", "-X", f"pycache_prefix={prefix}"], ()
    python = [f"{RUNNER_VENV}/bin/python"]
    install = (
        ["uv", "venv", "--quiet", RUNNER_VENV],
        ["uv", "pip", "install", "--quiet", "--python", *python, *requirements],
    )
    return python, install


@dataclass(frozen=True)
class ContainerSteps:
    container: Container
    caches: Caches
    place: TestsPlace
    tests_env: dict[str, str]
    runner_env: dict[str, str]
    setup_log: LogSink
    deadline: float
    cut_network: bool
    """Whether the network is cut between setup and the tests."""
    collected: list[Collected]
    """Where `after_tests_ran` puts what it found (at most one)."""
    quality_env: list[Cached | str]
    """One item: the measure's environment, or why there is none; `install_quality` sets it."""
    warm: WarmRunner | None = None
    """The tests' process, started with the container and waiting for its key."""
    restored: bool = False
    """Whether the cached dependencies went in with the workspace (else `before_tests` copies
    them)."""

    def run_step(self, step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
        if step.user == "runner":
            env, user, workdir = self.runner_env, RUNNER_USER, RUNNER_DIR
        else:
            env = {**self.tests_env, **step.extra_env}
            user, workdir = self.place.user, self.place.workdir
        if step.tests and self.warm is not None and self.caches.runner is not None:
            if self.warm.waiting():
                seen = FirstBytes(log)
                code = self.warm.go(step.extra_env[SEAL_KEY_VARIABLE], seen, deadline)
                reject_unchecked(self.caches.runner, code, seen)
                return code, 0
            self.warm.stop_before_another()  # ended (the memory limit, say): started as usual
        if step.tests and self.caches.runner is not None:
            # Only the check could print first: the runner's start line comes before anything
            # of the submission's.
            return run_checked(
                self.container,
                self.caches.runner,
                step.argv,
                env,
                user,
                workdir,
                log,
                deadline,
                kill_leftovers=False,
            )
        return run(
            self.container,
            step.argv,
            env,
            user,
            workdir,
            log,
            deadline,
            kill_leftovers=not step.tests,
        )

    def before_tests(self) -> None:
        if self.caches.dependencies is not None and not self.restored:
            restore_dependencies(
                self.container,
                self.caches.dependencies,
                self.tests_env,
                self.setup_log,
                self.deadline,
            )
        if self.cut_network:
            disconnect(self.container)

    def after_tests_ran(self) -> int:
        try:
            killed, found = after_tests(self.container, self.place)
        except APIError:  # the container is gone (its idle process was killed, say)
            return 0
        self.collected.append(found)
        return killed

    def install_quality(self) -> None:
        log = self.setup_log
        left = max(0.0, min(QUALITY_INSTALL_TIMEOUT_S, self.deadline - time.monotonic()))
        for argv in quality.install_steps():
            log.note(f"$ {' '.join(argv)}")
            code, out, err = run_captured(
                self.container, argv, self.runner_env, RUNNER_USER, RUNNER_DIR, left, 64 * 1024
            )
            log.write(out + err)
            if code != 0:
                failed = "its time limit" if code is None else f"exit code {code}"
                self.quality_env[0] = f"scb-check could not be installed ({failed}; see setup.log)"
                return
        self.quality_env[0] = QUALITY_VENV
