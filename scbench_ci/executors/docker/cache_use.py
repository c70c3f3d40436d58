"""The cached environments a run uses: obtained by their keys (built by cache_build.py when they
are not there yet), mounted read-only, and checked whole before the tests rely on them; the
dependency environment is restored into the workspace in place of the setup; the image's
standard library, with its bytecode, mounted over the image's own."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

from docker.models.containers import Container
from docker.types import Mount

from scbench_ci.executors import archive
from scbench_ci.executors.base import QUALITY_INSTALL_TIMEOUT_S, ExecutionRequest
from scbench_ci.executors.child_env import index_variables
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker import cache_bounds
from scbench_ci.executors.docker.cache import DEPENDENCIES, QUALITY, RUNNER, STDLIB, Cached
from scbench_ci.executors.docker.cache_build import (
    CACHE_MOUNTS,
    build_dependencies,
    build_quality,
    build_runner,
    build_stdlib,
    complete_file,
    dependencies_key,
    quality_key,
    runner_key,
    stdlib_key,
)
from scbench_ci.executors.docker.container import Containers
from scbench_ci.executors.docker.container_layout import (
    CACHED_WORKSPACE,
    TEST_USER,
    WORKSPACE_DIR,
    TestsPlace,
)
from scbench_ci.executors.docker.exec import Log, run
from scbench_ci.executors.output import LogSink
from scbench_ci.executors.phases import PhaseClock
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.foundation.layout import REQUIREMENTS

_CACHE_CHECK_PREFIX = "[scbench-ci] cache check failed: "
_CACHE_CHECK_FAILED = 125
# Restores the cached dependency environment into the workspace, as the tests user, before the
# tests: copies its entries in ($2...); then, when $1 is `finish`, finishes it as the tests' first
# `uv run` would (a copy is not the folder it was made in: uv may rebuild the workspace's own
# package), its output going to setup.log, and it must be indistinguishable from the setup it
# replaces: a second `uv run` has nothing to do and prints nothing. Without `finish` (no
# requirements.txt: the setup left the project uninstalled), the tests' first `uv run` builds it,
# and prints so, as under SCBench. Nothing of the submission's runs: `/bin/true` by its path.
_RESTORE_DEPENDENCIES = f"""finish=$1; shift
cp -a -- "$@" {WORKSPACE_DIR}/ || exit 1
[ "$finish" = finish ] || exit 0
uv run /bin/true || exit 1
second=$(uv run /bin/true 2>&1) || exit 1
[ -z "$second" ] || {{ printf 'a second uv run printed: %.300s\n' "$second"; exit 1; }}
"""


@dataclass(frozen=True)
class Stdlib:
    """The image's standard library folder and its compiled copy."""

    folder: str
    cached: Cached


@dataclass(frozen=True)
class Caches:
    """The cached environments a run uses: none, and it installs the runner and runs the setup
    itself."""

    runner: Cached | None = None
    dependencies: Cached | None = None
    quality: Cached | str | None = None
    """The quality measure's environment, or why it could not be had; None: not asked for, or
    no caches at all (the run then installs it itself)."""
    stdlib: Stdlib | None = None

    def used(self) -> list[Cached]:
        """Every environment the run uses."""
        quality = self.quality if isinstance(self.quality, Cached) else None
        stdlib = self.stdlib.cached if self.stdlib is not None else None
        return [
            cached
            for cached in (self.runner, self.dependencies, quality, stdlib)
            if cached is not None
        ]

    def mounts(self) -> list[Mount]:
        """Each environment's data volume, read-only, where it was built."""
        quality = self.quality if isinstance(self.quality, Cached) else None
        mounts = [
            Mount(CACHE_MOUNTS[cached.kind], cached.data_volume, type="volume", read_only=True)
            for cached in (self.runner, self.dependencies, quality)
            if cached is not None
        ]
        if self.stdlib is not None:
            volume = self.stdlib.cached.data_volume
            mounts.append(Mount(self.stdlib.folder, volume, type="volume", read_only=True))
        return mounts


class CacheRejected(Exception):
    """A cached environment, mounted, is not whole: the run starts over without caches."""

    def __init__(self, reason: str, cached: Cached) -> None:
        super().__init__(f"cache volume {cached.data_volume}: {reason}")
        self.cached = cached


