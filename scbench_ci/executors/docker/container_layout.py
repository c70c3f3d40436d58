"""Where things live in a run's container, and who owns them: the evaluator's folders, the
workspace, the cached environments' mounts, and the three users."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.foundation.layout import (
    PYTEST_INI,
    SCBENCH_TESTS_USER,
    SCBENCH_WORKDIR,
    WORKSPACE_TESTS_DIR,
)

RUN_DIR = "/scbench"
"""The evaluator's own folders in the run (the runner's); the tests' are where SCBench has them."""
WORKSPACE_DIR = SCBENCH_WORKDIR
"""SCBench's default working directory: the project `uv init` makes there is named
`workspace`, and paths the tests or the submission print are the same."""
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
CACHED_ENV_VENV = "env/venv"
"""In a cached environment's volume: its virtual environment."""
CACHED_ENV_PYCACHE = "env/pycache"
"""In a cached environment's volume: the bytecode of its Python's standard library and its
packages, by `-X pycache_prefix` (python images delete the standard library's bytecode, and no run
can write it, so each process would compile every module it imports again)."""
CACHED_DEPENDENCIES_DIR = "/scbench-cache/dependencies"
"""Where the cached dependency environment's volume is mounted (read-only); its `env/workspace`
holds what the setup made in the workspace, for the same workspace path."""
CACHED_WORKSPACE = f"{CACHED_DEPENDENCIES_DIR}/env/workspace"
CACHED_QUALITY_DIR = "/scbench-cache/quality"
"""Where the cached quality measure's environment (scb-check) is mounted (read-only)."""
QUALITY_DIR = f"{RUN_DIR}/quality"
"""The quality measure's folder (the runner's): the submission's files as staged, its own
environment when it is installed in the run, and the measure's working directory (where no
configuration file of the submission's is found)."""
QUALITY_SOURCE = f"{QUALITY_DIR}/source"
"""The submission's files as staged, copied in with the workspace and the runner's, readable
but not writable by the tests user: what the tests do to the workspace is not measured."""
QUALITY_VENV = f"{QUALITY_DIR}/venv"
TEST_USER = SCBENCH_TESTS_USER
TEST_UID, TEST_GID = (int(part) for part in TEST_USER.split(":"))
RUNNER_UID = RUNNER_GID = 1001
RUNNER_USER = f"{RUNNER_UID}:{RUNNER_GID}"
IDLE_USER = "65534:65534"
IMAGE_OWNER = "0:0"
"""Who owns the image's files: only the standard library's builder runs as it, with no
capabilities, to compile that folder's copy (cache_build.build_stdlib)."""
RUNNER_OWNED = frozenset({WORKSPACE_TESTS_DIR, PYTEST_INI})
"""The workspace entries the tests may read but not change: the problem's tests and pytest.ini."""
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class TestsPlace:
    """Who setup and the tests run as, and where the workspace is: SCBench's defaults, or an
    environment file's `docker.user` and `docker.workdir`. The tests user owns the submission's
    files and HOME, as the agent owns them in SCBench's image."""

    __test__ = False  # not a pytest test class

    user: str = TEST_USER
    workdir: str = WORKSPACE_DIR

    @property
    def ids(self) -> tuple[int, int]:
        uid, gid = self.user.split(":")
        return int(uid), int(gid)


SCBENCH_PLACE = TestsPlace()
"""SCBench's defaults: 1000:1000 in /workspace (the cached dependency environments' only place,
as they serve only SCBench's default environment)."""
