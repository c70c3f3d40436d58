"""Which executor a run uses: the names `--executor` takes, and the executor made from them.
Docker's SDK is loaded only when a Docker executor is made, so a module that needs a name (the
options, the CLI's flags) does not load it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scbench_ci.executors.base import EVALUATION_CACHE_SCOPE
from scbench_ci.foundation.option_values import choice

if TYPE_CHECKING:
    from scbench_ci.executors.base import Executor
    from scbench_ci.executors.docker.settings import DockerSettings

EXECUTOR_NAMES = ("docker", "local")
DEFAULT_EXECUTOR = "docker"
DOCKER_ALIAS = "auto"
"""Accepted for `docker`: it once meant docker when a daemon answers and the local executor
otherwise; nothing now runs on the host unless the user names `local`."""
LOCAL_NOTICE = (
    "--executor local: the tests run on this machine, as your user, without a container's "
    "isolation or limits (use it only for code you trust)"
)


def executor_name(option: str, value: str) -> str:
    """One of EXECUTOR_NAMES (DOCKER_ALIAS is docker)."""
    return "docker" if value == DOCKER_ALIAS else choice(option, value, EXECUTOR_NAMES)


def make_executor(
    name: str,
    settings: DockerSettings,
    warn: Callable[[str], None],
    cache_scope: str = EVALUATION_CACHE_SCOPE,
) -> Executor:
    """The executor `name` names; the local one says through `warn` that it does not isolate."""
    if executor_name("--executor", name) == "local":
        from scbench_ci.executors.local import LocalExecutor

        warn(LOCAL_NOTICE)
        return LocalExecutor()
    from scbench_ci.executors.docker.executor import DockerExecutor

    return DockerExecutor(settings, cache_scope=cache_scope)