def obtain_caches(
    containers: Containers,
    image_id: str,
    request: ExecutionRequest,
    log: LogSink,
    deadline: float,
    clock: PhaseClock,
    *,
    scope: str,
    stdlib_folder: str | None,
    max_bytes: int,
) -> Caches:
    """The cached environments this run can use, built now when they are not there yet; `scope`
    says who may share them; `stdlib_folder`: the image's standard library folder, if known.
    Their use is recorded, and once one is built the daemon's caches are held to their bounds
    (`max_bytes`, cache_bounds.py)."""
    index = index_variables(os.environ)
    requirements = request.command.requirements
    with clock.timing("runner"):
        key = runner_key(image_id, requirements, scope=scope)
        runner = docker_cache.obtain(
            containers.client,
            RUNNER,
            key,
            lambda volume: build_runner(
                containers, volume, key, requirements, index, log, deadline
            ),
            log.note,
        )
    if isinstance(runner, str):
        log.note(f"no cached test runner ({runner}): it is installed for this run")
    else:
        log.note(f"test runner: the cached environment of volume {runner.data_volume}")
    caches = Caches(
        runner if isinstance(runner, Cached) else None,
        _dependencies(containers, image_id, request, log, deadline, clock, scope),
        _quality(containers, image_id, log, clock, scope) if request.quality else None,
        _stdlib(containers, image_id, stdlib_folder, log, deadline, clock, scope),
    )
    used = caches.used()
    cache_bounds.record_use(containers.client, used)
    if any(cached.built for cached in used):
        cache_bounds.hold_to_bounds(containers.client, max_bytes, log.note)
    return caches


def _stdlib(
    containers: Containers,
    image_id: str,
    folder: str | None,
    log: LogSink,
    deadline: float,
    clock: PhaseClock,
    scope: str,
) -> Stdlib | None:
    """The image's standard library compiled, or None (each process then compiles what it
    imports, as under SCBench)."""
    if folder is None:
        return None
    with clock.timing("runner"):
        key = stdlib_key(image_id, folder, scope=scope)
        cached = docker_cache.obtain(
            containers.client,
            STDLIB,
            key,
            lambda volume: build_stdlib(containers, volume, folder, log, deadline),
            log.note,
        )
    if isinstance(cached, str):
        log.note(f"the standard library's bytecode could not be had ({cached}): none is used")
        return None
    return Stdlib(folder, cached)


def _quality(
    containers: Containers,
    image_id: str,
    log: LogSink,
    clock: PhaseClock,
    scope: str,
) -> Cached | str:
    """The quality measure's environment, or why there is none: a failure to build it is the
    measure's, never the run's."""
    with clock.timing("quality"):
        key = quality_key(image_id, scope=scope)
        cached = docker_cache.obtain(
            containers.client,
            QUALITY,
            key,
            lambda volume: build_quality(
                containers, volume, key, log, time.monotonic() + QUALITY_INSTALL_TIMEOUT_S
            ),
            log.note,
        )
    if isinstance(cached, str):
        log.note(f"no quality measure for this run: its environment could not be built ({cached})")
        return f"scb-check could not be installed in the image ({cached}; see setup.log)"
    return cached


