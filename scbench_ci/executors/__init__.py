"""Where tests run. Each executor module exposes one class with the `Executor` shape."""

from __future__ import annotations

from collections.abc import Callable

from scbench_ci.errors import UsageError
from scbench_ci.executors.base import Executor
from scbench_ci.executors.docker.daemon import docker_available
from scbench_ci.executors.docker.executor import (
    DEFAULT_CPUS,
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    DEFAULT_PIDS_LIMIT,
    EVALUATION_CACHE_SCOPE,
    REVIEW_CACHE_SCOPE,
    DockerExecutor,
)
from scbench_ci.executors.local import LocalExecutor

EXECUTOR_NAMES = ("auto", "docker", "local")
__all__ = ["EVALUATION_CACHE_SCOPE", "REVIEW_CACHE_SCOPE", "make_executor"]
AUTO_FALLBACK_NOTICE = (
    "no Docker daemon answers: the tests run with the local executor, on this machine, without "
    "a container's isolation (start Docker or pass --executor docker to require it)"
)


def make_executor(
    name: str,
    *,
    warn: Callable[[str], None],
    image: str | None = None,
    memory: str = DEFAULT_MEMORY,
    cpus: float = DEFAULT_CPUS,
    pids_limit: int = DEFAULT_PIDS_LIMIT,
    disk: str = DEFAULT_DISK,
    use_cache: bool = True,
    test_network: bool = False,
    cache_scope: str = EVALUATION_CACHE_SCOPE,
) -> Executor:
    """`auto` is docker when a daemon answers, else local (said through `warn`)."""
    if name == "auto":
        name = "docker" if docker_available() else "local"
        if name == "local":
            warn(AUTO_FALLBACK_NOTICE)
    if name == "docker":
        return DockerExecutor(
            image,
            memory=memory,
            cpus=cpus,
            pids_limit=pids_limit,
            disk=disk,
            use_cache=use_cache,
            test_network=test_network,
            cache_scope=cache_scope,
        )
    if name == "local":
        return LocalExecutor()
    raise UsageError(f"--executor: unknown executor {name!r} (one of {', '.join(EXECUTOR_NAMES)})")
