"""Where tests run. Each executor module exposes one class with the `Executor` shape."""

from __future__ import annotations

from scbench_ci.errors import UsageError
from scbench_ci.executors.base import Executor
from scbench_ci.executors.local import LocalExecutor

EXECUTOR_NAMES = ("local",)


def make_executor(name: str) -> Executor:
    if name == "local":
        return LocalExecutor()
    raise UsageError(f"--executor: unknown executor {name!r} (one of {', '.join(EXECUTOR_NAMES)})")