def _dependencies(
    containers: Containers,
    image_id: str,
    request: ExecutionRequest,
    log: LogSink,
    deadline: float,
    clock: PhaseClock,
    scope: str,
) -> Cached | None:
    # Made as 1000:1000 in /workspace: SCBench's default environment's place, and only its.
    scbench_place = (request.tests_user, request.workdir) == (TEST_USER, WORKSPACE_DIR)
    source = docker_cache.dependency_source(
        request.workspace,
        request.setup_commands,
        request.default_environment and scbench_place,
    )
    if source is None:
        return None
    if isinstance(source, str):
        log.note(f"the setup runs here, not from the dependency cache: {source}")
        return None
    variables = docker_cache.setup_variables(request.command.variables)
    setup = request.setup_commands
    with clock.timing("setup"):
        key = dependencies_key(image_id, source.requirements, setup, variables, scope=scope)
        cached = docker_cache.obtain(
            containers.client,
            DEPENDENCIES,
            key,
            lambda volume: build_dependencies(
                containers,
                volume,
                key,
                source.requirements,
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
    return replace(cached, finish=source.requirements is not None)


def restore_notice(cached: Cached) -> str:
    """What setup.log says in place of the setup the cached dependency environment stands for."""
    if cached.finish:
        setup, made_of = docker_cache.DEFAULT_SETUP, f"this {REQUIREMENTS}"
    else:
        setup, made_of = (
            docker_cache.SETUP_WITHOUT_REQUIREMENTS,
            f"a workspace without {REQUIREMENTS}",
        )
    shown = ", then ".join(f"`{command}`" for command in setup)
    finished = ", then finished as the tests' first `uv run` would" if cached.finish else ""
    return (
        f"setup: not run here; what {shown} made of {made_of} ({', '.join(cached.names)}) is "
        f"copied into the workspace from cache volume {cached.data_volume}{finished}"
    )


def run_checked(
    container: Container,
    cached: Cached,
    argv: list[str],
    env: dict[str, str],
    user: str,
    workdir: str,
    log: Log,
    deadline: float,
    *,
    kill_leftovers: bool,
) -> tuple[int | None, int]:
    """Run `argv` (exec.run) once the cached environment says it is complete for its key;
    CacheRejected when it does not. The check says so on the first line and exits with
    _CACHE_CHECK_FAILED; nothing else runs before it."""
    seen = FirstBytes(log)
    code, left = run(
        container,
        checked(cached, argv),
        env,
        user,
        workdir,
        seen,
        deadline,
        kill_leftovers=kill_leftovers,
    )
    reject_unchecked(cached, code, seen)
    return code, left


def checked(cached: Cached, argv: list[str]) -> list[str]:
    """`argv`, run once the cached environment says it is complete for its key."""
    check = (
        f'[ "$(cat {complete_file(CACHE_MOUNTS[cached.kind])} 2>/dev/null)" = {cached.key} ] || '
        f'{{ echo "{_CACHE_CHECK_PREFIX}{cached.kind}"; exit {_CACHE_CHECK_FAILED}; }}\n'
        'exec "$@"'
    )
    return ["/bin/sh", "-c", check, "sh", *argv]


def reject_unchecked(cached: Cached, code: int | None, seen: FirstBytes) -> None:
    """CacheRejected when the `checked` command's check failed (its exit code, its output)."""
    if code == _CACHE_CHECK_FAILED and seen.first.startswith(_CACHE_CHECK_PREFIX.encode()):
        raise CacheRejected("not whole", cached)


def restore_dependencies(
    container: Container, cached: Cached, env: dict[str, str], log: LogSink, deadline: float
) -> None:
    """The cached dependency environment into the workspace, finished and checked
    (_RESTORE_DEPENDENCIES); CacheRejected when it is not what the setup would have made."""
    paths = [f"{CACHED_WORKSPACE}/{name}" for name in cached.names]
    finish = "finish" if cached.finish else "copy"
    argv = ["/bin/sh", "-c", _RESTORE_DEPENDENCIES, "sh", finish, *paths]
    # A copy leaves nothing running (and a test runner started ahead waits).
    code, _ = run_checked(
        container,
        cached,
        argv,
        env,
        TEST_USER,
        WORKSPACE_DIR,
        log,
        deadline,
        kill_leftovers=cached.finish,
    )
    if code is None:
        raise InfrastructureError("the session timed out while the cached dependencies went in")
    if code != 0:
        raise CacheRejected("restoring it into the workspace failed (see above)", cached)


MAX_RESTORED_BYTES = 16 * 1024 * 1024
"""What the dependency environment of a workspace without requirements.txt brings is small (a
project and an empty virtual environment); more than this is restored by copying."""


def restored_entries(container: Container, cached: Cached, place: TestsPlace) -> bytes | str:
    """What restoring `cached` without finishing it (`cp -a` of its entries, as the tests user)
    puts into the workspace, as an archive to go in with the workspace's: taken from the run's
    container, where the environment is mounted, once it says it is complete for its key
    (CacheRejected when it does not); else why it cannot be had this way."""
    mount = CACHE_MOUNTS[cached.kind]
    chunks, _ = container.get_archive(complete_file(mount))
    complete = archive.read_member(chunks, "complete", 1024)
    if not isinstance(complete, bytes) or complete.decode(errors="replace").strip() != cached.key:
        raise CacheRejected("not whole", cached)
    folder = CACHED_WORKSPACE.rsplit("/", 1)[1]
    chunks, _ = container.get_archive(CACHED_WORKSPACE)
    return archive.entries_of(chunks, folder, cached.names, *place.ids, MAX_RESTORED_BYTES)


class FirstBytes:
    """A log that keeps the first bytes written to it, as they pass."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.first = b""

    def write(self, chunk: bytes) -> None:
        if len(self.first) < 256:
            self.first += chunk[: 256 - len(self.first)]
        self.log.write(chunk)
