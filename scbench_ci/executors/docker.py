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
import json
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

import docker
import requests
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import Container
from docker.types import Mount
from docker.utils import parse_bytes

from scbench_ci import __version__, archive, processes, pytest_runner
from scbench_ci.child_env import index_variables, run_environment
from scbench_ci.environment import REQUIREMENTS
from scbench_ci.errors import InfrastructureError, UsageError
from scbench_ci.executors import docker_cache
from scbench_ci.executors.base import SETUP_LOG, ExecutionRequest, ExecutionResult
from scbench_ci.executors.docker_cache import DEPENDENCIES, RUNNER, Cached
from scbench_ci.executors.docker_daemon import connect, docker_errors, ensure_image, say
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhaseClock, Plan, Step, run_phases, with_phases
from scbench_ci.problem import TESTS_DIR
from scbench_ci.seal import MAX_REPORT_BYTES, REPORT_NAMES
from scbench_ci.workspace import PYTEST_INI, REPORTS_DIR

DEFAULT_IMAGE = "ghcr.io/astral-sh/uv:python3.12-bookworm-slim"
DEFAULT_MEMORY = "4g"
DEFAULT_CPUS = 2.0
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_DISK = "2g"
INODES_PER_MIB = 128
RUN_LABEL = "dev.scbench-ci.run"
VERSION_LABEL = "dev.scbench-ci.version"
CACHE_VOLUME = "scbench-ci-runner-cache"

