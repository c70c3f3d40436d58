"""Run setup and tests in a throwaway Docker container, under limits, as users that cannot touch
what decides the verdict.

Nothing on this machine is mounted into the container: the workspace goes in as a tar archive and
`.scbench/` comes back out as one, so this works as well from a container that talks to the host's
daemon (a GitHub Docker action), where this machine's paths mean nothing to the daemon.

Inside, the image is read-only; everything a run writes lives in a size-capped in-memory volume of
its own (`/scbench`) or in `/tmp` (capped alike), and is gone with the container. Three users:

- the runner (uid 1001) owns the test runner's environment (pytest and its plugins), the problem's
  tests, `pytest.ini` and the workspace folder itself, which the tests user may add to but not
  rename, replace or change;
- the tests user (1000:1000, or the environment file's `docker.user`) runs setup and the tests,
  in the workspace (`/workspace`, or its `docker.workdir`);
- the idle process the container lives on runs as nobody, so the tests cannot kill it.

What outlives a run are named volumes (`docker_cache`): the uv cache the runner installs from
(only the runner can write it), and environments built once and mounted read-only into later
runs: the test runner's, and what SCBench's default setup makes of a requirements.txt. Without
them (`use_cache=False`, or when one cannot be had) the runner installs pytest into the run's
volume and the setup commands run, as they always did. The network is cut after setup unless the
tests are allowed it and the request does not ask for the cut (`check`'s run that finds the tests
that reach it); a run with nothing to install never has one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import docker
import requests
from docker.errors import DockerException
from docker.models.containers import Container
from docker.utils import parse_bytes

from scbench_ci.executors import processes
from scbench_ci.executors.base import (
    EVALUATION_CACHE_SCOPE,
    ExecutionRequest,
    ExecutionResult,
    ImageRecord,
    QualityRun,
)
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker import image_build, quality
from scbench_ci.executors.docker.cache import Cached
from scbench_ci.executors.docker.cache_use import (
    CacheRejected,
    Caches,
    checked,
    obtain_caches,
    restore_notice,
    restored_entries,
)
from scbench_ci.executors.docker.cleanup import remove_leftovers
from scbench_ci.executors.docker.container import Containers, confinement
from scbench_ci.executors.docker.container_layout import (
    RUNNER_SCRIPT,
    WORKSPACE_DIR,
    TestsPlace,
)
from scbench_ci.executors.docker.daemon import connect, docker_errors, ensure_image
from scbench_ci.executors.docker.disk import FreeDisk, tmpfs_limits
from scbench_ci.executors.docker.exec import tests_environment
from scbench_ci.executors.docker.image_build import EvaluationImage
from scbench_ci.executors.docker.image_recipe import recipe
from scbench_ci.executors.docker.image_versions import image_facts, image_path
from scbench_ci.executors.docker.network import routes_failed, run_network
from scbench_ci.executors.docker.pool import ContainerPool, Prepared, Shape, prepare
from scbench_ci.executors.docker.settings import DEFAULT_DISK, DockerSettings
from scbench_ci.executors.docker.steps import ContainerSteps, runner_environment, runner_python
from scbench_ci.executors.docker.transfer import (
    Collected,
    StagedTooLarge,
    collect_now,
    copy_workspace,
    write_reports,
)
from scbench_ci.executors.docker.warm_runner import WarmStart
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhaseClock, PhasePlan, run_phases, with_phases
from scbench_ci.executors.quality_command import staged_sources
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import QUALITY_LOG, REPORTS_DIR, SETUP_LOG
from scbench_ci.foundation.scbench_runner import V1_0, ScbenchRunner
from scbench_ci.standalone import pytest_runner
from scbench_ci.standalone.pytest_runner import KEY_FROM_STDIN, SEAL_KEY_VARIABLE

MIN_RUN_MEMORY_BYTES = 64 * 1024**2
"""What a run keeps of its memory limit for its processes, whatever its files take: less, and
the test runner could not start (the run is refused, as a fail of the submission's)."""


def make(settings: DockerSettings, cache_scope: str) -> DockerExecutor:
    """The Docker backend's executor (`executors/choice.py`)."""
    return DockerExecutor(settings, cache_scope=cache_scope)


class DockerExecutor:
    name = "docker"

    def __init__(
        self,
        settings: DockerSettings,
        *,
        cache_scope: str = EVALUATION_CACHE_SCOPE,
    ) -> None:
        """`cache_scope`: who may share the cached environments; `check` of a problem under
        review builds its own (REVIEW_CACHE_SCOPE), apart from the evaluations'."""
        self.settings = settings
        self._free_disk = FreeDisk()
        self.cache_scope = cache_scope
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._pool: ContainerPool | None = None
        self._client: docker.DockerClient | None = None
        """The client of the pool's runs, kept until `close` (made when first used)."""
        self._checked: set[tuple[str | None, str]] = set()
        """The images whose pre-flight passed: not checked again while this executor lives."""
        self._restores: dict[tuple[str, str], bytes] = {}
        """What restoring a dependency environment without finishing it puts into the
        workspace (`cache_use.restored_entries`), by its volume and key, as read once."""

    def cancel(self) -> None:
        """Kill every container this process made (its runs, the prepared ones and cache
        builds): their steps end, and each run removes its container as it always does."""
        self._cancelled.set()
        failures = (DockerException, requests.RequestException, InfrastructureError)
        with contextlib.suppress(*failures), contextlib.closing(connect()) as client:
            mine = f"{processes.OWNER_LABEL}={processes.owner()}"
            for container in client.containers.list(ignore_removed=True, filters={"label": mine}):
                with contextlib.suppress(*failures):
                    container.kill()

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """From now on, containers are made ahead of the runs (`pool.py`): `runs` more are
        coming (None: an unknown number, until `close`), at most `side_by_side` at once; and the
        executor keeps its Docker client until `close`."""
        with self._lock:
            if self._pool is None:
                self._pool = ContainerPool(self._pool_containers)
            self._pool.expect(runs, side_by_side)

    def close(self) -> None:
        """Remove the containers made ahead and not used, and wait for every removal; then the
        client goes. After `cancel`, whatever else of this process's is left (a helper whose
        creation a signal cut short, finished by the daemon after its removal was asked) goes
        too, by its owner label."""
        with self._lock:
            pool = self._pool
        try:
            if pool is not None:
                pool.close()
        finally:
            with self._lock:
                self._pool = None
                client, self._client = self._client, None
            if client is not None:
                client.close()
            if self._cancelled.is_set():
                self._remove_own()

    @staticmethod
    def _remove_own() -> None:
        failures = (DockerException, requests.RequestException, InfrastructureError)
        with contextlib.suppress(*failures):
            remove_leftovers(
                owner=processes.owner(),
                everything=False,
                volumes=False,
                unused_for_s=0.0,
                remove=True,
                say=lambda line: None,
            )

    @contextlib.contextmanager
    def _connected(self) -> Iterator[docker.DockerClient]:
        """The kept client when there is a pool, else one of this call's own."""
        with docker_errors():
            if self._pool is None:
                with contextlib.closing(connect()) as client:
                    yield client
                return
            with self._lock:
                if self._client is None:
                    self._client = connect()
                client = self._client
            yield client

    def _pool_containers(self, shape: Shape) -> Containers:
        with self._connected() as client:
            return self._containers(client, shape.image, shape.path, shape.network_mode)

    def workspace_dir(self, workspace: Path) -> str:
        return WORKSPACE_DIR

    def memory_limit(self) -> int:
        return int(parse_bytes(self.settings.memory))

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        if (image, scbench.image_recipe) in self._checked:
            return
        with self._connected() as client:
            self._image(client, image, echo, scbench.image_recipe)
        self._checked.add((image, scbench.image_recipe))

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        started = time.monotonic()
        clock = PhaseClock()
        with self._connected() as client:
            with clock.timing("image"):
                recipe_name = request.scbench.image_recipe
                image = self._image(client, request.image, request.echo, recipe_name)
                facts = image_facts(client, image.id, image_path(client, image.reference))
            record = ImageRecord(
                name=image.name,
                id=image.id,
                built_from=image.built_from,
                toolchains=image.toolchains,
                note=image.note,
                versions=dict(facts.versions),
                missing=recipe(recipe_name).missing(facts.programs),
            )
            image_id = image.id
            # The tests' network: the environment file's as it is, else the runs' own, from
            # whose containers the host's addresses are cut when the image has python3.
            blocked: tuple[str, ...] = ()
            unrouted = None
            if request.network is not None:
                network = request.network
            else:
                network, blocked = run_network(client)
                if "python" not in facts.versions:
                    blocked = ()
                    unrouted = "the image has no python3: the host's addresses are not cut from "
                    unrouted += "the tests' network"
            # The session's clock starts once the image is here: a pull is not the run's.
            deadline = time.monotonic() + request.session_timeout_s
            containers = self._containers(client, image.reference, facts.path, network, blocked)
            with LogSink(request.log_dir / SETUP_LOG, request.echo, setup=True) as setup_log:
                caches = Caches()
                if self.settings.use_cache:
                    caches = obtain_caches(
                        containers,
                        image_id,
                        request,
                        setup_log,
                        deadline,
                        clock,
                        scope=self.cache_scope,
                        stdlib_folder=facts.stdlib,
                        max_bytes=int(parse_bytes(self.settings.cache_size)),
                    )
                    # Building the quality measure's environment is not the session's time.
                    deadline += clock.phases().get("quality", 0.0)
                if record.note:
                    setup_log.note(f"image {record.name}: {record.note}")
                if unrouted:
                    setup_log.note(unrouted)
                attempt = _Attempt(
                    containers, image_id, request, setup_log, deadline, clock, started
                )
                try:
                    result = self._attempt(attempt, caches)
                except CacheRejected as rejected:
                    docker_cache.forget(client, rejected.cached.marker, rejected.cached.data_volume)
                    setup_log.note(f"{rejected}: it is removed, and this run does without caches")
                    result = self._attempt(attempt, Caches())
                return dataclasses.replace(result, image=record)

    def _image(
        self,
        client: docker.DockerClient,
        requested: str | None,
        echo: TextIO | None,
        recipe_name: str,
    ) -> EvaluationImage:
        """`--image` as it is; else the recipe's evaluation layer on the environment file's
        image, as SCBench builds it; else the recipe's evaluation image."""
        if self.settings.image:
            image_id = ensure_image(client, self.settings.image, echo)
            return EvaluationImage(self.settings.image, self.settings.image, image_id)
        if requested:
            return image_build.on_base(client, requested, echo, recipe(recipe_name))
        return image_build.default_image(client, echo, recipe(recipe_name))

    def _containers(
        self,
        client: docker.DockerClient,
        image: str,
        path: str,
        network: str | None,
        blocked: tuple[str, ...] = (),
    ) -> Containers:
        """How the run's containers are made: confined by the limits, their folders as large as
        `--disk`, or with `auto` as the free space of Docker's disk, so a program that checks it
        sees what it would under SCBench."""
        confined = confinement(self.settings.memory, self.settings.cpus, self.settings.pids_limit)

        def folder_limits() -> str:
            if self.settings.disk == DEFAULT_DISK:
                return tmpfs_limits(self._free_disk.measure(client, image, confined))
            return tmpfs_limits(int(parse_bytes(self.settings.disk)))

        return Containers(client, image, confined, folder_limits, path, network, blocked)

    def _attempt(self, attempt: _Attempt, caches: Caches) -> ExecutionResult:
        """One container's run; CacheRejected before any of the submission's code ran when a
        cached environment, mounted, turns out not to be whole."""
        containers, request, clock = attempt.containers, attempt.request, attempt.clock
        if self._cancelled.is_set():
            raise InfrastructureError("the evaluation was cancelled")
        installs = caches.runner is None or (
            bool(request.setup_commands) and caches.dependencies is None
        )
        # Nothing to install: the container never has a network (loopback only).
        online = installs or (self.settings.test_network and not request.cut_network)
        place = TestsPlace(request.tests_user, request.workdir)
        tests = _TestsStart(
            *runner_python(caches.runner, request.command.requirements),
            tests_environment(request.command.variables, containers.path),
        )
        test_argv = request.command.runner_argv(
            tests.python, RUNNER_SCRIPT, pytest_runner.KILL_OTHERS
        )
        shape = Shape(
            image=containers.image,
            image_id=attempt.image_id,
            path=containers.path,
            caches=caches,
            network_mode=containers.network if online else "none",
            place=place,
            installs_runner=caches.runner is None,
            blocked=containers.blocked if online else (),
            warm=_warm_start(caches, request, test_argv, tests.env, place),
        )
        pool = self._pool
        prepared: Prepared | None = None
        try:
            with clock.timing("container"):
                prepared = pool.take(shape) if pool is not None else prepare(containers, shape)
                container = prepared.container
            restored = None
            if caches.dependencies is not None and not caches.dependencies.finish:
                with clock.timing("setup"):
                    restored = self._restored(container, caches.dependencies, place)
            with clock.timing("container"):
                refused = self._stage(container, request, place, restored)
            if refused is not None:
                nothing_ran = ExecutionResult(None, None, None, 0.0, refused=refused)
                return with_phases(nothing_ran, clock, attempt.started)
            if shape.blocked and (failed := routes_failed(container)) is not None:
                attempt.setup_log.note(
                    f"the host's addresses could not be cut from the tests' network: {failed}"
                )
            if caches.dependencies is not None:
                attempt.setup_log.note(restore_notice(caches.dependencies))
            collected: list[Collected] = []
            # The quality measure's environment: the cached one, or the run's own once
            # installed (or why not).
            quality_env: list[Cached | str] = [
                caches.quality
                if caches.quality is not None
                else "scb-check was not installed: the run stopped before"
            ]
            plan = self._plan(
                prepared,
                attempt,
                caches,
                online,
                tests,
                test_argv,
                _Collecting(collected, quality_env, restored is not None),
            )
            result = run_phases(request, plan, attempt.started)
            with clock.timing("collect"):
                reports = request.workspace / REPORTS_DIR
                shutil.rmtree(reports, ignore_errors=True)
                reports.mkdir()
                found = collected[0] if collected else collect_now(container, place)
                if found is not None:
                    write_reports(found, reports, request.echo)
                    hit = self._limits_hit(found.counters, place.workdir)
                    result = dataclasses.replace(result, limits_hit=hit)
            if request.quality:
                with clock.timing("quality"):
                    quality = self._quality(container, result, quality_env[0], attempt, place)
                result = dataclasses.replace(result, quality=quality)
        except CacheRejected:
            # Gone before its cache volume is forgotten, with the containers prepared with it.
            if pool is not None:
                pool.drop(shape)
            pool = None
            raise
        finally:
            # Also on KeyboardInterrupt and SystemExit (`prepare` removes what it made when it
            # is cut short). With a pool, off the run's path: the pool's close waits for it.
            if prepared is not None:
                with clock.timing("cleanup"):
                    if pool is not None:
                        pool.remove(prepared)
                    else:
                        containers.remove(prepared.name, volumes=True)
        return with_phases(result, clock, attempt.started)

    def _stage(
        self,
        container: Container,
        request: ExecutionRequest,
        place: TestsPlace,
        restored: bytes | None,
    ) -> str | None:
        """The workspace (the `restored` dependency environment's entries with it, and the
        quality measure's copy) into the container, and its memory
        limit lowered by what they take: the daemon unpacks them into the run's in-memory
        folders, so its cgroup, not the container's, would be charged for them. Why the run
        cannot start, when they leave less than MIN_RUN_MEMORY_BYTES of the limit."""
        memory = self.memory_limit()
        try:
            staged = copy_workspace(
                container,
                request.workspace,
                place,
                quality_source=request.quality,
                room=memory - MIN_RUN_MEMORY_BYTES,
                restored=restored,
            )
        except StagedTooLarge as too_large:
            copies = "twice: for the tests and the quality measure" if request.quality else "once"
            return (
                f"the workspace's files take {_mib(too_large.staged)} of memory in the container "
                f"(the submission's files {copies}, and the tests), more than the memory limit "
                f"({self.settings.memory}) leaves for them ({_mib(too_large.room)}: "
                f"{_mib(MIN_RUN_MEMORY_BYTES)} is kept for the tests' processes): nothing ran"
            )
        left = memory - staged
        container.update(mem_limit=left, memswap_limit=left)
        return None

    def _quality(
        self,
        container: Container,
        result: ExecutionResult,
        environment: Cached | str,
        attempt: _Attempt,
        place: TestsPlace,
    ) -> QualityRun:
        """The measure, after the tests, unless the session timeout ended the run. The source
        files it should measure are listed from the workspace on this machine, which the tests
        (in the container) never touch but for its `.scbench/`."""
        if result.timed_out_in is not None:
            return QualityRun(None, "the run stopped at the session timeout: nothing measured", 0)
        with LogSink(attempt.request.log_dir / QUALITY_LOG, None) as log:
            return quality.measure(
                container,
                environment,
                place.user,
                attempt.containers.path,
                attempt.request.quality_timeout_s,
                log,
                staged_sources(attempt.request.workspace),
            )

    def _plan(
        self,
        prepared: Prepared,
        attempt: _Attempt,
        caches: Caches,
        online: bool,
        tests: _TestsStart,
        test_argv: list[str],
        collecting: _Collecting,
    ) -> PhasePlan:
        request = attempt.request
        steps = ContainerSteps(
            prepared.container,
            caches,
            prepared.shape.place,
            tests.env,
            runner_environment(),
            attempt.setup_log,
            attempt.deadline,
            cut_network=online and (request.cut_network or not self.settings.test_network),
            collected=collecting.collected,
            quality_env=collecting.quality_env,
            warm=prepared.warm,
            restored=collecting.restored,
        )
        install = tests.install
        restores = caches.dependencies is not None
        installs_quality = request.quality and caches.quality is None
        before_tests = (restores and not collecting.restored) or steps.cut_network
        return PhasePlan(
            steps.run_step,
            install,
            test_argv,
            before_tests=steps.before_tests if before_tests else None,
            install_quality=steps.install_quality if installs_quality else None,
            after_tests=steps.after_tests_ran,
            setup_commands=() if restores else None,
            setup_log=attempt.setup_log,
            deadline=attempt.deadline,
            clock=attempt.clock,
        )

    def _restored(self, container: Container, cached: Cached, place: TestsPlace) -> bytes | None:
        """What restoring `cached` without finishing it puts into the workspace, to go in with
        it (read once per environment); None when it is restored by copying in the container
        (it cannot be read so)."""
        with self._lock:
            known = self._restores.get((cached.data_volume, cached.key))
        if known is not None:
            return known
        try:
            entries = restored_entries(container, cached, place)
        except (DockerException, requests.RequestException):
            return None
        if isinstance(entries, str):
            return None
        with self._lock:
            if len(self._restores) >= _KEPT_RESTORES:
                del self._restores[next(iter(self._restores))]
            self._restores[(cached.data_volume, cached.key)] = entries
        return entries

    def _limits_hit(self, counters: Mapping[str, int], workdir: str) -> tuple[str, ...]:
        hit = []
        if killed := counters.get("oom_kill", 0):
            hit.append(
                f"the memory limit ({self.settings.memory}) was reached: the kernel killed "
                f"{killed} process(es)"
            )
        if refused := counters.get("max", 0):
            hit.append(
                f"the process limit ({self.settings.pids_limit}) was reached: {refused} "
                "attempt(s) to start a process failed"
            )
        full = [folder for folder in (workdir, "/tmp") if counters.get(f"full {folder}")]
        if full:
            limit = (
                "Docker's free disk space"
                if self.settings.disk == DEFAULT_DISK
                else self.settings.disk
            )
            hit.append(f"the disk limit ({limit}) was reached: {' and '.join(full)} full")
        return tuple(hit)


_KEPT_RESTORES = 8


@dataclass(frozen=True)
class _Collecting:
    """What a run's steps fill in, and whether its dependencies went in with its workspace."""

    collected: list[Collected]
    quality_env: list[Cached | str]
    restored: bool


@dataclass(frozen=True)
class _TestsStart:
    """How the tests' process of a run starts: the runner's Python, the steps that install it
    first (none when cached), and the tests' variables."""

    python: list[str]
    install: tuple[list[str], ...]
    env: dict[str, str]


def _warm_start(
    caches: Caches,
    request: ExecutionRequest,
    test_argv: list[str],
    env: dict[str, str],
    place: TestsPlace,
) -> WarmStart | None:
    """How the tests' process starts, when it may be started with its container
    (`warm_runner.py`): the runner is cached, and nothing runs in the container before the
    tests but the evaluator's own copies (no setup, or the cached dependencies copied in
    without finishing the project)."""
    dependencies = caches.dependencies
    if caches.runner is None or (request.setup_commands and dependencies is None):
        return None
    if dependencies is not None and dependencies.finish:
        return None
    return WarmStart(
        tuple(checked(caches.runner, test_argv)),
        tuple({**env, SEAL_KEY_VARIABLE: KEY_FROM_STDIN}.items()),
        place.user,
        place.workdir,
    )


@dataclass(frozen=True)
class _Attempt:
    """What every attempt at a run shares (a second one does without caches)."""

    containers: Containers
    image_id: str
    request: ExecutionRequest
    setup_log: LogSink
    deadline: float
    clock: PhaseClock
    started: float


def _mib(size: int) -> str:
    return f"{size / 1024**2:,.1f} MiB"
