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
- the tests user (uid 1000) runs setup and the tests;
- the idle process the container lives on runs as nobody, so the tests cannot kill it.

What outlives a run are named volumes (`docker_cache`): the uv cache the runner installs from
(only the runner can write it), and environments built once and mounted read-only into later
runs: the test runner's, and what SCBench's default setup makes of a requirements.txt. Without
them (`use_cache=False`, or when one cannot be had) the runner installs pytest into the run's
volume and the setup commands run, as they always did. The network is cut after setup unless the
tests are allowed it; a run with nothing to install never has one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

import docker
import requests
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import Container
from docker.types import Mount
from docker.utils import parse_bytes

from scbench_ci import __version__
from scbench_ci.environment import REQUIREMENTS
from scbench_ci.errors import InfrastructureError
from scbench_ci.executors import processes
from scbench_ci.executors.base import SETUP_LOG, ExecutionRequest, ExecutionResult
from scbench_ci.executors.child_env import index_variables, run_environment
from scbench_ci.executors.docker import archive
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker.cache import DEPENDENCIES, RUNNER, Cached
from scbench_ci.executors.docker.daemon import connect, docker_errors, ensure_image, say
from scbench_ci.executors.docker.settings import DEFAULT_DISK, DEFAULT_IMAGE, DockerSettings
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhaseClock, Plan, Step, run_phases, with_phases
from scbench_ci.problem.model import TESTS_DIR
from scbench_ci.standalone import pytest_runner
from scbench_ci.trust.seal import MAX_REPORT_BYTES, REPORT_NAMES
from scbench_ci.workspace import PYTEST_INI, REPORTS_DIR