RUN_DIR = "/scbench"
WORKSPACE_DIR = f"{RUN_DIR}/workspace"
HOME_DIR = f"{RUN_DIR}/home"
TESTS_CACHE_DIR = f"{RUN_DIR}/uv-cache"
RUNNER_DIR = f"{RUN_DIR}/runner"
RUNNER_HOME = f"{RUNNER_DIR}/home"
RUNNER_VENV = f"{RUNNER_DIR}/venv"
RUNNER_SCRIPT = f"{RUNNER_DIR}/pytest_runner.py"
CACHE_MOUNT = "/uv-cache"
RUNNER_CACHE_DIR = f"{CACHE_MOUNT}/runner"
UNCACHED_RUNNER_CACHE_DIR = f"{RUNNER_DIR}/uv-cache"
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
    f"df -P {RUN_DIR} /tmp | awk 'NR > 1 && $4 < 1024 {{print \"full\", $6, 1}}'; true"
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
# How the tests' step starts when the run uses cached environments, before the test runner's own
# code, as the tests user, with nothing of the submission's having run. A shell checks that each
# cached environment says it is complete for its key (_cache_checks), then runs
# `python -I -c _BOOT PLAN RUNNER_SCRIPT ARGS...` with the cached runner's python, which, while it
# imports pytest (the runner's next import; its plugins are left to pytest, which rewrites their
# asserts), waits until the workspace is in (the copy-in's last file, when the step started
# alongside it) and copies the dependency environment's entries into it (so they are the tests
# user's); then it runs the runner as `python -I RUNNER_SCRIPT ARGS...` would (and
# ends as it does). What fails before the runner is said on the first line, and exits with
# _CACHE_CHECK_FAILED.
_BOOT = """
import json, os, subprocess, sys, threading, time
plan = json.loads(sys.argv[1])
def fail(what):
    sys.stdout.write(plan["prefix"] + what + "\\n")
    sys.stdout.flush()
    os._exit(plan["code"])
failed = []
def prepare():
    until = time.monotonic() + plan["wait"]
    while not os.path.exists(plan["ready"]):
        if time.monotonic() > until:
            failed.append("workspace")
            return
        time.sleep(0.002)
    if plan["copy"]:
        copy = ["cp", "-a", "--", *plan["copy"], plan["workspace"] + "/"]
        quiet = {"stdin": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if subprocess.run(copy, **quiet).returncode:
            failed.append("dependencies copy")
preparing = threading.Thread(target=prepare)
preparing.start()
import pytest
preparing.join()
if failed:
    fail(failed[0])
os.chdir(plan["workspace"])
sys.argv = sys.argv[2:]
import runpy
runpy.run_path(sys.argv[0], run_name="__main__")
"""
RUNNER_READY = f"{RUNNER_DIR}/ready"
"""The copy-in's last file: once it is there, so is everything else."""
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
        image: str | None = None,
        *,
        memory: str = DEFAULT_MEMORY,
        cpus: float = DEFAULT_CPUS,
        pids_limit: int = DEFAULT_PIDS_LIMIT,
        disk: str = DEFAULT_DISK,
        use_cache: bool = True,
        test_network: bool = False,
    ) -> None:
        self.image = image
        self.memory = checked_size("--memory", memory)
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.disk = checked_size("--disk", disk)
        self.use_cache = use_cache
        self.test_network = test_network
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
        copying: Future[None] | None = None
        pool = ThreadPoolExecutor(1)
        try:
            with clock.timing("container"):
                self._create_volume(client, name, run_id)
                container = self._create(client, attempt.image, name, run_id, caches, online)
                # A volume in memory is there once the container runs, not before.
                container.start()
                workspace = (container, request.workspace, self._runner_uv_cache(caches))
                if installs:
                    _copy_in(*workspace)
                else:
                    # Nothing runs before the tests: their step starts while the workspace goes
                    # in (and waits for it); a failed copy-in stops the container.
                    copying = pool.submit(_copy_in, *workspace)
                    copying.add_done_callback(lambda done: _kill_on_error(done, container))
            if caches.dependencies is not None:
                attempt.setup_log.note(
                    f"setup: not run here; what {', then '.join(_DEFAULT_SETUP_SHOWN)} made of "
                    f"this {REQUIREMENTS} ({', '.join(caches.dependencies.names)}) is copied "
                    f"into the workspace from cache volume {caches.dependencies.data_volume} "
                    "as the tests start"
                )
            collected: list[_Collected] = []
            plan = self._plan(container, attempt, caches, online, collected, copying)
            result = run_phases(request, plan, attempt.started)
            with clock.timing("collect"):
                reports = request.workspace / REPORTS_DIR
                shutil.rmtree(reports, ignore_errors=True)
                reports.mkdir()
                found = collected[0] if collected else _collect_now(container)
                if found is not None:
                    _write_reports(found, reports, request.echo)
                    limits = self._limits_hit(found.counters)
                    result = dataclasses.replace(result, limits_hit=limits)
        finally:
            pool.shutdown(wait=True)
            # Also on KeyboardInterrupt and SystemExit; by name, in case create was cut short.
            with clock.timing("cleanup"):
                with contextlib.suppress(NotFound):
                    client.api.remove_container(name, force=True, v=True)
                with contextlib.suppress(NotFound):
                    client.api.remove_volume(name, force=True)
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
            key = runner_key(image_id, requirements)
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
            key = dependencies_key(image_id, source, setup, variables)
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

    @property
    def _tmpfs_limits(self) -> str:
        size = parse_bytes(self.disk)
        return f"size={size},nr_inodes={max(16384, size // 1024**2 * INODES_PER_MIB)}"

    def _runner_uv_cache(self, caches: _Caches) -> str | None:
        """The uv cache the runner installs from in the run; None when it is not installed."""
        if caches.runner is not None:
            return None
        return RUNNER_CACHE_DIR if self.use_cache else UNCACHED_RUNNER_CACHE_DIR

    def _container(
        self,
        client: docker.DockerClient,
        image: str,
        name: str,
        run_id: str,
        mounts: list[Mount],
        **options: Any,
    ) -> Container:
        """A container that idles until it is used (a run's, or a builder's), labelled with the
        run and its owner, confined as every container is."""
        return client.containers.create(
            image,
            entrypoint=["sleep", "infinity"],
            name=name,
            labels={
                RUN_LABEL: run_id,
                VERSION_LABEL: __version__,
                processes.OWNER_LABEL: processes.owner(),
            },
            tmpfs={"/tmp": f"{self._tmpfs_limits},mode=1777,exec"},
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

    def _create_volume(self, client: docker.DockerClient, name: str, run_id: str) -> None:
        client.volumes.create(
            name,
            driver="local",
            driver_opts={
                "type": "tmpfs",
                "device": "tmpfs",
                "o": f"{self._tmpfs_limits},mode=0755,nosuid,nodev",
            },
            labels={
                RUN_LABEL: run_id,
                VERSION_LABEL: __version__,
                processes.OWNER_LABEL: processes.owner(),
            },
        )

    def _create(
        self,
        client: docker.DockerClient,
        image: str,
        name: str,
        run_id: str,
        caches: _Caches,
        online: bool,
    ) -> Container:
        mounts = [Mount(RUN_DIR, name, type="volume")]
        if caches.runner is not None:
            mounts.append(
                Mount(CACHED_RUNNER_DIR, caches.runner.data_volume, type="volume", read_only=True)
            )
        elif self.use_cache:
            mounts.append(Mount(CACHE_MOUNT, CACHE_VOLUME, type="volume"))
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
            client, image, name, run_id, mounts, network_mode=None if online else "none"
        )

    def _plan(
        self,
        container: Container,
        attempt: _Attempt,
        caches: _Caches,
        online: bool,
        collected: list[_Collected],
        copying: Future[None] | None,
    ) -> Plan:
        request = attempt.request
        tests_env = run_environment(
            path=CONTAINER_PATH,
            home=HOME_DIR,
            extra={**index_variables(os.environ), "UV_CACHE_DIR": TESTS_CACHE_DIR},
            variables=request.command.variables,
        )
        runner_env = run_environment(
            path=CONTAINER_PATH,
            home=RUNNER_HOME,
            extra={
                **index_variables(os.environ),
                "UV_CACHE_DIR": self._runner_uv_cache(caches) or UNCACHED_RUNNER_CACHE_DIR,
            },
            variables={},
        )

        checks = _cache_checks(caches)

        def run(step: Step, log: LogSink, deadline: float) -> tuple[int | None, int]:
            if step.user == "runner":
                env, user, workdir = runner_env, RUNNER_USER, RUNNER_DIR
            else:
                env, user, workdir = {**tests_env, **step.extra_env}, TEST_USER, WORKSPACE_DIR
            if not (step.tests and checks is not None):
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
            python, _, script, *args = step.argv
            plan = _boot_plan(caches, deadline - time.monotonic())
            boot = [python, "-I", "-c", _BOOT, plan, script, *args]
            argv = ["/bin/sh", "-c", checks, "sh", *boot]
            try:
                # From / : the workspace may not be there yet.
                code, left = _run(
                    container, argv, env, user, "/", seen, deadline, kill_leftovers=False
                )
            finally:
                if copying is not None:
                    copying.result()  # its error, when it failed (the step failed with it)
            first = seen.first.decode(errors="replace").split("\n")[0]
            if code == _CACHE_CHECK_FAILED and first.startswith(_CACHE_CHECK_PREFIX):
                # Only the start-up could print first: the runner's start line comes before
                # anything of the submission's.
                failed = first.removeprefix(_CACHE_CHECK_PREFIX)
                if failed == RUNNER and caches.runner is not None:
                    raise _CacheRejected("not whole", caches.runner)
                if failed.startswith(DEPENDENCIES) and caches.dependencies is not None:
                    copy = failed.endswith(" copy")
                    what = "copying it into the workspace failed" if copy else "not whole"
                    raise _CacheRejected(what, caches.dependencies)
                raise InfrastructureError(f"the tests could not start: {failed}")
            return code, left

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
        cut = (lambda: _disconnect(container)) if online and not self.test_network else None
        return Plan(
            run,
            install,
            test_argv,
            before_tests=cut,
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
        full = [folder for folder in (RUN_DIR, "/tmp") if counters.get(f"full {folder}")]
        if full:
            hit.append(f"the disk limit ({self.disk}) was reached: {' and '.join(full)} full")
        return tuple(hit)

    @contextlib.contextmanager
    def _builder(
        self, client: docker.DockerClient, image: str, mounts: list[Mount], run_dir: bool = False
    ) -> Iterator[Container]:
        """A throwaway container, online, confined as a run's (with a run's in-memory volume at
        /scbench when asked), that builds a cached environment; removed, and with it every
        process it ran, when done."""
        build_id = uuid.uuid4().hex
        name = f"scbench-ci-build-{build_id}"
        try:
            if run_dir:
                self._create_volume(client, name, build_id)
                mounts = [Mount(RUN_DIR, name, type="volume"), *mounts]
            yield self._container(client, image, name, build_id, mounts)
        finally:
            with contextlib.suppress(NotFound):
                client.api.remove_container(name, force=True, v=True)
            if run_dir:
                with contextlib.suppress(NotFound):
                    client.api.remove_volume(name, force=True)

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
        """The runner installs pytest and its plugins into the volume (from the uv cache volume
        it shares with later builds), compiled, and writes the key last."""
        log.note(f"building the test runner's environment into cache volume {volume}")
        home = f"{CACHED_RUNNER_DIR}/env/home"
        mounts = [
            Mount(CACHED_RUNNER_DIR, volume, type="volume"),
            Mount(CACHE_MOUNT, CACHE_VOLUME, type="volume"),
        ]
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
            _put_directories(
                container,
                CACHE_MOUNT,
                [(_under(RUNNER_CACHE_DIR, CACHE_MOUNT), RUNNER_UID, RUNNER_GID, 0o700)],
            )
            container.start()
            env = run_environment(
                path=CONTAINER_PATH,
                home=home,
                extra={**index, "UV_CACHE_DIR": RUNNER_CACHE_DIR, "UV_LINK_MODE": "copy"},
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
            _copy_in(container, Path(folder), None)
            env = run_environment(
                path=CONTAINER_PATH,
                home=HOME_DIR,
                extra={**index_variables(os.environ), "UV_CACHE_DIR": TESTS_CACHE_DIR},
                variables=variables,
            )
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


def runner_key(image_id: str, requirements: tuple[str, ...]) -> str:
    """The cached test runner's key: the image, the exact requirements, the index variables."""
    return docker_cache.cache_key(
        RUNNER,
        image=image_id,
        requirements=list(requirements),
        index=index_variables(os.environ),
    )


def dependencies_key(
    image_id: str, requirements: bytes, setup: tuple[str, ...], variables: Mapping[str, str]
) -> str:
    """The cached dependency environment's key: the image, requirements.txt's bytes, the setup
    commands, the index variables and the other variables the setup sees (setup_variables)."""
    return docker_cache.cache_key(
        DEPENDENCIES,
        image=image_id,
        requirements=hashlib.sha256(requirements).hexdigest(),
        setup=list(setup),
        index=index_variables(os.environ),
        variables=dict(variables),
    )


def checked_size(option: str, text: str) -> str:
    try:
        size = parse_bytes(text)
    except DockerException:
        size = 0
    if size <= 0:
        raise UsageError(f"{option}: not a size like 512m or 4g: {text!r}")
    return text


def _run_name(run_id: str) -> str:
    """The name of the run's container and of its volume."""
    return f"scbench-ci-{run_id}"


def _copy_in(container: Container, workspace: Path, runner_uv_cache: str | None) -> None:
    """The workspace and the folders of both users, into the run's volume; the uv cache folder
    the runner installs from (when it installs), there too or in the shared cache volume."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            _add_workspace(tar, workspace)
            for folder, uid, gid, mode in (
                (HOME_DIR, TEST_UID, TEST_GID, 0o700),
                (TESTS_CACHE_DIR, TEST_UID, TEST_GID, 0o700),
                (RUNNER_DIR, RUNNER_UID, RUNNER_GID, 0o755),
                (RUNNER_HOME, RUNNER_UID, RUNNER_GID, 0o700),
            ):
                archive.add_directory(tar, _in_run_dir(folder), uid, gid, mode)
            if runner_uv_cache == UNCACHED_RUNNER_CACHE_DIR:
                archive.add_directory(
                    tar, _in_run_dir(UNCACHED_RUNNER_CACHE_DIR), RUNNER_UID, RUNNER_GID, 0o700
                )
            script = Path(pytest_runner.__file__).read_bytes()
            archive.add_file(tar, _in_run_dir(RUNNER_SCRIPT), script, RUNNER_UID, RUNNER_GID, 0o644)
            # Last: a test step that started alongside waits for it.
            archive.add_file(tar, _in_run_dir(RUNNER_READY), b"", RUNNER_UID, RUNNER_GID, 0o644)
        buffer.seek(0)
        container.put_archive(RUN_DIR, buffer)
    if runner_uv_cache == RUNNER_CACHE_DIR:
        _put_directories(
            container,
            CACHE_MOUNT,
            [(_under(RUNNER_CACHE_DIR, CACHE_MOUNT), RUNNER_UID, RUNNER_GID, 0o700)],
        )


def _put_directories(
    container: Container, target: str, folders: list[tuple[str, int, int, int]]
) -> None:
    """Make folders (relative name, uid, gid, mode) under `target` in the container."""
    with tempfile.TemporaryFile() as buffer:
        with archive.open_writer(buffer) as tar:
            for name, uid, gid, mode in folders:
                archive.add_directory(tar, name, uid, gid, mode)
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


def _boot_plan(caches: _Caches, wait_s: float) -> str:
    """What _BOOT does before the runner, as its JSON argument; it waits for the workspace at
    most `wait_s` (the rest of the session: a copy-in that fails stops the container first)."""
    names = caches.dependencies.names if caches.dependencies is not None else ()
    return json.dumps(
        {
            "prefix": _CACHE_CHECK_PREFIX,
            "code": _CACHE_CHECK_FAILED,
            "ready": RUNNER_READY,
            "wait": max(1.0, wait_s),
            "copy": [f"{CACHED_WORKSPACE}/{name}" for name in names],
            "workspace": WORKSPACE_DIR,
        }
    )


def _kill_on_error(copying: Future[None], container: Container) -> None:
    """A copy-in that failed stops the container, and with it the step waiting for it."""
    if copying.exception() is not None:
        with contextlib.suppress(DockerException, requests.RequestException):
            container.kill()


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
    """The submission's files owned by the tests user; the tests, pytest.ini and the folder itself
    by the runner (sticky: the tests user may add entries, but not rename or remove the runner's).
    """
    root = _in_run_dir(WORKSPACE_DIR)
    archive.add_directory(tar, root, RUNNER_UID, RUNNER_GID, 0o1777)
    for entry in sorted(os.scandir(workspace), key=lambda entry: entry.name):
        if entry.name in RUNNER_OWNED:
            owner, mask = (RUNNER_UID, RUNNER_GID), 0o755
        else:
            owner, mask = (TEST_UID, TEST_GID), 0o777
        archive.add_tree(tar, Path(entry.path), f"{root}/{entry.name}", *owner, mask)


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
