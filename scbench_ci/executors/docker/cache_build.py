"""Building the cached environments (cache.py keeps their volumes): each in a throwaway
container confined as a run's, online, that fills the environment's data volume and writes its
key last; and the keys, everything an environment's content depends on."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from docker.models.containers import Container
from docker.types import Mount

from scbench_ci.executors import archive
from scbench_ci.executors.base import QUALITY_PYTHON, SCB_CHECK
from scbench_ci.executors.child_env import index_variables, run_environment
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker.cache import DEPENDENCIES, QUALITY, RUNNER, STDLIB, Built
from scbench_ci.executors.docker.container import Containers, build_name
from scbench_ci.executors.docker.container_layout import (
    BUILD_UV_CACHE_DIR,
    CACHED_DEPENDENCIES_DIR,
    CACHED_ENV_PYCACHE,
    CACHED_ENV_VENV,
    CACHED_QUALITY_DIR,
    CACHED_RUNNER_DIR,
    CACHED_WORKSPACE,
    CONTAINER_PATH,
    IMAGE_OWNER,
    RUNNER_GID,
    RUNNER_UID,
    RUNNER_USER,
    SCBENCH_PLACE,
    TEST_USER,
    WORKSPACE_DIR,
)
from scbench_ci.executors.docker.exec import run, run_own, tests_environment
from scbench_ci.executors.docker.network import routed
from scbench_ci.executors.docker.transfer import copy_in, put_directories
from scbench_ci.executors.output import LogSink
from scbench_ci.foundation.layout import REQUIREMENTS
from scbench_ci.foundation.signals import Terminated

# Run by the runner in a dependency builder once the setup is done: copy every entry the setup
# made in the workspace (all but requirements.txt) to the volume ($2), one name a line, then the
# key ($1), last. A name the cache could not give back as it is fails it, and so does a
# requirements.txt where the build had none ($3 = none).
_KEEP_WORKSPACE = """set -e
if [ "$3" = none ] && { [ -e requirements.txt ] || [ -L requirements.txt ]; }; then
  echo "the setup made a requirements.txt"; exit 6
fi
for path in * .[!.]* ..?*; do
  { [ -e "$path" ] || [ -L "$path" ]; } || continue
  [ "$path" = requirements.txt ] && continue
  case $path in *[!A-Za-z0-9._-]*) echo "a name the cache does not keep: $path"; exit 5;; esac
  cp -a -- "$path" "$2/"
  echo "$path"
done
printf %s "$1" > "$2/../complete"
"""


CACHE_MOUNTS = {
    RUNNER: CACHED_RUNNER_DIR,
    QUALITY: CACHED_QUALITY_DIR,
    DEPENDENCIES: CACHED_DEPENDENCIES_DIR,
}
"""Where each kind of cached environment is mounted, at build and at use."""

# Whatever does not compile (or a folder it cannot read) is left to be compiled when imported.
_COMPILE_INTO_PREFIX = """import compileall, sysconfig
names = ("stdlib", "platstdlib", "purelib", "platlib")
for folder in sorted({sysconfig.get_path(name) for name in names}):
    compileall.compile_dir(folder, quiet=2)
"""


# Run by the image's python3 as the owner of its files, in the stdlib builder: the folder ($1)
# must be that python3's own; whatever does not compile is left to be compiled when imported.
_COMPILE_STDLIB = """import compileall, sys, sysconfig
folder = sys.argv[1]
if sysconfig.get_path("stdlib") != folder:
    sys.exit(f"python3's standard library is {sysconfig.get_path('stdlib')}, not {folder}")
compileall.compile_dir(folder, quiet=2)
"""


def cached_venv(kind: str) -> str:
    """The virtual environment of the cached environment of `kind`, mounted."""
    return f"{CACHE_MOUNTS[kind]}/{CACHED_ENV_VENV}"


def pycache_prefix(kind: str) -> str:
    """The bytecode prefix of the cached environment of `kind` (CACHED_ENV_PYCACHE), mounted."""
    return f"{CACHE_MOUNTS[kind]}/{CACHED_ENV_PYCACHE}"


def runner_key(image_id: str, requirements: tuple[str, ...], *, scope: str) -> str:
    """The cached test runner's key: the scope, the image, the exact requirements, the index
    variables."""
    return docker_cache.cache_key(
        RUNNER,
        scope=scope,
        image=image_id,
        requirements=list(requirements),
        index=index_variables(os.environ),
        bytecode=pycache_prefix(RUNNER),
    )


def dependencies_key(
    image_id: str,
    requirements: bytes | None,
    setup: tuple[str, ...],
    variables: Mapping[str, str],
    *,
    scope: str,
) -> str:
    """The cached dependency environment's key: the scope, the image, the workspace's path
    (where it was made and is used), requirements.txt's bytes (None: no requirements.txt), the
    setup commands, the index variables and the other variables the setup sees
    (setup_variables)."""
    return docker_cache.cache_key(
        DEPENDENCIES,
        scope=scope,
        image=image_id,
        workspace=WORKSPACE_DIR,
        requirements=None if requirements is None else hashlib.sha256(requirements).hexdigest(),
        setup=list(setup),
        index=index_variables(os.environ),
        variables=dict(variables),
    )


def complete_file(mount: str) -> str:
    """The file a built environment mounted at `mount` holds its key in, written last."""
    return f"{mount}/{docker_cache.COMPLETE_FILE}"


def quality_key(image_id: str, *, scope: str) -> str:
    """The cached quality measure's key: the scope, the image, the pinned requirement and the
    Python it runs on, the index variables."""
    return docker_cache.cache_key(
        QUALITY,
        scope=scope,
        image=image_id,
        requirements=[SCB_CHECK],
        python=QUALITY_PYTHON,
        index=index_variables(os.environ),
        bytecode=pycache_prefix(QUALITY),
    )


def stdlib_key(image_id: str, folder: str, *, scope: str) -> str:
    """The cached standard library's key: the scope, the image, the folder."""
    return docker_cache.cache_key(STDLIB, scope=scope, image=image_id, folder=folder)


