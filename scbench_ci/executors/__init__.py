"""Where tests run. Each executor module exposes one class with the `Executor` shape."""

from __future__ import annotations

from collections.abc import Callable

from scbench_ci.errors import UsageError
from scbench_ci.executors.base import Executor
from scbench_ci.executors.docker.daemon import docker_available
from scbench_ci.executors.docker.executor import (
    EVALUATION_CACHE_SCOPE,
    REVIEW_CACHE_SCOPE,
    DockerExecutor,
)
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.local import LocalExecutor

EXECUTOR_NAMES = ("auto", "docker", "local")
__all__ = ["EVALUATION_CACHE_SCOPE", "REVIEW_CACHE_SCOPE", "make_executor"]
AUTO_FALLBACK_NOTICE = (
    "no Docker daemon answers: the tests run with the local executor, on this machine, without "
    "a container's isolation (start Docker or pass --executor docker to require it)"
)


def make_executor(
    name: str,
    settings: DockerSettings,
    warn: Callable[[str], None],
    cache_scope: str = EVALUATION_CACHE_SCOPE,
) -> Executor:
    """`auto` is docker when a daemon answers, else local (said through `warn`)."""
    if name == "auto":
        name = "docker" if docker_available() else "local"
        if name == "local":
            warn(AUTO_FALLBACK_NOTICE)
    if name == "docker":
        return DockerExecutor(settings, cache_scope=cache_scope)
    if name == "local":
        return LocalExecutor()
    raise UsageError(f"--executor: unknown executor {name!r} (one of {', '.join(EXECUTOR_NAMES)})")