EVALUATION_CACHE_SCOPE = "evaluation"
REVIEW_CACHE_SCOPE = "review"
"""The cached environments of problems under review (`check`): never an evaluation's."""
MIN_DISK_BYTES = 64 * 1024**2
_FREE_DISK_TTL_S = 60.0
INODES_PER_MIB = 128
MIN_INODES = 16384
RUN_LABEL = "dev.scbench-ci.run"
VERSION_LABEL = "dev.scbench-ci.version"
RUN_DIR = "/scbench"
"""The evaluator's own folders in the run (the runner's); the tests' are where SCBench has them."""
WORKSPACE_DIR = "/workspace"
"""SCBench's working directory: the project `uv init` makes there is named `workspace`, and paths
the tests or the submission print are the same."""
WORKSPACE_VOLUME_SUFFIX = "-workspace"
TMP_VOLUME_SUFFIX = "-tmp"
HOME_DIR = "/tmp/agent_home"
"""The home SCBench's evaluation image sets."""
RUNNER_DIR = f"{RUN_DIR}/runner"
RUNNER_HOME = f"{RUNNER_DIR}/home"
RUNNER_VENV = f"{RUNNER_DIR}/venv"
RUNNER_SCRIPT = f"{RUNNER_DIR}/pytest_runner.py"
RUNNER_UV_CACHE_DIR = f"{RUNNER_DIR}/uv-cache"
"""The uv cache a run that installs the runner itself installs from: its own. No uv cache is
shared between runs or builds: a test dependency built from source runs code as the runner, and
a cache it could write would reach every later build."""
BUILD_UV_CACHE_DIR = "/tmp/runner-uv-cache"
"""A runner environment's build's own uv cache, gone with the builder."""
CACHED_RUNNER_DIR = "/scbench-cache/runner"
"""Where the cached runner environment's volume is mounted (read-only), at build and at use: a
virtual environment only works at the path it was made at."""
CACHED_RUNNER_VENV = f"{CACHED_RUNNER_DIR}/env/venv"
CACHED_DEPENDENCIES_DIR = "/scbench-cache/dependencies"
"""Where the cached dependency environment's volume is mounted (read-only); its `env/workspace`
holds what the setup made in the workspace, for the same workspace path."""
CACHED_WORKSPACE = f"{CACHED_DEPENDENCIES_DIR}/env/workspace"
TEST_UID = TEST_GID = 1000
TEST_USER = f"{TEST_UID}:{TEST_GID}"
RUNNER_UID = RUNNER_GID = 1001
RUNNER_USER = f"{RUNNER_UID}:{RUNNER_GID}"
IDLE_USER = "65534:65534"
RUNNER_OWNED = frozenset({TESTS_DIR, PYTEST_INI})
"""The workspace entries the tests may read but not change: the problem's tests and pytest.ini."""
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_BARE_ENV = {"PATH": CONTAINER_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_CACHE_CHECK_PREFIX = "[scbench-ci] cache check failed: "
_CACHE_CHECK_FAILED = 125
_DEFAULT_SETUP_SHOWN = tuple(f"`{command}`" for command in docker_cache.DEFAULT_SETUP)
_EXIT_POLL_S = 0.005
# Docker carries stdout and stderr apart and may deliver them out of order: one pipe keeps the
# log in the order it was written, as the local executor's is.
_ONE_STREAM = ("/bin/sh", "-c", 'exec "$@" 2>&1', "sh")
# /bin/sh is the one tool every image has; kill(-1) reaches every process the caller may signal,
# but not the caller itself, nor the idle process (another uid).
_KILL_LEFTOVERS = (
    'n=0; for p in /proc/[0-9]*; do [ -O "$p" ] && [ "${p#/proc/}" != $$ ] && n=$((n + 1)); done; '
    "kill -9 -1 2>/dev/null; echo $n"
)
# The container's cgroup counters (v2, else v1): processes the OOM killer ended, forks refused;
# and the run's folders that are full (`full <folder>`).
_LIMIT_COUNTERS = (
    "for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control "
    "/sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; "
    'do [ -r "$f" ] && sed "s|^|${f##*/} |" "$f"; done; '
    f"df -P {WORKSPACE_DIR} /tmp | awk 'NR > 1 && $4 < 1024 {{print \"full\", $6, 1}}'; true"
)
# After the tests, as the tests user, in one round trip: kill what they left (and count it, first
# line), the limit counters, then each report that is a regular file (of at most the size that is
# taken), as `report <name> <size>` and its bytes, or `report <name> -` for anything else there.
# Nothing of the tests user is alive by then to get in the way.
_AFTER_TESTS = (
    f"{_KILL_LEFTOVERS}; {_LIMIT_COUNTERS}; "
    f"for name in {' '.join(REPORT_NAMES)}; do "
    f'f="{WORKSPACE_DIR}/{REPORTS_DIR}/$name"; '
    'if [ -L "$f" ]; then echo "report $name -"; '
    'elif [ -f "$f" ]; then size=$(($(wc -c < "$f"))); '
    f'if [ "$size" -gt {MAX_REPORT_BYTES} ]; then echo "report $name +"; '
    'else echo "report $name $size"; head -c "$size" "$f"; fi; '
    'elif [ -e "$f" ]; then echo "report $name -"; fi; done'
)
# Restores the cached dependency environment into the workspace, as the tests user, before the
# tests: copies its entries ($@) in, then finishes it as the tests' first `uv run` would (a copy is
# not the folder it was made in: uv may rebuild the workspace's own package), its output going to
# setup.log; then it must be indistinguishable from the setup it replaces: a second `uv run` has
# nothing to do and prints nothing. Nothing of the submission's runs: `/bin/true` by its path.
_RESTORE_DEPENDENCIES = f"""cp -a -- "$@" {WORKSPACE_DIR}/ || exit 1
uv run /bin/true || exit 1
second=$(uv run /bin/true 2>&1) || exit 1
[ -z "$second" ] || {{ printf 'a second uv run printed: %.300s\n' "$second"; exit 1; }}
"""
# Run by the runner in a dependency builder once the setup is done: copy every entry the setup
# made in the workspace (all but requirements.txt) to the volume ($2), one name a line, then the
# key ($1), last. A name the cache could not give back as it is fails it.
_KEEP_WORKSPACE = """set -e
for path in * .[!.]* ..?*; do
  { [ -e "$path" ] || [ -L "$path" ]; } || continue
  [ "$path" = requirements.txt ] && continue
  case $path in *[!A-Za-z0-9._-]*) echo "a name the cache does not keep: $path"; exit 5;; esac
  cp -a -- "$path" "$2/"
  echo "$path"
done
printf %s "$1" > "$2/../complete"
"""


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
        self.image = settings.image
        self.memory = settings.memory
        self.cpus = settings.cpus
        self.pids_limit = settings.pids_limit
        self.disk = settings.disk
        self._free_disk = _FreeDisk()
        self.use_cache = settings.use_cache
        self.test_network = settings.test_network
        self.cache_scope = cache_scope
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Kill every container this process made (its runs and cache builds): their steps end,
        and each run removes its container as it always does."""
        self._cancelled.set()
        failures = (DockerException, requests.RequestException, InfrastructureError)
        with contextlib.suppress(*failures), contextlib.closing(connect()) as client:
            mine = f"{processes.OWNER_LABEL}={processes.owner()}"
            for container in client.containers.list(filters={"label": mine}):
                with contextlib.suppress(*failures):
                    container.kill()

    def workspace_dir(self, workspace: Path) -> str:
        return WORKSPACE_DIR

    def execute(self, request: ExecutionRequest) -> ExecutionResult:
        started = time.monotonic()
        clock = PhaseClock()
        image = self.image or request.image or DEFAULT_IMAGE
        with docker_errors(), contextlib.closing(connect()) as client:
            with clock.timing("image"):
                image_id = ensure_image(client, image, request.echo)
            # The session's clock starts once the image is here: a pull is not the run's.
            deadline = time.monotonic() + request.session_timeout_s
            with LogSink(request.log_dir / SETUP_LOG, request.echo) as setup_log:
                caches = self._caches(client, image, image_id, request, setup_log, deadline, clock)
                attempt = _Attempt(client, image, request, setup_log, deadline, clock, started)
                try:
                    return self._attempt(attempt, caches)
                except _CacheRejected as rejected:
                    docker_cache.forget(client, rejected.cached.marker, rejected.cached.data_volume)
                    setup_log.note(f"{rejected}: it is removed, and this run does without caches")
                    return self._attempt(attempt, _Caches())

    def _attempt(self, attempt: _Attempt, caches: _Caches) -> ExecutionResult:
        """One container's run; _CacheRejected before any of the submission's code ran when a
        cached environment, mounted, turns out not to be whole."""
        client, request, clock = attempt.client, attempt.request, attempt.clock
        if self._cancelled.is_set():
            raise InfrastructureError("the evaluation was cancelled")
        run_id = uuid.uuid4().hex
        name = _run_name(run_id)
        installs = caches.runner is None or (
            bool(request.setup_commands) and caches.dependencies is None
        )
        # Nothing to install: the container never has a network (loopback only).
        online = installs or self.test_network
        try:
            with clock.timing("container"):
                limits = self._tmpfs_limits(client, attempt.image)
                volumes = self._create_volumes(client, name, run_id, limits)
                container = self._create(
                    client, attempt.image, name, run_id, caches, online, volumes, limits
                )
                # A volume in memory is there once the container runs, not before.
                container.start()
                _copy_in(container, request.workspace, installs_runner=caches.runner is None)
            if caches.dependencies is not None:
                attempt.setup_log.note(
                    f"setup: not run here; what {', then '.join(_DEFAULT_SETUP_SHOWN)} made of "
                    f"this {REQUIREMENTS} ({', '.join(caches.dependencies.names)}) is copied "
                    f"into the workspace from cache volume {caches.dependencies.data_volume}, "
                    "then finished as the tests' first `uv run` would"
                )
            collected: list[_Collected] = []
            plan = self._plan(container, attempt, caches, online, collected)
            result = run_phases(request, plan, attempt.started)
            with clock.timing("collect"):
                reports = request.workspace / REPORTS_DIR
                shutil.rmtree(reports, ignore_errors=True)
                reports.mkdir()
                found = collected[0] if collected else _collect_now(container)
                if found is not None:
                    _write_reports(found, reports, request.echo)
                    hit = self._limits_hit(found.counters)
                    result = dataclasses.replace(result, limits_hit=hit)
        finally:
            # Also on KeyboardInterrupt and SystemExit; by name, in case create was cut short.
            with clock.timing("cleanup"):
                _remove(client, name, volumes=True)
        return with_phases(result, clock, attempt.started)

    def _caches(
        self,
        client: docker.DockerClient,
        image: str,
        image_id: str,
        request: ExecutionRequest,
        log: LogSink,
        deadline: float,
        clock: PhaseClock,
    ) -> _Caches:
        """The cached environments this run can use, built now when they are not there yet."""
        if not self.use_cache:
            return _Caches()
        index = index_variables(os.environ)
        requirements = request.command.requirements
        with clock.timing("runner"):
            key = runner_key(image_id, requirements, scope=self.cache_scope)
            runner = docker_cache.obtain(
                client,
                RUNNER,
                key,
                lambda volume: self._build_runner(
                    client, image, volume, key, requirements, index, log, deadline
                ),
                log.note,
            )
        if isinstance(runner, str):
            log.note(f"no cached test runner ({runner}): it is installed for this run")
        else:
            log.note(f"test runner: the cached environment of volume {runner.data_volume}")
        return _Caches(
            runner if isinstance(runner, Cached) else None,
            self._dependencies(client, image, image_id, request, log, deadline, clock),
        )

    def _dependencies(
        self,
        client: docker.DockerClient,
        image: str,
        image_id: str,
        request: ExecutionRequest,
        log: LogSink,
        deadline: float,
        clock: PhaseClock,
    ) -> Cached | None:
        source = docker_cache.dependency_source(
            request.workspace, request.setup_commands, request.default_environment
        )
        if source is None:
            return None
        if isinstance(source, str):
            log.note(f"the setup runs here, not from the dependency cache: {source}")
            return None
        variables = docker_cache.setup_variables(request.command.variables)
        setup = request.setup_commands
        with clock.timing("setup"):
            key = dependencies_key(image_id, source, setup, variables, scope=self.cache_scope)
            cached = docker_cache.obtain(
                client,
                DEPENDENCIES,
                key,
                lambda volume: self._build_dependencies(
                    client,
                    image,
                    volume,
                    key,
                    source,
                    request.workspace,
                    setup,
                    variables,
                    log,
                    deadline,
                ),
                log.note,
            )
        if isinstance(cached, str):
            log.note(f"the setup runs here, the dependency cache could not be had: {cached}")
            return None
        conflicts = docker_cache.conflicting_names(request.workspace, cached)
        if conflicts:
            log.note(
                "the setup runs here, not from the dependency cache: the submission has its "
                f"own {', '.join(conflicts)}"
            )
            return None
        return cached

    def _tmpfs_limits(self, client: docker.DockerClient, image: str) -> str:
        """The size (and files) of each of the run's folders: `--disk`, or with `auto` the free
        space of Docker's disk, so a program that checks it sees what it would under SCBench."""
        if self.disk == DEFAULT_DISK:
            size = self._free_disk.measure(client, image, self._confinement())
        else:
            size = int(parse_bytes(self.disk))
        return f"size={size},nr_inodes={max(MIN_INODES, size // 1024**2 * INODES_PER_MIB)}"

    def _container(
        self,
        client: docker.DockerClient,
        image: str,
        name: str,
        run_id: str,
        mounts: list[Mount],
        limits: str,
        **options: Any,
    ) -> Container:
        """A container that idles until it is used (a run's, or a builder's), labelled with the
        run and its owner, confined as every container is; `limits` are its folders'."""
        return client.containers.create(
            image,
            entrypoint=["sleep", "infinity"],
            name=name,
            labels=_labels(run_id),
            # A run's /tmp is a volume of its own (files can be put there); a builder's is not.
            tmpfs={} if any(m["Target"] == "/tmp" for m in mounts) else {"/tmp": f"{limits},exec"},
            mounts=mounts,
            **self._confinement(),
            **options,
        )

    def _confinement(self) -> dict[str, Any]:
        """The limits and privileges of every container: the run's and the builders'."""
        return {
            "user": IDLE_USER,
            "init": True,
            "working_dir": "/",
            "mem_limit": self.memory,
            "memswap_limit": self.memory,
            "nano_cpus": round(self.cpus * 1e9),
            "pids_limit": self.pids_limit,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "read_only": True,
        }

    def _create_volumes(
        self, client: docker.DockerClient, name: str, run_id: str, limits: str
    ) -> list[Mount]:
        """The run's volumes, in memory: the evaluator's folders at /scbench; the workspace, the
        runner's and sticky (the tests user adds entries, but cannot rename the runner's); /tmp."""
        for volume, owner in (
            (name, "mode=0755"),
            (name + WORKSPACE_VOLUME_SUFFIX, f"mode=1777,uid={RUNNER_UID},gid={RUNNER_GID}"),
            (name + TMP_VOLUME_SUFFIX, "mode=1777"),
        ):
            client.volumes.create(
                volume,
                driver="local",
                driver_opts={
                    "type": "tmpfs",
                    "device": "tmpfs",
                    "o": f"{limits},{owner},nosuid,nodev",
                },
                labels=_labels(run_id),
            )
        return [
            Mount(RUN_DIR, name, type="volume"),
            Mount(WORKSPACE_DIR, name + WORKSPACE_VOLUME_SUFFIX, type="volume"),
            Mount("/tmp", name + TMP_VOLUME_SUFFIX, type="volume"),
        ]

    def _create(
        self,
        client: docker.DockerClient,
        image: str,
        name: str,
        run_id: str,
        caches: _Caches,
        online: bool,
        mounts: list[Mount],
        limits: str,
    ) -> Container:
        mounts = list(mounts)
        if caches.runner is not None:
            mounts.append(
                Mount(CACHED_RUNNER_DIR, caches.runner.data_volume, type="volume", read_only=True)
            )
        if caches.dependencies is not None:
            mounts.append(
                Mount(
                    CACHED_DEPENDENCIES_DIR,
                    caches.dependencies.data_volume,
                    type="volume",
                    read_only=True,
                )
            )
        return self._container(
            client, image, name, run_id, mounts, limits, network_mode=None if online else "none"
        )

    def _plan(
        self,
        container: Container,
        attempt: _Attempt,
        caches: _Caches,
        online: bool,
        collected: list[_Collected],
    ) -> Plan:
        request = attempt.request
        tests_env = _tests_environment(request.command.variables)
        runner_env = run_environment(
            path=CONTAINER_PATH,
            home=RUNNER_HOME,
            extra={
                **index_variables(os.environ),
                "UV_CACHE_DIR": RUNNER_UV_CACHE_DIR,
            },
            variables={},
        )

        checks = _cache_checks(_Caches(runner=caches.runner))

        def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
            if step.user == "runner":
                env, user, workdir = runner_env, RUNNER_USER, RUNNER_DIR
            else:
                env, user, workdir = {**tests_env, **step.extra_env}, TEST_USER, WORKSPACE_DIR
            if not (step.tests and checks is not None and caches.runner is not None):
                return _run(
                    container,
                    step.argv,
                    env,
                    user,
                    workdir,
                    log,
                    deadline,
                    kill_leftovers=not step.tests,
                )
            seen = _FirstBytes(log)
            argv = ["/bin/sh", "-c", checks, "sh", *step.argv]
            code, left = _run(
                container, argv, env, user, workdir, seen, deadline, kill_leftovers=False
            )
            # Only the check could print first: the runner's start line comes before anything
            # of the submission's.
            if code == _CACHE_CHECK_FAILED and seen.first.startswith(_CACHE_CHECK_PREFIX.encode()):
                raise _CacheRejected("not whole", caches.runner)
            return code, left

        cut_network = online and not self.test_network

        def before_tests() -> None:
            if caches.dependencies is not None:
                _restore_dependencies(
                    container, caches.dependencies, tests_env, attempt.setup_log, attempt.deadline
                )
            if cut_network:
                _disconnect(container)

        def after_tests() -> int:
            try:
                killed, found = _after_tests(container)
            except APIError:  # the container is gone (its idle process was killed, say)
                return 0
            collected.append(found)
            return killed

        install: tuple[list[str], ...] = ()
        if caches.runner is None:
            python = f"{RUNNER_VENV}/bin/python"
            install = (
                ["uv", "venv", "--quiet", RUNNER_VENV],
                [
                    "uv",
                    "pip",
                    "install",
                    "--quiet",
                    "--python",
                    python,
                    *request.command.requirements,
                ],
            )
        else:
            python = f"{CACHED_RUNNER_VENV}/bin/python"
        test_argv = request.command.runner_argv([python], RUNNER_SCRIPT, pytest_runner.KILL_OTHERS)
        restores = caches.dependencies is not None
        return Plan(
            run,
            install,
            test_argv,
            before_tests=before_tests if restores or cut_network else None,
            after_tests=after_tests,
            setup_commands=() if caches.dependencies is not None else None,
            setup_log=attempt.setup_log,
            deadline=attempt.deadline,
            clock=attempt.clock,
        )

    def _limits_hit(self, counters: Mapping[str, int]) -> tuple[str, ...]:
        hit = []
        if killed := counters.get("oom_kill", 0):
            hit.append(
                f"the memory limit ({self.memory}) was reached: the kernel killed {killed} "
                "process(es)"
            )
        if refused := counters.get("max", 0):
            hit.append(
                f"the process limit ({self.pids_limit}) was reached: {refused} attempt(s) to "
                "start a process failed"
            )
        full = [folder for folder in (WORKSPACE_DIR, "/tmp") if counters.get(f"full {folder}")]
        if full:
            limit = "Docker's free disk space" if self.disk == DEFAULT_DISK else self.disk
            hit.append(f"the disk limit ({limit}) was reached: {' and '.join(full)} full")
        return tuple(hit)

    @contextlib.contextmanager
    def _builder(
        self, client: docker.DockerClient, image: str, mounts: list[Mount], run_dir: bool = False
    ) -> Iterator[Container]:
        """A throwaway container, online, confined as a run's (with a run's in-memory volumes at
        /scbench and the workspace when asked), that builds a cached environment; removed, and
        with it every process it ran, when done."""
        build_id = uuid.uuid4().hex
        name = f"scbench-ci-build-{build_id}"
        try:
            limits = self._tmpfs_limits(client, image)
            if run_dir:
                mounts = [*self._create_volumes(client, name, build_id, limits), *mounts]
            yield self._container(client, image, name, build_id, mounts, limits)
        finally:
            _remove(client, name, volumes=run_dir)

    def _build_runner(
        self,
        client: docker.DockerClient,
        image: str,
        volume: str,
        key: str,
        requirements: tuple[str, ...],
        index: Mapping[str, str],
        log: LogSink,
        deadline: float,
    ) -> tuple[str, ...] | str:
        """The runner installs pytest and its plugins into the volume (from a uv cache of the
        build's own), compiled, and writes the key last."""
        log.note(f"building the test runner's environment into cache volume {volume}")
        home = f"{CACHED_RUNNER_DIR}/env/home"
        mounts = [Mount(CACHED_RUNNER_DIR, volume, type="volume")]
        with self._builder(client, image, mounts) as container:
            # Volumes on disk take files before the container starts.
            _put_directories(
                container,
                CACHED_RUNNER_DIR,
                [
                    ("env", RUNNER_UID, RUNNER_GID, 0o755),
                    ("env/home", RUNNER_UID, RUNNER_GID, 0o700),
                ],
            )
            container.start()
            env = run_environment(
                path=CONTAINER_PATH,
                home=home,
                extra={**index, "UV_CACHE_DIR": BUILD_UV_CACHE_DIR, "UV_LINK_MODE": "copy"},
                variables={},
            )
            python = f"{CACHED_RUNNER_VENV}/bin/python"
            install = ["uv", "pip", "install", "--quiet", "--compile-bytecode", "--python", python]
            for argv in (
                ["uv", "venv", "--quiet", CACHED_RUNNER_VENV],
                [*install, *requirements],
            ):
                log.note(f"$ {' '.join(argv)}")
                code, _ = _run(
                    container,
                    argv,
                    env,
                    RUNNER_USER,
                    f"{CACHED_RUNNER_DIR}/env",
                    log,
                    deadline,
                    kill_leftovers=False,
                )
                if code != 0:
                    return _failed(code)
            code, output = _exec(
                container,
                ["/bin/sh", "-c", 'printf %s "$1" > "$2"', "sh", key, _complete(CACHED_RUNNER_DIR)],
                RUNNER_USER,
            )
            if code != 0:
                return f"marking it complete failed: {output.strip()}"
        return ()

    def _build_dependencies(
        self,
        client: docker.DockerClient,
        image: str,
        volume: str,
        key: str,
        requirements: bytes,
        workspace: Path,
        setup_commands: tuple[str, ...],
        variables: Mapping[str, str],
        log: LogSink,
        deadline: float,
    ) -> tuple[str, ...] | str:
        """The setup commands, run by the tests user with the network and the environment they
        have in a run, in a workspace at the run's path that holds only requirements.txt (these
        bytes, with the staged file's mode and time); then the runner copies what they made there
        into the volume and writes the key last."""
        log.note(
            f"building the dependency environment into cache volume {volume}: the setup runs "
            f"once, in a workspace that holds only {REQUIREMENTS}"
        )
        mounts = [Mount(CACHED_DEPENDENCIES_DIR, volume, type="volume")]
        with (
            self._builder(client, image, mounts, run_dir=True) as container,
            tempfile.TemporaryDirectory(prefix="scbench-requirements-") as folder,
        ):
            _put_directories(
                container,
                CACHED_DEPENDENCIES_DIR,
                [
                    ("env", RUNNER_UID, RUNNER_GID, 0o755),
                    ("env/workspace", RUNNER_UID, RUNNER_GID, 0o755),
                ],
            )
            container.start()
            alone = Path(folder) / REQUIREMENTS
            alone.write_bytes(requirements)
            shutil.copystat(workspace / REQUIREMENTS, alone, follow_symlinks=False)
            _copy_in(container, Path(folder), installs_runner=False)
            env = _tests_environment(variables)
            for command in setup_commands:
                log.note(f"$ {command}")
                code, left = _run(
                    container,
                    ["/bin/sh", "-c", command],
                    env,
                    TEST_USER,
                    WORKSPACE_DIR,
                    log,
                    deadline,
                )
                if left:
                    log.note(f"killed {left} process(es) still running after the setup ended")
                if code != 0:
                    return _failed(code)
            chunks, _ = container.get_archive(f"{WORKSPACE_DIR}/{REQUIREMENTS}")
            if archive.read_member(chunks, REQUIREMENTS, len(requirements)) != requirements:
                return f"the setup changed {REQUIREMENTS}"
            code, output = _exec(
                container,
                ["/bin/sh", "-c", _KEEP_WORKSPACE, "sh", key, CACHED_WORKSPACE],
                RUNNER_USER,
                WORKSPACE_DIR,
            )
            if code != 0:
                return f"keeping what the setup made failed: {output.strip()[:500]}"
        names = tuple(output.split())
        if not names or not all(docker_cache.SAFE_NAME.fullmatch(name) for name in names):
            return "the setup made nothing in the workspace"
        return names


@dataclass(frozen=True)
class _Caches:
    """The cached environments a run uses: none, and it installs the runner and runs the setup
    itself."""

    runner: Cached | None = None
    dependencies: Cached | None = None


@dataclass(frozen=True)
class _Attempt:
    """What every attempt at a run shares (a second one does without caches)."""

    client: docker.DockerClient
    image: str
    request: ExecutionRequest
    setup_log: LogSink
    deadline: float
    clock: PhaseClock
    started: float


class _CacheRejected(Exception):
    """A cached environment, mounted, is not whole: the run starts over without caches."""

    def __init__(self, reason: str, cached: Cached) -> None:
        super().__init__(f"cache volume {cached.data_volume}: {reason}")
        self.cached = cached


def runner_key(
    image_id: str, requirements: tuple[str, ...], *, scope: str = EVALUATION_CACHE_SCOPE
) -> str:
    """The cached test runner's key: the scope, the image, the exact requirements, the index
    variables."""
    return docker_cache.cache_key(
        RUNNER,
        scope=scope,
        image=image_id,
        requirements=list(requirements),
        index=index_variables(os.environ),
    )


def dependencies_key(
    image_id: str,
    requirements: bytes,
    setup: tuple[str, ...],
    variables: Mapping[str, str],
    *,
    scope: str = EVALUATION_CACHE_SCOPE,
) -> str:
    """The cached dependency environment's key: the scope, the image, the workspace's path
    (where it was made and is used), requirements.txt's bytes, the setup commands, the index
    variables and the other variables the setup sees (setup_variables)."""
    return docker_cache.cache_key(
        DEPENDENCIES,
        scope=scope,
        image=image_id,
        workspace=WORKSPACE_DIR,
        requirements=hashlib.sha256(requirements).hexdigest(),
        setup=list(setup),
        index=index_variables(os.environ),
        variables=dict(variables),
    )


def _tests_environment(variables: Mapping[str, str]) -> dict[str, str]:
    """What setup and the tests get, as in SCBench's container: the image's own variables (Docker
    keeps them, its locale among them), the login shell's PATH, SCBench's home, the index
    variables every container here needs, and the command's variables (the environment's own,
    such as SCBench's `UV_CACHE_DIR`, among them)."""
    return run_environment(
        path=CONTAINER_PATH,
        home=HOME_DIR,
        extra=index_variables(os.environ),
        variables=variables,
        locale={},
    )


def _labels(run_id: str) -> dict[str, str]:
    """Every container and volume of a run (or a build) carries its run and its owner."""
    return {RUN_LABEL: run_id, VERSION_LABEL: __version__, processes.OWNER_LABEL: processes.owner()}


def _remove(client: docker.DockerClient, name: str, *, volumes: bool) -> None:
    """The container `name` and, when asked, its volumes (by name, in case creating them was cut
    short)."""
    with contextlib.suppress(NotFound):
        client.api.remove_container(name, force=True, v=True)
    if volumes:
        for volume in (name, name + WORKSPACE_VOLUME_SUFFIX, name + TMP_VOLUME_SUFFIX):
            with contextlib.suppress(NotFound):
                client.api.remove_volume(volume, force=True)


class _FreeDisk:
    """The free space of the disk Docker keeps its data on: from its folder when this machine
    is the daemon's, else as a container's root file system reports it (measured with the run's
    image); again once a minute at most."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._measured: tuple[float, int] | None = None

    def measure(self, client: docker.DockerClient, image: str, confinement: dict[str, Any]) -> int:
        with self._lock:
            if self._measured is None or time.monotonic() - self._measured[0] > _FREE_DISK_TTL_S:
                self._measured = (time.monotonic(), _free_disk_space(client, image, confinement))
            return self._measured[1]


def _free_disk_space(client: docker.DockerClient, image: str, confinement: dict[str, Any]) -> int:
    root = client.info().get("DockerRootDir")
    if isinstance(root, str) and os.path.isdir(root):
        status = os.statvfs(root)
        return max(status.f_bavail * status.f_frsize, MIN_DISK_BYTES)
    build_id = uuid.uuid4().hex
    output = client.containers.run(
        image,
        ["df", "-P", "-k", "/"],
        entrypoint=[],
        name=f"scbench-ci-build-{build_id}",
        labels=_labels(build_id),
        network_mode="none",
        remove=True,
        **{**confinement, "init": False},
    )
    lines = bytes(output).decode(errors="replace").split("\n")
    fields = lines[1].split() if len(lines) > 1 else []
    if len(fields) < 4 or not fields[3].isdigit():
        raise InfrastructureError(f"the image {image} could not tell Docker's free disk space")
    return max(int(fields[3]) * 1024, MIN_DISK_BYTES)


def _run_name(run_id: str) -> str:
    """The name of the run's container and of its volume."""
    return f"scbench-ci-{run_id}"


def _copy_in(container: Container, workspace: Path, *, installs_runner: bool) -> None:
    """The workspace into its volume, the tests user's home into /tmp, the runner's folders into
    the run's volume (with the uv cache of its own when it installs the runner in the run)."""
    _put_archive(container, WORKSPACE_DIR, lambda tar: _add_workspace(tar, workspace))
    _put_directories(container, "/tmp", [(_under(HOME_DIR, "/tmp"), TEST_UID, TEST_GID, 0o700)])

    def runner_folders(tar: tarfile.TarFile) -> None:
        folders = [RUNNER_DIR, RUNNER_HOME, *([RUNNER_UV_CACHE_DIR] if installs_runner else [])]
        for folder in folders:
            mode = 0o755 if folder == RUNNER_DIR else 0o700
            archive.add_directory(tar, _in_run_dir(folder), RUNNER_UID, RUNNER_GID, mode)
        script = Path(pytest_runner.__file__).read_bytes()
        archive.add_file(tar, _in_run_dir(RUNNER_SCRIPT), script, RUNNER_UID, RUNNER_GID, 0o644)

    _put_archive(container, RUN_DIR, runner_folders)


def _put_directories(
    container: Container, target: str, folders: list[tuple[str, int, int, int]]
) -> None:
    """Make folders (relative name, uid, gid, mode) under `target` in the container."""

    def add(tar: tarfile.TarFile) -> None:
        for name, uid, gid, mode in folders:
            archive.add_directory(tar, name, uid, gid, mode)

    _put_archive(container, target, add)


def _put_archive(
    container: Container, target: str, fill: Callable[[tarfile.TarFile], None]
) -> None:
    """One tar archive, made by `fill`, extracted under `target` in the container."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            fill(tar)
        buffer.seek(0)
        container.put_archive(target, buffer)


def _under(path: str, folder: str) -> str:
    return path.removeprefix(f"{folder}/")


def _complete(mount: str) -> str:
    return f"{mount}/{docker_cache.COMPLETE_FILE}"


def _failed(code: int | None) -> str:
    return "it stopped at the session timeout" if code is None else f"exit code {code}"


def _cache_checks(caches: _Caches) -> str | None:
    """The shell that starts the tests' step when the run uses cached environments: each must say
    it is complete for its key, or it says which is not on the first line and exits with
    _CACHE_CHECK_FAILED; then it runs its arguments. None without cached environments."""
    lines = [
        f'[ "$(cat {_complete(mount)} 2>/dev/null)" = {cached.key} ] || '
        f'{{ echo "{_CACHE_CHECK_PREFIX}{kind}"; exit {_CACHE_CHECK_FAILED}; }}'
        for mount, cached, kind in (
            (CACHED_RUNNER_DIR, caches.runner, RUNNER),
            (CACHED_DEPENDENCIES_DIR, caches.dependencies, DEPENDENCIES),
        )
        if cached is not None
    ]
    return "\n".join([*lines, 'exec "$@"']) if lines else None


def _restore_dependencies(
    container: Container, cached: Cached, env: dict[str, str], log: LogSink, deadline: float
) -> None:
    """The cached dependency environment into the workspace, finished and checked
    (_RESTORE_DEPENDENCIES); _CacheRejected when it is not what the setup would have made."""
    paths = [f"{CACHED_WORKSPACE}/{name}" for name in cached.names]
    checks = _cache_checks(_Caches(dependencies=cached))
    assert checks is not None
    argv = ["/bin/sh", "-c", checks, "sh", "/bin/sh", "-c", _RESTORE_DEPENDENCIES, "sh", *paths]
    seen = _FirstBytes(log)
    code, _ = _run(container, argv, env, TEST_USER, WORKSPACE_DIR, seen, deadline)
    if code is None:
        raise InfrastructureError("the session timed out while the cached dependencies went in")
    if code == _CACHE_CHECK_FAILED and seen.first.startswith(_CACHE_CHECK_PREFIX.encode()):
        raise _CacheRejected("not whole", cached)
    if code != 0:
        raise _CacheRejected("restoring it into the workspace failed (see above)", cached)


class _Log(Protocol):
    """Where a step's output goes (a LogSink)."""

    def write(self, chunk: bytes) -> None: ...


class _FirstBytes:
    """A log that keeps the first bytes written to it, as they pass."""

    def __init__(self, log: LogSink) -> None:
        self.log = log
        self.first = b""

    def write(self, chunk: bytes) -> None:
        if len(self.first) < 256:
            self.first += chunk[: 256 - len(self.first)]
        self.log.write(chunk)


def _add_workspace(tar: tarfile.TarFile, workspace: Path) -> None:
    """The submission's files owned by the tests user; the tests and pytest.ini by the runner
    (the workspace volume is the runner's and sticky: the tests user may add entries, but not
    rename or remove the runner's)."""
    for entry in sorted(os.scandir(workspace), key=lambda entry: entry.name):
        if entry.name in RUNNER_OWNED:
            owner, mask = (RUNNER_UID, RUNNER_GID), 0o755
        else:
            owner, mask = (TEST_UID, TEST_GID), 0o777
        archive.add_tree(tar, Path(entry.path), entry.name, *owner, mask)


def _in_run_dir(path: str) -> str:
    return path.removeprefix(f"{RUN_DIR}/")


@dataclass(frozen=True)
class _Collected:
    """What a run leaves to be taken out: the limit counters, and each report there is, as its
    bytes or why it is not taken."""

    counters: dict[str, int]
    reports: dict[str, bytes | str]


def _after_tests(container: Container) -> tuple[int, _Collected]:
    """Kill what the tests left running, and take the counters and the reports: how many
    processes were killed, and what was taken."""
    api = _api(container)
    exec_id = api.exec_create(container.id, ["/bin/sh", "-c", _AFTER_TESTS], user=TEST_USER)
    stdout, _ = api.exec_start(exec_id["Id"], demux=True)
    first, _, rest = (stdout or b"").partition(b"\n")
    count = first.decode(errors="replace").strip()
    counters: dict[str, int] = {}
    reports: dict[str, bytes | str] = {}
    while rest:
        line, _, rest = rest.partition(b"\n")
        match line.decode(errors="replace").split():
            case ["report", name, size] if name in REPORT_NAMES:
                if size == "-":
                    reports[name] = f"{name} is not a regular file"
                elif size == "+":
                    reports[name] = f"{name} is larger than {MAX_REPORT_BYTES} bytes"
                elif size.isdigit() and len(rest) >= int(size):
                    reports[name], rest = rest[: int(size)], rest[int(size) :]
                else:
                    reports[name] = f"{name} could not be read"
                    break
            case words:
                _count_limit(words, counters)
    return (int(count) if count.isdigit() else 0), _Collected(counters, reports)


def _collect_now(container: Container) -> _Collected | None:
    """What a run whose tests never ended by themselves left (a failed setup), taken as after
    the tests: None when the container is stopped (the session timeout), and its volume gone."""
    container.reload()
    if container.status != "running":
        return None
    return _after_tests(container)[1]


def _write_reports(collected: _Collected, target: Path, echo: TextIO | None) -> None:
    """Each report taken, as a regular file, into the empty folder `target`."""
    for name, content in collected.reports.items():
        if isinstance(content, str):
            say(echo, f"warning: {REPORTS_DIR}/{name} was not copied back: {content}")
        else:
            pytest_runner.write_new(target / name, content)


def _run(
    container: Container,
    argv: list[str],
    env: dict[str, str],
    user: str,
    workdir: str,
    log: _Log,
    deadline: float,
    *,
    kill_leftovers: bool = True,
) -> tuple[int | None, int]:
    """Run as `user` to completion or to the deadline.

    Returns the exit code (None when the deadline came first, and the container was killed) and
    how many processes it left behind. Either way, nothing it started runs when this returns
    (without `kill_leftovers`, for a trusted command, only what it started and waited for).
    """
    api = _api(container)
    exec_id = api.exec_create(
        container.id,
        [*_ONE_STREAM, *argv],
        user=user,
        environment=env,
        workdir=workdir,
    )["Id"]
    output = api.exec_start(exec_id, stream=True)
    reader = threading.Thread(target=_copy_output, args=(output, log), daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    code = None if reader.is_alive() else _exit_code(api, exec_id, deadline)
    if code is None:
        container.kill()
        reader.join()
        return None, 0
    return code, _kill_leftovers(container, user) if kill_leftovers else 0


def _api(container: Container) -> docker.APIClient:
    assert container.client is not None, "a container from a client keeps it"
    return container.client.api


def _copy_output(output: Iterable[bytes], log: _Log) -> None:
    for chunk in output:
        log.write(chunk)


def _exit_code(api: docker.APIClient, exec_id: str, deadline: float) -> int | None:
    """The exit code once the process has ended (its output can close before); None at the
    deadline."""
    while True:
        state = api.exec_inspect(exec_id)
        if not state["Running"]:
            if state["ExitCode"] is None:
                raise InfrastructureError("the container stopped in the middle of the run")
            return int(state["ExitCode"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(_EXIT_POLL_S)


def _kill_leftovers(container: Container, user: str) -> int:
    """Kill what the command left running (any process of its user), and count it."""
    count = _exec_output(container, _KILL_LEFTOVERS, user).strip()
    return int(count) if count.isdigit() else 0


def _count_limit(words: list[str], counters: dict[str, int]) -> None:
    """One line of _LIMIT_COUNTERS's output into `counters`."""
    match words:
        case [_, ("oom_kill" | "max") as name, value] if value.isdigit():
            counters[name] = int(value)
        case ["full", folder, _]:
            counters[f"full {folder}"] = 1


def _exec(container: Container, argv: list[str], user: str, workdir: str = "/") -> tuple[int, str]:
    """Run a short command of ours as `user`, to its end: the exit code and the output."""
    api = _api(container)
    exec_id = api.exec_create(
        container.id, [*_ONE_STREAM, *argv], user=user, workdir=workdir, environment=_BARE_ENV
    )["Id"]
    output = api.exec_start(exec_id)
    code = _exit_code(api, exec_id, float("inf"))
    return (-1 if code is None else code), bytes(output).decode(errors="replace")


def _exec_output(container: Container, script: str, user: str) -> str:
    api = _api(container)
    exec_id = api.exec_create(container.id, ["/bin/sh", "-c", script], user=user)
    stdout, _ = api.exec_start(exec_id["Id"], demux=True)
    return (stdout or b"").decode(errors="replace")


def _disconnect(container: Container) -> None:
    """Leave every network: only loopback is left."""
    container.reload()
    api = _api(container)
    for network in container.attrs["NetworkSettings"]["Networks"]:
        api.disconnect_container_from_network(str(container.id), network)
