"""The executor backends, registered by name: what `--executor` takes, each one's settings (their
flags, inputs and keywords), and the executor made from them.

A backend is its module, which makes its executor (`make(settings, cache_scope)`), and its line in
BACKENDS; settings of its own are a frozen dataclass of `settings.setting` fields with the methods
of ExecutorSettings. The module is imported only when its executor is made, so what needs only the
names and the settings (the options, the CLI's flags) loads neither it nor Docker's SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from scbench_ci.executors.base import EVALUATION_CACHE_SCOPE
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.settings import Setting, declarations
from scbench_ci.foundation.option_values import choice
from scbench_ci.foundation.scbench_runner import ScbenchRunner

if TYPE_CHECKING:
    from scbench_ci.executors.base import Executor


class ExecutorSettings(Protocol):
    """A backend's settings, and what they say to the rest of a run."""

    def fingerprinted(self, executor: str, scbench: ScbenchRunner) -> dict[str, object]:
        """What a run by `executor` adds to what `--skip-existing` compares: its name and the
        settings that can change a result, under `executor`, and whatever else of its own can."""
        ...

    def can_cut_network(self) -> bool:
        """Whether the tests have the network and the executor can cut it after setup, for a
        run that asks (`ExecutionRequest.cut_network`): `check` then runs a reference solution
        once more without it."""
        ...

    def cluster_cpus(self) -> float | None:
        """On a Ray cluster (`--engine ray`): the CPUs each run's task asks for; None: its runs
        are not placed on a cluster's nodes."""
        ...


@dataclass(frozen=True)
class NoSettings:
    """A backend with no settings of its own: no network to cut, no place on a cluster."""

    def fingerprinted(self, executor: str, scbench: ScbenchRunner) -> dict[str, object]:
        return {"executor": {"executor": executor}}

    def can_cut_network(self) -> bool:
        return False

    def cluster_cpus(self) -> float | None:
        return None


class _BackendModule(Protocol):
    def make(self, settings: Any, cache_scope: str) -> Executor: ...


@dataclass(frozen=True)
class Backend:
    """One backend's registration: all the rest of the package knows of it."""

    name: str
    """As `--executor` takes it."""
    module: str
    """The module that makes its executor: `make(settings, cache_scope)`."""
    summary: str
    """What it is, in `--executor`'s help."""
    settings: type = NoSettings
    """Its settings' type (ExecutorSettings), whose fields declare their options."""
    notice: str | None = None
    """Said through `warn` each time its executor is made."""

    def declarations(self) -> tuple[Setting, ...]:
        return tuple(declared for _, declared in declarations(self.settings))

    def make_settings(self, values: Mapping[str, Any]) -> ExecutorSettings:
        """Its settings: those of `values` (by setting name) that are its own, the others their
        defaults."""
        own = {name: values[name] for name, _ in declarations(self.settings) if name in values}
        return cast(ExecutorSettings, self.settings(**own))


LOCAL_NOTICE = (
    "--executor local: the tests run on this machine, as your user, without a container's "
    "isolation or limits (use it only for code you trust)"
)
BACKENDS = (
    Backend(
        "docker",
        "scbench_ci.executors.docker.executor",
        "a container with limits; no daemon is exit 3, never a run on the host",
        DockerSettings,
    ),
    Backend(
        "local",
        "scbench_ci.executors.local",
        "this machine, as you, WITHOUT ISOLATION: only for code you trust",
        notice=LOCAL_NOTICE,
    ),
)
EXECUTOR_NAMES = tuple(backend.name for backend in BACKENDS)
EXECUTOR_SUMMARIES = " or ".join(f"{backend.name} ({backend.summary})" for backend in BACKENDS)
DEFAULT_EXECUTOR = "docker"
DOCKER_ALIAS = "auto"
"""Accepted for `docker`: it once meant docker when a daemon answers and the local executor
otherwise; nothing now runs on the host unless the user names `local`."""
EXECUTOR_SETTINGS = tuple(declared for backend in BACKENDS for declared in backend.declarations())
"""Every backend's settings, each an option, in BACKENDS' order."""


def executor_name(option: str, value: str) -> str:
    """One of EXECUTOR_NAMES (DOCKER_ALIAS is docker)."""
    return "docker" if value == DOCKER_ALIAS else choice(option, value, EXECUTOR_NAMES)


def backend(name: str) -> Backend:
    """The backend `name` names (`executor_name`)."""
    chosen = executor_name("--executor", name)
    return next(one for one in BACKENDS if one.name == chosen)


def each_executors_settings(values: Mapping[str, Any] | None = None) -> dict[str, ExecutorSettings]:
    """Each backend's settings, by its name: the `values` given by setting name, the others
    their defaults."""
    return {one.name: one.make_settings(values or {}) for one in BACKENDS}


def make_executor(
    name: str,
    settings: ExecutorSettings,
    warn: Callable[[str], None],
    cache_scope: str = EVALUATION_CACHE_SCOPE,
) -> Executor:
    """The executor `name` names, with its `settings`; its notice, if any, through `warn`."""
    chosen = backend(name)
    if chosen.notice is not None:
        warn(chosen.notice)
    module = cast(_BackendModule, importlib.import_module(chosen.module))
    return module.make(settings, cache_scope)
