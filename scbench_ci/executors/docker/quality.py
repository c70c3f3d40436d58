"""The code-quality measure in a run's container, after the tests: scb-check, as the tests user
under the run's limits, on the submission's files as staged (QUALITY_SOURCE, copied in before
any of its code ran), with a time limit of its own; its report taken as bytes, or why there is
none. Nothing here fails the run: every failure is a reason.
"""

from __future__ import annotations

import contextlib
import re
import time

import requests
from docker.errors import DockerException
from docker.models.containers import Container

from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.base import (
    MAX_QUALITY_REPORT_BYTES,
    QUALITY_PYTHON,
    QUALITY_TIMEOUT_S,
    SCB_CHECK,
    QualityRun,
)
from scbench_ci.executors.child_env import run_environment
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker.cache import Cached
from scbench_ci.executors.docker.cache_build import CACHE_MOUNTS, complete_file, venv_install
from scbench_ci.executors.docker.exec import run_captured, run_own
from scbench_ci.executors.docker.layout import (
    HOME_DIR,
    QUALITY_DIR,
    QUALITY_SOURCE,
    QUALITY_VENV,
    RUNNER_USER,
)
from scbench_ci.executors.output import LogSink

_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
REPORTED = (0, 1)
"""scb-check's exit codes with a report: 1 says it found something to flag."""


def install_steps() -> list[list[str]]:
    """Without caches: scb-check into the run's own volume, as the runner, before the network
    is cut (on the image's Python 3.12; none is downloaded)."""
    return venv_install(QUALITY_VENV, (SCB_CHECK,), QUALITY_PYTHON)


def measure(
    container: Container,
    environment: Cached | str,
    user: str,
    path: str,
    log: LogSink,
) -> QualityRun:
    """scb-check's report on the staged submission, or why there is none. `environment` is the
    cached one, or QUALITY_VENV when it is the run's own (installed by `install_steps`), or why
    there is none."""
    started = time.monotonic()
    try:
        report, reason = _measure(container, environment, user, path, log)
    except (DockerException, requests.RequestException, InfrastructureError) as error:
        report, reason = None, f"the container could not run scb-check ({_first_line(error)})"
    seconds = round(time.monotonic() - started, 3)
    if reason is not None:
        log.note(f"no quality measure: {reason}")
    return QualityRun(report, reason, seconds)


def _measure(
    container: Container, environment: Cached | str, user: str, path: str, log: LogSink
) -> tuple[bytes | None, str | None]:
    if isinstance(environment, Cached):
        venv = f"{CACHE_MOUNTS[environment.kind]}/env/venv"
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
    env = run_environment(path=path, home=HOME_DIR, extra={}, variables={})
    argv = [f"{venv}/bin/scb-check", "check", QUALITY_SOURCE, "--report"]
    log.note(f"$ {' '.join(argv)}")
    code, stdout, stderr = run_captured(
        container, argv, env, user, QUALITY_DIR, QUALITY_TIMEOUT_S, MAX_QUALITY_REPORT_BYTES
    )
    log.write(stderr)
    if code is None:
        return None, f"scb-check did not finish within its time limit ({QUALITY_TIMEOUT_S:g} s)"
    if code not in REPORTED:
        said = _last_line(stderr)
        return None, f"scb-check failed with exit code {code}" + (f": {said}" if said else "")
    if len(stdout) > MAX_QUALITY_REPORT_BYTES:
        return None, f"scb-check's report is larger than {MAX_QUALITY_REPORT_BYTES} bytes"
    return stdout, None


def _last_line(text: bytes) -> str:
    """The last line scb-check printed, as printable text of at most 200 characters."""
    lines = _COLOURS.sub("", text.decode(errors="replace")).strip().splitlines()
    last = "".join(ch if ch.isprintable() else " " for ch in lines[-1]) if lines else ""
    return last if len(last) <= 200 else f"{last[:197]}..."


def _first_line(error: Exception) -> str:
    with contextlib.suppress(Exception):
        return str(error).strip().splitlines()[0]
    return type(error).__name__