def build_stdlib(
    containers: Containers, volume: str, folder: str, log: LogSink, deadline: float
) -> Built | str:
    """The image's standard library folder, copied by Docker into the empty volume mounted over
    it, compiled by the image's python3 as the files' owner (root, without capabilities). No code
    but the image's own runs, offline, and nothing but bytecode is added."""
    log.note(f"compiling the image's standard library ({folder}) into cache volume {volume}")
    mounts = [Mount(folder, volume, type="volume")]
    with _builder(containers, mounts, offline=True) as container:
        container.start()
        env = run_environment(path=containers.path, home="/", extra={}, variables={})
        argv = ["python3", "-c", _COMPILE_STDLIB, folder]
        code, _ = run(container, argv, env, IMAGE_OWNER, "/", log, deadline, kill_leftovers=False)
        if code != 0:
            return _failed(code)
        return Built((), _bytes_in(container, folder, IMAGE_OWNER))


def build_runner(
    containers: Containers,
    volume: str,
    key: str,
    requirements: tuple[str, ...],
    index: Mapping[str, str],
    log: LogSink,
    deadline: float,
) -> Built | str:
    """The runner installs pytest and its plugins into the volume (from a uv cache of the
    build's own), compiled, with the bytecode of its Python's standard library in a prefix
    (pycache_prefix), and writes the key last."""
    log.note(f"building the test runner's environment into cache volume {volume}")
    return _build_venv(containers, volume, key, requirements, index, log, deadline, RUNNER)


def build_quality(
    containers: Containers, volume: str, key: str, log: LogSink, deadline: float
) -> Built | str:
    """As the runner's: scb-check into the volume, on the image's Python 3.12 (none is
    downloaded: an image without one has no quality measure)."""
    log.note(f"building the quality measure's environment ({SCB_CHECK}) into cache volume {volume}")
    return _build_venv(
        containers,
        volume,
        key,
        (SCB_CHECK,),
        index_variables(os.environ),
        log,
        deadline,
        QUALITY,
        python=QUALITY_PYTHON,
    )


def venv_install(venv: str, requirements: tuple[str, ...], python: str | None) -> list[list[str]]:
    """The commands that make a virtual environment at `venv` (on `python`, when named: the
    image's, none is downloaded) holding `requirements`, compiled."""
    chosen = ["--python", python, "--python-preference", "only-system"] if python else []
    installer = ["uv", "pip", "install", "--quiet", "--compile-bytecode", "--python"]
    return [
        ["uv", "venv", "--quiet", *chosen, venv],
        [*installer, f"{venv}/bin/python", *requirements],
    ]


