"""Where the jobs' runs take place: on this machine, by its executor (`--engine local`), or as
tasks on a Ray cluster, each run by the executor of the node it lands on (`--engine ray`).

Either way a job is staged, fingerprinted and judged here; only the run itself, sealed where it
runs (`executors/sealed.py`), is placed.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, TextIO

from scbench_ci.engines import load
from scbench_ci.engines.admission import AUTO, Admission, FixedCount, JobCount, make_admission
from scbench_ci.engines.ray_cluster import RayCluster
from scbench_ci.executors.base import ExecutionRequest, Executor
from scbench_ci.executors.choice import ExecutorSettings, backend, make_executor
from scbench_ci.executors.sealed import SealedRun, run_sealed
from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.scbench_runner import V1_0, ScbenchRunner
from scbench_ci.options import EvaluationOptions


class Placement(Protocol):
    @property
    def executor(self) -> Executor:
        """The executor the runs use (on a cluster: each node's own, set up alike)."""
        ...

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        """Once, before the first run: whether runs can take place at all; else
        InfrastructureError."""
        ...

    def admission(self, jobs: JobCount, count: int) -> Admission:
        """How many of `count` jobs run side by side."""
        ...

    def cores(self) -> int:
        """How many runs it holds at once, each busy on a core: this machine's cores, or the
        tasks the cluster's live nodes hold (`--shards auto`)."""
        ...

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """`runs` more runs are coming (None: an unknown number, until `close`), at most
        `side_by_side` at once (`Executor.expect`)."""
        ...

    def run(self, request: ExecutionRequest) -> SealedRun:
        """The request run and sealed where it is placed; InfrastructureError when it could
        not run."""
        ...

    def cancel(self) -> None:
        """From another thread: stop every run in progress; none starts after this."""
        ...

    def close(self) -> None:
        """Once no run is left: what the runs left to remove is removed when this returns."""
        ...

    def report(self) -> str | None:
        """A line on what placing the runs cost, for the run's log (None: nothing to say)."""
        ...


class OnThisMachine:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        self.executor.preflight(image, echo, scbench)

    def admission(self, jobs: JobCount, count: int) -> Admission:
        return make_admission(jobs, count, self.executor.memory_limit())

    def cores(self) -> int:
        return load.cores()

    def expect(self, runs: int | None, side_by_side: int) -> None:
        self.executor.expect(runs, side_by_side)

    def run(self, request: ExecutionRequest) -> SealedRun:
        return run_sealed(self.executor, request)

    def cancel(self) -> None:
        self.executor.cancel()

    def close(self) -> None:
        self.executor.close()

    def report(self) -> str | None:
        return None


@dataclass
class Traffic:
    """What the runs on a cluster cost beyond the runs themselves."""

    tasks: int = 0
    sent: int = 0
    """Bytes of workspace archives sent."""
    back: int = 0
    """Bytes of reports and logs sent back."""
    added_s: list[float] = field(default_factory=list)
    """Per task: its time seen from here less the node's own (packing, placing, moving)."""
    nodes: set[str] = field(default_factory=set)

    def line(self) -> str:
        return (
            f"Ray: {self.tasks} task(s) on {len(self.nodes)} node(s); "
            f"{_size(self.sent // self.tasks)} sent and {_size(self.back // self.tasks)} back a "
            f"task on average; Ray added {statistics.median(self.added_s):.2f} s a task (median)"
        )


class OnRayCluster:
    """Each run a task asking for `--cpus` CPUs. `--jobs auto` keeps as many in flight as the
    live nodes hold when the run starts; `--jobs N`, N (Ray queues what does not fit)."""

    def __init__(
        self, executor: Executor, settings: ExecutorSettings, cache_scope: str, cluster: RayCluster
    ) -> None:
        self.executor = executor
        self.settings = settings
        self.cache_scope = cache_scope
        self.cluster = cluster
        self.traffic = Traffic()
        self._counting = threading.Lock()

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        # Each node's Docker executor makes sure of its daemon and image as it runs a job.
        self.cluster.connect()
        self.cluster.check_placeable()

    def admission(self, jobs: JobCount, count: int) -> Admission:
        if jobs != AUTO:
            return FixedCount(max(1, min(jobs, count)))
        return FixedCount(max(1, min(self.cores(), count)))

    def cores(self) -> int:
        self.cluster.connect()
        return self.cluster.capacity()

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """Each node's executor runs one task at a time as it comes: nothing is made ahead."""

    def run(self, request: ExecutionRequest) -> SealedRun:
        from scbench_ci.executors.shipped import landed, run_shipped, ship

        started = time.monotonic()
        shipped = ship(request, self.executor.name, self.settings, self.cache_scope)
        outcome = self.cluster.call(run_shipped, shipped)
        added_s = max(0.0, time.monotonic() - started - outcome.seconds)
        with self._counting:
            self.traffic.tasks += 1
            self.traffic.sent += len(shipped.workspace)
            self.traffic.back += outcome.size()
            self.traffic.added_s.append(added_s)
            self.traffic.nodes.add(outcome.node)
        sealed = landed(outcome, request.log_dir)
        phases = {**sealed.execution.phases, "ray": added_s}
        return replace(sealed, execution=replace(sealed.execution, phases=phases))

    def cancel(self) -> None:
        self.cluster.cancel()

    def close(self) -> None:
        self.cluster.close()

    def report(self) -> str | None:
        return self.traffic.line() if self.traffic.tasks else None


def _size(count: int) -> str:
    return f"{count / 1024:.1f} KiB" if count < 1024**2 else f"{count / 1024**2:.1f} MiB"


UNAUTHENTICATED_RAY = (
    "--engine ray without Ray's token authentication (RAY_AUTH_MODE is not `token` here): a "
    "cluster that lets this driver join without a token lets anything that reaches its head "
    "run code on its nodes, an evaluation's setup among them (it has the network), and a node's "
    "Docker executor is root on its machine; turn on token authentication on the cluster and "
    "here, and keep its ports out of the containers' reach (SECURITY.md)"
)


def make_placement(
    options: EvaluationOptions, warn: Callable[[str], None], cache_scope: str
) -> Placement:
    settings = options.executor_settings
    if options.engine == "local":
        return OnThisMachine(make_executor(options.executor, settings, warn, cache_scope))
    cpus = settings.cluster_cpus()
    if cpus is None:
        raise UsageError(
            "--engine ray runs the tests with each node's Docker executor: "
            f"--executor {backend(options.executor).name} cannot be used with it"
        )
    if os.environ.get("RAY_AUTH_MODE") != "token":
        warn(UNAUTHENTICATED_RAY)
    executor = make_executor(options.executor, settings, warn, cache_scope)
    cluster = RayCluster(options.ray_address, cpus)
    return OnRayCluster(executor, settings, cache_scope, cluster)
