"""The code-quality measure in a run's container, after the tests: scb-check, as the tests user
under the run's limits, on the submission's files as staged (QUALITY_SOURCE, copied in before
any of its code ran), with a time limit of its own, started as quality_command says; its output
taken as bytes, or why there is none. Nothing here fails the run: every failure is a reason.
"""

from __future__ import annotations

import contextlib
import time

import requests
from docker.errors import DockerException
from docker.models.containers import Container

from scbench_ci.executors.base import (
    MAX_QUALITY_OUTPUT_BYTES,
    QUALITY_CPU_S,
    QUALITY_PYTHON,
    SCB_CHECK,
    QualityRun,
    cpu_limited,
    reported,
    timed_out,
)
from scbench_ci.executors.child_env import run_environment
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker.cache import Cached
from scbench_ci.executors.docker.cache_build import (
    CACHE_MOUNTS,
    cached_venv,
    complete_file,
    pycache_prefix,
    venv_install,
)
from scbench_ci.executors.docker.container_layout import (
    HOME_DIR,
    QUALITY_DIR,
    QUALITY_SOURCE,
    QUALITY_VENV,
    RUNNER_USER,
)
from scbench_ci.executors.docker.exec import run_captured, run_own
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.quality_command import launcher_argv, scb_check_arguments
from scbench_ci.foundation.errors import InfrastructureError


def install_steps() -> list[list[str]]:
    """Without caches: scb-check into the run's own volume, as the runner, before the network
    is cut (on the image's Python 3.12; none is downloaded)."""
    return venv_install(QUALITY_VENV, (SCB_CHECK,), QUALITY_PYTHON)


def measure(
    container: Container,
    environment: Cached | str,
    user: str,
    path: str,
    timeout_s: float,
    log: LogSink,
    staged: tuple[str, ...],
) -> QualityRun:
    """scb-check's report on the staged submission, or why there is none. `environment` is the
    cached one, or QUALITY_VENV when it is the run's own (installed by `install_steps`), or why
    there is none; `staged`: the submission's source files as staged."""
    started = time.monotonic()
    try:
        report, reason = _measure(container, environment, user, path, timeout_s, log)
    except (DockerException, requests.RequestException, InfrastructureError) as error:
        report, reason = None, f"the container could not run scb-check ({_first_line(error)})"
    seconds = round(time.monotonic() - started, 3)
    if reason is not None:
        log.note(f"no quality measure: {reason}")
    return QualityRun(report, reason, seconds, staged=staged)


def _measure(
    container: Container,
    environment: Cached | str,
    user: str,
    path: str,
    timeout_s: float,
    log: LogSink,
) -> tuple[bytes | None, str | None]:
    bytecode: dict[str, str] = {}
    if isinstance(environment, Cached):
        venv = cached_venv(environment.kind)
        bytecode = {"PYTHONPYCACHEPREFIX": pycache_prefix(environment.kind)}
        check = f'[ "$(cat {complete_file(CACHE_MOUNTS[environment.kind])})" = {environment.key} ]'
        whole, _ = run_own(container, ["/bin/sh", "-c", check], RUNNER_USER)
        if whole != 0:
            assert container.client is not None, "a container from a client keeps it"
            docker_cache.forget(container.client, environment.marker)
            return None, "the cached scb-check environment is not whole (it is removed)"
    elif environment == QUALITY_VENV:
        venv = QUALITY_VENV
    else:
        return None, environment
    env = run_environment(path=path, home=HOME_DIR, extra=bytecode, variables={})
    log.note(
        f"$ scb-check {' '.join(scb_check_arguments(QUALITY_SOURCE))}  ({venv}, its rules read "
        f"with libyaml; at most {QUALITY_CPU_S} s of CPU time a process)"
    )
    argv = cpu_limited(launcher_argv([f"{venv}/bin/python"], QUALITY_SOURCE))
    code, stdout, stderr = run_captured(
        container, argv, env, user, QUALITY_DIR, timeout_s, MAX_QUALITY_OUTPUT_BYTES
    )
    log.write(stderr)
    if code is None:
        return None, timed_out(timeout_s)
    return reported(code, stdout, stderr)


def _first_line(error: Exception) -> str:
    with contextlib.suppress(Exception):
        return str(error).strip().splitlines()[0]
    return type(error).__name__