def _build_venv(
    containers: Containers,
    volume: str,
    key: str,
    requirements: tuple[str, ...],
    index: Mapping[str, str],
    log: LogSink,
    deadline: float,
    kind: str,
    python: str | None = None,
) -> Built | str:
    mount = CACHE_MOUNTS[kind]
    home = f"{mount}/env/home"
    mounts = [Mount(mount, volume, type="volume")]
    with _builder(containers, mounts) as container:
        # Volumes on disk take files before the container starts.
        put_directories(
            container,
            mount,
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
        venv = cached_venv(kind)
        compile_all = [f"{venv}/bin/python", "-X", f"pycache_prefix={pycache_prefix(kind)}"]
        for argv in [
            *venv_install(venv, requirements, python),
            [*compile_all, "-c", _COMPILE_INTO_PREFIX],
        ]:
            log.note(f"$ {' '.join(argv)}")
            code, _ = run(
                container,
                argv,
                env,
                RUNNER_USER,
                f"{mount}/env",
                log,
                deadline,
                kill_leftovers=False,
            )
            if code != 0:
                return _failed(code)
        code, output = run_own(
            container,
            ["/bin/sh", "-c", 'printf %s "$1" > "$2"', "sh", key, complete_file(mount)],
            RUNNER_USER,
        )
        if code != 0:
            return f"marking it complete failed: {output.strip()}"
        return Built((), _bytes_in(container, mount, RUNNER_USER))


def build_dependencies(
    containers: Containers,
    volume: str,
    key: str,
    requirements: bytes | None,
    workspace: Path,
    setup_commands: tuple[str, ...],
    variables: Mapping[str, str],
    log: LogSink,
    deadline: float,
) -> Built | str:
    """The setup commands, run by the tests user with the network and the environment they
    have in a run, in a workspace at the run's path that holds only requirements.txt (these
    bytes, with the staged file's mode and time), or nothing when None; then the runner copies
    what they made there into the volume and writes the key last. Nothing of the submission's
    is in the builder but these bytes: whatever it holds, it cannot shape what others get."""
    holds = f"only {REQUIREMENTS}" if requirements is not None else "nothing"
    log.note(
        f"building the dependency environment into cache volume {volume}: the setup runs "
        f"once, in a workspace that holds {holds}"
    )
    mounts = [Mount(CACHED_DEPENDENCIES_DIR, volume, type="volume")]
    with (
        _builder(containers, mounts, run_dir=True) as container,
        tempfile.TemporaryDirectory(prefix="scbench-requirements-") as folder,
    ):
        put_directories(
            container,
            CACHED_DEPENDENCIES_DIR,
            [
                ("env", RUNNER_UID, RUNNER_GID, 0o755),
                ("env/workspace", RUNNER_UID, RUNNER_GID, 0o755),
            ],
        )
        container.start()
        if requirements is not None:
            alone = Path(folder) / REQUIREMENTS
            alone.write_bytes(requirements)
            shutil.copystat(workspace / REQUIREMENTS, alone, follow_symlinks=False)
        copy_in(container, Path(folder), installs_runner=False, place=SCBENCH_PLACE)
        env = tests_environment(variables, containers.path)
        for command in setup_commands:
            log.note(f"$ {command}")
            code, left = run(
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
        if requirements is not None:
            chunks, _ = container.get_archive(f"{WORKSPACE_DIR}/{REQUIREMENTS}")
            if archive.read_member(chunks, REQUIREMENTS, len(requirements)) != requirements:
                return f"the setup changed {REQUIREMENTS}"
        had = "none" if requirements is None else REQUIREMENTS
        code, output = run_own(
            container,
            ["/bin/sh", "-c", _KEEP_WORKSPACE, "sh", key, CACHED_WORKSPACE, had],
            RUNNER_USER,
            WORKSPACE_DIR,
        )
        if code != 0:
            return f"keeping what the setup made failed: {output.strip()[:500]}"
        size = _bytes_in(container, CACHED_DEPENDENCIES_DIR, RUNNER_USER)
    names = tuple(output.split())
    if not names or not all(docker_cache.SAFE_NAME.fullmatch(name) for name in names):
        return "the setup made nothing in the workspace"
    return Built(names, size)


@contextlib.contextmanager
def _builder(
    containers: Containers, mounts: list[Mount], run_dir: bool = False, offline: bool = False
) -> Iterator[Container]:
    """A throwaway container, online unless asked, confined as a run's (with a run's in-memory
    volumes at /scbench and the workspace when asked), that builds a cached environment;
    removed, and with it every process it ran, when done."""
    build_id = uuid.uuid4().hex
    name = build_name(build_id)
    try:
        limits = containers.folder_limits()
        if run_dir:
            mounts = [*containers.create_volumes(name, build_id, limits), *mounts]
        network: dict[str, Any] = {"network_mode": "none"}
        if not offline:
            network = {"network_mode": containers.network}
            if containers.blocked:
                network.update(routed(list(containers.blocked)))
        yield containers.create(name, build_id, mounts, limits, **network)
    except (KeyboardInterrupt, Terminated):
        containers.remove(name, volumes=run_dir, after_signal=True)
        raise
    finally:
        containers.remove(name, volumes=run_dir)


def _bytes_in(container: Container, folder: str, user: str) -> int:
    """What a built environment's volume, mounted at `folder`, holds on disk (what `du` can
    read of it as `user`; 0 when it cannot tell)."""
    _, output = run_own(container, ["du", "-sk", folder], user)
    # Its last line is the total (what it could not read is said before it).
    last = output.strip().rsplit("\n", 1)[-1].split()
    return int(last[0]) * 1024 if last and last[0].isdigit() else 0


def _failed(code: int | None) -> str:
    return "it stopped at the session timeout" if code is None else f"exit code {code}"
