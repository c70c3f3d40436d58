"""The Docker executor's cached environments, against the real daemon: the test runner's and the
default environment's dependencies; built once, read-only to the runs, never used when not whole,
and only where they stand in exactly for what a run would do itself."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.base import (
    EVALUATION_CACHE_SCOPE,
    ExecutionRequest,
    ExecutionResult,
    TestCommand,
)
from scbench_ci.executors.docker import cache as docker_cache
from scbench_ci.executors.docker.cache import (
    CACHE_LABEL,
    DATA_LABEL,
    DEFAULT_SETUP,
    KEY_LABEL,
    NAMES_LABEL,
    RUNNER,
    SETUP_WITHOUT_REQUIREMENTS,
    DependencySource,
    dependency_source,
    marker_name,
    requirements_reason,
)
from scbench_ci.executors.docker.cache_build import (
    build_dependencies,
    build_stdlib,
    dependencies_key,
    runner_key,
)
from scbench_ci.executors.docker.container import Containers, confinement
from scbench_ci.executors.docker.container_layout import (
    CACHED_DEPENDENCIES_DIR,
    CACHED_RUNNER_DIR,
    CACHED_WORKSPACE,
)
from scbench_ci.executors.docker.disk import tmpfs_limits
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.output import LogSink
from scbench_ci.foundation.layout import SETUP_LOG
from scbench_ci.job.environment import default_environment
from testing.cache_volumes import remove_cache_volumes
from testing.probes import PROBE_KEY, PROBE_OUTPUT, probe_command

BUILDING_RUNNER = "building the test runner's environment into cache volume"
BUILDING_DEPENDENCIES = "building the dependency environment into cache volume"
CACHED_RUNNER = re.compile(r"\[scbench-ci\] test runner: the cached environment of volume (\S+)")
PER_RUN_INSTALL = "[scbench-ci] $ uv venv --quiet /scbench/runner/venv"


def execute(
    folder: Path,
    code: str,
    *,
    executor: DockerExecutor | None = None,
    requirements: tuple[str, ...] = ("pytest",),
    setup: tuple[str, ...] = (),
    default_environment: bool = False,
    files: dict[str, str] | None = None,
    variables: dict[str, str] | None = None,
) -> tuple[ExecutionResult, str]:
    """Run probe code (as the tests' collection) in a workspace of `files`, with the command's
    `variables` besides the checkpoint's; the result and setup.log."""
    workspace = folder / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    for name, text in (files or {}).items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    logs = folder / "logs"
    logs.mkdir()
    probe = probe_command(
        workspace, code, {"SCBENCH_CHECKPOINT": "checkpoint_1", **(variables or {})}
    )
    command = TestCommand(requirements, probe.pytest_args, probe.variables)
    result = (executor or DockerExecutor(DockerSettings())).execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=setup,
            command=command,
            session_timeout_s=300,
            seal_key=PROBE_KEY,
            echo=None,
            default_environment=default_environment,
        )
    )
    return result, (logs / SETUP_LOG).read_text()


def probed(folder: Path) -> object:
    return json.loads((folder / "workspace" / PROBE_OUTPUT).read_text())


@pytest.fixture
def image_id(docker_client: docker.DockerClient, test_image: str) -> str:
    return str(docker_client.images.get(test_image).id)


@pytest.fixture
def fresh_runner(docker_client: docker.DockerClient, image_id: str) -> Iterator[tuple[str, ...]]:
    """Runner requirements no cached environment has yet (the same pytest, under a marker that
    always holds); its cache volumes are removed afterwards."""
    requirements = (f'pytest ; sys_platform != "scbench-{uuid.uuid4().hex}"',)
    yield requirements
    remove_cache_volumes(
        docker_client, runner_key(image_id, requirements, scope=EVALUATION_CACHE_SCOPE)
    )


# --- the test runner's environment ---------------------------------------------------------------

WHICH_PYTHON = """
import json, sys
json.dump({"prefix": sys.prefix}, open(PROBE_OUTPUT, "w"))
"""


def test_the_first_run_builds_the_runner_cache_and_the_next_one_uses_it(
    tmp_path: Path, test_image: str, fresh_runner: tuple[str, ...]
) -> None:
    executor = DockerExecutor(DockerSettings(image=test_image))

    first, first_log = execute(
        tmp_path / "1", WHICH_PYTHON, executor=executor, requirements=fresh_runner
    )
    second, second_log = execute(
        tmp_path / "2", WHICH_PYTHON, executor=executor, requirements=fresh_runner
    )

    assert (first.exit_code, second.exit_code) == (0, 0)
    assert BUILDING_RUNNER in first_log
    built = CACHED_RUNNER.search(first_log)
    assert built is not None
    # Nothing installed, nothing else to say.
    assert second_log == f"[scbench-ci] test runner: the cached environment of volume {built[1]}\n"
    assert probed(tmp_path / "2") == {"prefix": f"{CACHED_RUNNER_DIR}/env/venv"}
    assert list(second.phases) == ["image", "container", "runner", "tests", "collect", "cleanup"]


TRY_TO_WRITE = """
import errno, json, os
venv = "/scbench-cache/runner/env/venv"
tried = {}
for what, attempt in {
    "create a file": lambda: open(f"{venv}/planted.py", "x"),
    "change a file": lambda: open(f"{venv}/pyvenv.cfg", "a"),
    "remove a file": lambda: os.remove(f"{venv}/pyvenv.cfg"),
    "make a folder": lambda: os.mkdir(f"{venv}/bin/planted"),
    "rename the environment": lambda: os.rename(venv, f"{venv}.old"),
}.items():
    try:
        attempt()
        tried[what] = "done"
    except OSError as error:
        tried[what] = errno.errorcode[error.errno]
mounts = [line.split() for line in open("/proc/self/mountinfo")]
options = [fields[5] for fields in mounts if fields[4] == "/scbench-cache/runner"]
status = os.stat(venv)
mode = oct(status.st_mode & 0o7777)
json.dump(
    {"tried": tried, "options": options, "owner": status.st_uid, "mode": mode},
    open(PROBE_OUTPUT, "w"),
)
"""


def test_the_cached_runner_is_read_only_to_the_tests(tmp_path: Path, test_image: str) -> None:
    result, _ = execute(
        tmp_path, TRY_TO_WRITE, executor=DockerExecutor(DockerSettings(image=test_image))
    )

    assert result.exit_code == 0
    seen = probed(tmp_path)
    assert isinstance(seen, dict)
    # Writing anything fails: the mount is read-only (and most files are not theirs anyway).
    assert seen["tried"]["create a file"] == "EROFS"
    assert set(seen["tried"].values()) <= {"EROFS", "EACCES"}, seen["tried"]
    [options] = seen["options"]
    assert options.split(",")[0] == "ro"
    # The runner's, and nobody else may write it even where it is not mounted read-only.
    assert (seen["owner"], seen["mode"]) == (1001, "0o755")


def _publish(
    client: docker.DockerClient,
    image: str,
    key: str,
    labels: dict[str, str],
    complete: str | None,
) -> str:
    """A marker for the key with `labels`, naming a data volume made by hand whose `complete`
    file says `complete` (none: there is no such file); the data volume's name."""
    data = f"scbench-ci-test-data-{uuid.uuid4().hex[:12]}"
    client.volumes.create(data, labels={CACHE_LABEL: RUNNER, KEY_LABEL: key})
    if complete is not None:
        client.containers.run(
            image,
            [
                "/bin/sh",
                "-c",
                'mkdir -p /data/env && printf %s "$0" > /data/env/complete',
                complete,
            ],
            volumes={data: {"bind": "/data", "mode": "rw"}},
            remove=True,
        )
    client.volumes.create(
        marker_name(RUNNER, key),
        labels={CACHE_LABEL: RUNNER, KEY_LABEL: key, DATA_LABEL: data, NAMES_LABEL: "", **labels},
    )
    return data


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("no complete mark", "not whole: it is removed, and this run does without caches"),
        ("a mark for another key", "not whole: it is removed, and this run does without caches"),
        ("a marker of another key", "was not used and is removed: its labels are not the ones"),
        ("a marker whose data is gone", "was not used and is removed: its data volume"),
    ],
)
def test_a_cache_that_is_not_whole_is_not_used(
    tmp_path: Path,
    test_image: str,
    docker_client: docker.DockerClient,
    image_id: str,
    fresh_runner: tuple[str, ...],
    case: str,
    expected: str,
) -> None:
    key = runner_key(image_id, fresh_runner, scope=EVALUATION_CACHE_SCOPE)
    complete = {"no complete mark": None, "a mark for another key": "0" * 64}.get(case, key)
    labels = {KEY_LABEL: "0" * 64} if case == "a marker of another key" else {}
    data = _publish(docker_client, test_image, key, labels, complete)
    if case == "a marker whose data is gone":
        docker_client.volumes.get(data).remove()

    result, log = execute(
        tmp_path,
        WHICH_PYTHON,
        executor=DockerExecutor(DockerSettings(image=test_image)),
        requirements=fresh_runner,
    )

    assert result.exit_code == 0, log
    assert expected in log
    prefix = probed(tmp_path)
    assert isinstance(prefix, dict)
    if case.startswith("a marker"):
        # Found out before the run: a new environment is built and used.
        assert BUILDING_RUNNER in log
        assert prefix == {"prefix": f"{CACHED_RUNNER_DIR}/env/venv"}
    else:
        # Found out in the run, before the tests: the run starts over, installing the runner.
        assert PER_RUN_INSTALL in log
        assert prefix == {"prefix": "/scbench/runner/venv"}
        with pytest.raises(docker.errors.NotFound):
            docker_client.volumes.get(marker_name(RUNNER, key))
        # And its data, which the run no longer used.
        assert data not in {v.name for v in docker_client.volumes.list()}


def test_threads_of_one_process_build_once(
    tmp_path: Path, test_image: str, fresh_runner: tuple[str, ...]
) -> None:
    executor = DockerExecutor(DockerSettings(image=test_image))
    logs: dict[int, str] = {}

    def run(number: int) -> None:
        result, logs[number] = execute(
            tmp_path / str(number), WHICH_PYTHON, executor=executor, requirements=fresh_runner
        )
        assert result.exit_code == 0

    threads = [threading.Thread(target=run, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(log.count(BUILDING_RUNNER) for log in logs.values()) == 1
    volumes = {match[1] for log in logs.values() if (match := CACHED_RUNNER.search(log))}
    assert len(volumes) == 1


def test_of_two_builders_the_first_to_publish_wins(
    docker_client: docker.DockerClient, image_id: str
) -> None:
    """Another process publishes while this one builds: this one takes the other's and drops its
    own; neither waited on the other."""
    key = docker_cache.cache_key(RUNNER, test=uuid.uuid4().hex)
    other = f"scbench-ci-test-data-{uuid.uuid4().hex[:12]}"
    built: list[str] = []

    def build(volume: str) -> docker_cache.Built:
        built.append(volume)
        docker_client.volumes.create(other, labels={CACHE_LABEL: RUNNER, KEY_LABEL: key})
        docker_client.volumes.create(
            marker_name(RUNNER, key),
            labels={CACHE_LABEL: RUNNER, KEY_LABEL: key, DATA_LABEL: other},
        )
        return docker_cache.Built((), 0)

    try:
        found = docker_cache.obtain(docker_client, RUNNER, key, build, print)

        assert isinstance(found, docker_cache.Cached)
        assert found.data_volume == other
        with pytest.raises(docker.errors.NotFound):
            docker_client.volumes.get(built[0])
        # The next one finds it.
        assert docker_cache.lookup(docker_client, RUNNER, key, print) == found
    finally:
        remove_cache_volumes(docker_client, key)


# --- the image's standard library ----------------------------------------------------------------

LIST_STDLIB = r"""
import hashlib, json, os, sysconfig
root = sysconfig.get_path("stdlib")
entries, compiled = {}, 0
for folder, folders, files in os.walk(root):
    if os.path.basename(folder) == "__pycache__":
        compiled += "site-packages" not in folder and any(n.endswith(".pyc") for n in files)
        continue
    for name in folders + files:
        if name == "__pycache__":
            continue
        path = os.path.join(folder, name)
        status = os.lstat(path)
        if os.path.islink(path):
            content = os.readlink(path)
        elif os.path.isfile(path):
            content = hashlib.sha256(open(path, "rb").read()).hexdigest()
        else:  # a folder's time is when an entry was added last: a __pycache__ in a run
            content = None
        kept = (status.st_size, int(status.st_mtime)) if content is not None else (0, 0)
        entries[os.path.relpath(path, root)] = [
            oct(status.st_mode), status.st_uid, status.st_gid, *kept, content
        ]
print(json.dumps({"root": root, "entries": entries, "compiled": compiled}))
"""
CACHED_JSON = (
    "import json, os, sys; print(json.dumps([sys.pycache_prefix, os.path.exists(json.__cached__)]))"
)
SUBMISSION_S_VIEW = f"""
import errno, json, os, subprocess, sysconfig
def child(code):
    return json.loads(subprocess.run(["python3", "-c", code], capture_output=True, text=True,
                                     check=True).stdout)
root = sysconfig.get_path("stdlib")
try:
    open(os.path.join(root, "planted.py"), "x")
    planted = "done"
except OSError as error:
    planted = errno.errorcode[error.errno]
options = [line.split()[5] for line in open("/proc/self/mountinfo") if line.split()[4] == root]
json.dump(
    {{"listing": child({LIST_STDLIB!r}), "json": child({CACHED_JSON!r}), "planted": planted,
     "options": options}},
    open(PROBE_OUTPUT, "w"),
)
"""


def test_the_tests_read_the_bytecode_of_a_copy_of_the_image_s_own_standard_library(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient
) -> None:
    def in_the_image(code: str) -> object:
        output = docker_client.containers.run(
            test_image, ["python3", "-c", code], user="1000:1000", remove=True
        )
        return json.loads(output)

    result, _ = execute(
        tmp_path, SUBMISSION_S_VIEW, executor=DockerExecutor(DockerSettings(image=test_image))
    )

    assert result.exit_code == 0
    seen = probed(tmp_path)
    assert isinstance(seen, dict)
    image = in_the_image(LIST_STDLIB)
    assert isinstance(image, dict)
    # The image has no bytecode of its standard library (as the python images; the stand-in's
    # pip has some), and its processes cannot write it.
    assert image["compiled"] == 0
    assert in_the_image(CACHED_JSON) == [None, False]
    # In a run, the submission's processes read it, from no prefix of scbench-ci's: the same
    # folder, with the same files, owners, modes, times and contents, and bytecode besides.
    assert seen["json"] == [None, True]
    assert seen["listing"]["root"] == image["root"] == "/usr/local/lib/python3.12"
    assert seen["listing"]["entries"] == image["entries"]
    assert seen["listing"]["compiled"] >= 40  # folders with bytecode (48 in python3.12)
    # Nobody in the run writes it.
    assert seen["planted"] in ("EROFS", "EACCES")
    [options] = seen["options"]
    assert options.split(",")[0] == "ro"


def test_a_stdlib_that_is_not_python3_s_own_is_not_built(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient
) -> None:
    volume = f"scbench-ci-test-{uuid.uuid4().hex}"
    docker_client.volumes.create(volume, labels={CACHE_LABEL: "test"})
    containers = Containers(
        docker_client, test_image, confinement("512m", 1.0, 256), lambda: "size=64m"
    )
    try:
        with LogSink(tmp_path / "build.log", None) as log:
            built = build_stdlib(
                containers, volume, "/opt/lib/python3.12", log, time.monotonic() + 120
            )
    finally:
        docker_client.volumes.get(volume).remove(force=True)
    assert built == "exit code 1"
    assert (
        "python3's standard library is /usr/local/lib/python3.12, not /opt/lib/python3.12"
        in (tmp_path / "build.log").read_text()
    )


# --- the submission's dependencies ---------------------------------------------------------------

OWN_PYPROJECT = '[project]\nname = "own"\nversion = "1"\nrequires-python = ">=3.8"\n'
MAIN = "import yaml\nprint(yaml.safe_dump({'ok': [1, 2]}), end='')\n"
INSPECT_WORKSPACE = """
import glob, json, os, pathlib, subprocess
site = glob.glob(".venv/lib/python*/site-packages")[0]
run = subprocess.run(["uv", "run", "main.py"], capture_output=True, text=True)
again = subprocess.run(["uv", "run", "main.py"], capture_output=True, text=True)
facts = {
    "entries": sorted(os.listdir(".")),
    "files": {
        name: pathlib.Path(name).read_text()
        for name in ("pyproject.toml", ".python-version", "uv.lock", "requirements.txt", "main.py")
    },
    "owners": sorted(
        {os.lstat(p).st_uid for p in glob.glob("**", recursive=True, include_hidden=True)}
    ),
    "installed": sorted(name for name in os.listdir(site) if name != "__pycache__"),
    "uv run": [run.returncode, run.stdout, again.returncode, again.stdout, again.stderr],
    "networks": sorted(os.listdir("/sys/class/net")),
}
json.dump(facts, open(PROBE_OUTPUT, "w"))
"""


@pytest.fixture
def fresh_requirements(docker_client: docker.DockerClient, image_id: str) -> Iterator[str]:
    """requirements.txt for pyyaml that no cached environment has yet (a comment of its own);
    its cache volumes are removed afterwards."""
    text = f"# {uuid.uuid4().hex}\npyyaml\n"
    yield text
    variables = docker_cache.setup_variables({"SCBENCH_CHECKPOINT": "checkpoint_1"})
    remove_cache_volumes(
        docker_client,
        dependencies_key(
            image_id, text.encode(), DEFAULT_SETUP, variables, scope=EVALUATION_CACHE_SCOPE
        ),
    )


def test_the_dependency_cache_makes_what_the_setup_makes(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient, fresh_requirements: str
) -> None:
    """Without the cache, building it, using it, and once it is not whole: the same workspace,
    the same environment, and the tests' `uv run` finds it in sync without the network (cut
    after setup, or never there)."""
    files = {"requirements.txt": fresh_requirements, "main.py": MAIN}
    runs: dict[str, tuple[object, str]] = {}
    used = ""
    # The network cut after setup (--no-test-network), so that `uv run` proves it needs none.
    offline = DockerSettings(image=test_image, test_network=False)
    for name, executor in (
        ("setup", DockerExecutor(dataclasses.replace(offline, use_cache=False))),
        ("build", DockerExecutor(offline)),
        ("cached", DockerExecutor(offline)),
        ("tampered", DockerExecutor(offline)),
    ):
        if name == "tampered":
            # Its mark of completion gone: the run finds out before the tests, and starts over.
            found = re.search(r"from cache volume (\S+),", runs["cached"][1])
            assert found is not None
            used = found[1]
            docker_client.containers.run(
                test_image,
                ["rm", "/data/env/complete"],
                volumes={used: {"bind": "/data", "mode": "rw"}},
                remove=True,
            )
        result, log = execute(
            tmp_path / name,
            INSPECT_WORKSPACE,
            executor=executor,
            setup=DEFAULT_SETUP,
            default_environment=True,
            files=files,
        )
        assert (result.exit_code, result.setup_exit_code) == (0, None), log
        runs[name] = (probed(tmp_path / name), log)

    setup, build, cached, tampered = (
        runs[name][0] for name in ("setup", "build", "cached", "tampered")
    )
    assert isinstance(setup, dict)
    assert setup["uv run"][:4] == [0, "ok:\n- 1\n- 2\n", 0, "ok:\n- 1\n- 2\n"]
    assert setup["networks"] == ["lo"]
    assert set(setup["entries"]) >= {".venv", "pyproject.toml", "uv.lock", ".python-version"}
    assert setup["owners"] == [1000, 1001]  # the tests user's, and the runner's .evaluation_tests/
    assert "pyyaml-" in " ".join(setup["installed"])
    assert build == setup
    assert cached == setup
    assert tampered == setup
    # The real setup ran in the first run only; the second built the cache, the third used it.
    assert "[scbench-ci] $ uv init\n" in runs["setup"][1]
    assert BUILDING_DEPENDENCIES in runs["build"][1]
    cached_log = runs["cached"][1]
    assert "$ uv init" not in cached_log and BUILDING_DEPENDENCIES not in cached_log
    assert "[scbench-ci] setup: not run here; what `uv init`, then `uv add -r" in cached_log
    rejected = (
        f"[scbench-ci] cache volume {used}: not whole: it is removed, and this run does without "
        "caches\n"
    )
    assert rejected in runs["tampered"][1]
    after = runs["tampered"][1].split(rejected, 1)[1]  # the real setup ran
    assert "[scbench-ci] $ uv init\n" in after
    assert "[scbench-ci] $ uv add -r requirements.txt\n" in after


HELLO = "print('hello')\n"
INSPECT_BARE_WORKSPACE = """
import glob, json, os, pathlib, re, subprocess
def uv_run():
    done = subprocess.run(["uv", "run", "main.py"], capture_output=True, text=True)
    return [done.returncode, done.stdout, re.sub(r"in [0-9.]+m?s", "in <time>", done.stderr)]
first, second = uv_run(), uv_run()
made = ("pyproject.toml", ".python-version", "README.md", "uv.lock", "main.py")
facts = {
    "entries": sorted(os.listdir(".")),
    "files": {name: pathlib.Path(name).read_text() for name in made if os.path.exists(name)},
    "owners": sorted(
        {os.lstat(p).st_uid for p in glob.glob("**", recursive=True, include_hidden=True)}
    ),
    "venv": sorted(os.listdir(".venv")),
    "uv run": [first, second],
    # Each entry as the setup leaves it (but its times): its kind, mode, owner, size, link
    # (uv_cache.json, which the first `uv run` writes, holds the files' times).
    "tree": sorted(
        [path, oct(info.st_mode), info.st_uid, info.st_gid, info.st_size, os.readlink(path)]
        if os.path.islink(path)
        else [path, oct(info.st_mode), info.st_uid, info.st_gid,
              0 if os.path.isdir(path) or path.endswith("uv_cache.json") else info.st_size, None]
        for path in glob.glob("**", recursive=True, include_hidden=True)
        for info in [os.lstat(path)]
        if not path.startswith((".evaluation_tests", ".scbench"))
    ),
}
json.dump(facts, open(PROBE_OUTPUT, "w"))
"""
# A submission's tests, run from the cache, try to change it for the next submission: the cache's
# files through its mount, and the copies in their own workspace.
POISON_FROM_A_RUN = f"""
import json
refused = []
for target in (
    "{CACHED_WORKSPACE}/pyproject.toml",
    "{CACHED_WORKSPACE}/.venv/pyvenv.cfg",
    "{CACHED_WORKSPACE}/poison",
    "{CACHED_DEPENDENCIES_DIR}/env/complete",
):
    try:
        with open(target, "a") as file:
            file.write("poisoned")
    except OSError as error:
        refused.append(type(error).__name__)
for own_copy in ("pyproject.toml", ".venv/pyvenv.cfg", "README.md"):
    with open(own_copy, "a") as file:
        file.write("poisoned")
json.dump(refused, open(PROBE_OUTPUT, "w"))
"""


def test_without_requirements_the_cache_makes_what_the_setup_makes_and_no_run_can_poison_it(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient, image_id: str
) -> None:
    """A submission with no requirements.txt and no project: without the cache, building it,
    after a run whose tests tried to poison it, and using it: the same workspace, and the
    tests' first `uv run` prints what it prints after the real setup (uv building the
    workspace's own package), the second nothing."""
    variables = {"CACHE_TEST_ID": uuid.uuid4().hex}  # a key of the test's own
    setup_variables = docker_cache.setup_variables(variables)
    key = dependencies_key(
        image_id, None, SETUP_WITHOUT_REQUIREMENTS, setup_variables, scope=EVALUATION_CACHE_SCOPE
    )
    settings = DockerSettings(image=test_image)
    runs: dict[str, tuple[object, str]] = {}
    try:
        for name, code in (
            ("setup", INSPECT_BARE_WORKSPACE),
            ("build", INSPECT_BARE_WORKSPACE),
            ("poison", POISON_FROM_A_RUN),
            ("cached", INSPECT_BARE_WORKSPACE),
        ):
            use_cache = name != "setup"
            result, log = execute(
                tmp_path / name,
                code,
                executor=DockerExecutor(dataclasses.replace(settings, use_cache=use_cache)),
                setup=SETUP_WITHOUT_REQUIREMENTS,
                default_environment=True,
                files={"main.py": HELLO},
                variables=variables,
            )
            assert (result.exit_code, result.setup_exit_code) == (0, None), log
            runs[name] = (probed(tmp_path / name), log)
    finally:
        remove_cache_volumes(docker_client, key)

    setup, build, cached = (runs[name][0] for name in ("setup", "build", "cached"))
    assert isinstance(setup, dict)
    hello = [0, "hello\n"]
    assert setup["uv run"][0][:2] == hello and setup["uv run"][1] == [*hello, ""]
    assert setup["uv run"][0][2] != ""  # the first builds the project, and says so
    assert {".venv", "pyproject.toml", ".python-version"} <= set(setup["entries"])
    assert build == setup
    assert cached == setup
    refused = runs["poison"][0]
    assert isinstance(refused, list) and len(refused) == 4, refused
    assert set(refused) <= {"PermissionError", "OSError"}  # EACCES, or EROFS
    assert "[scbench-ci] $ uv init\n" in runs["setup"][1]
    assert BUILDING_DEPENDENCIES in runs["build"][1]
    assert "in a workspace that holds nothing" in runs["build"][1]
    for name in ("poison", "cached"):
        log = runs[name][1]
        assert "$ uv init" not in log and BUILDING_DEPENDENCIES not in log, log
        assert (
            "[scbench-ci] setup: not run here; what `uv init`, then `uv add -r requirements.txt "
            "|| true` made of a workspace without requirements.txt (" in log
        )


def test_without_requirements_a_name_the_cache_brings_runs_the_real_setup(
    tmp_path: Path, test_image: str
) -> None:
    """A submission with its own README.md (which `uv init` keeps, and the project's build
    reads): the setup runs for real."""
    settings = DockerSettings(image=test_image)
    for name in ("first", "second"):  # the first may build the cache; the second finds it
        result, log = execute(
            tmp_path / name,
            "pass",
            executor=DockerExecutor(settings),
            setup=SETUP_WITHOUT_REQUIREMENTS,
            default_environment=True,
            files={"main.py": HELLO, "README.md": "mine\n"},
        )
        assert result.setup_exit_code is None, log
    assert "the setup runs here, not from the dependency cache: the submission has its own " in log
    assert "README.md" in log
    assert "[scbench-ci] $ uv init\n" in log


@pytest.mark.parametrize(
    ("files", "setup", "reason"),
    [
        (
            {"pyproject.toml": OWN_PYPROJECT},
            ("uv add -r requirements.txt",),
            "the submission has its own pyproject.toml",
        ),
        (
            {"requirements.txt": "./not-here\n"},
            DEFAULT_SETUP,
            "requirements.txt line 1 is not a plain requirement",
        ),
    ],
)
def test_own_project_files_or_a_local_requirement_run_the_real_setup(
    tmp_path: Path,
    test_image: str,
    files: dict[str, str],
    setup: tuple[str, ...],
    reason: str,
) -> None:
    result, log = execute(
        tmp_path,
        "pass",
        executor=DockerExecutor(DockerSettings(image=test_image)),
        setup=setup,
        default_environment=True,
        files={"requirements.txt": "pyyaml\n", "main.py": MAIN, **files},
    )

    assert f"[scbench-ci] the setup runs here, not from the dependency cache: {reason}" in log
    assert f"[scbench-ci] $ {setup[-1]}\n" in log  # run for real
    assert BUILDING_DEPENDENCIES not in log
    if "./not-here" in files.get("requirements.txt", ""):
        assert result.setup_exit_code not in (None, 0)
    else:
        assert result.setup_exit_code is None


# --- which requirements the cache may stand in for (no Docker) -----------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "pyyaml\n",
        "PyYAML==6.0.1\nrequests[socks, security] >= 2.0, <3 ; python_version >= '3.8'\n",
        "# a comment\n\nnumpy~=1.26  # trailing comment\r\n",
        "pkg @ https://example.com/pkg-1.0-py3-none-any.whl#sha256=abc\n",
        "attrs (>=22)\n",
    ],
)
def test_plain_requirements_may_come_from_the_cache(text: str) -> None:
    assert requirements_reason(text.encode()) is None


@pytest.mark.parametrize(
    "text",
    [
        "./local-package\n",
        "../elsewhere\n",
        "/abs/path\n",
        "sub/dir\n",
        "-e .\n",
        "--editable ./pkg\n",
        "-r other.txt\n",
        "-c constraints.txt\n",
        "--index-url https://example.com/simple\n",
        "-i https://example.com/simple\n",
        "pkg @ file:///tmp/pkg.whl\n",
        "file:pkg\n",
        "pkg.whl\n",
        "pkg-1.0.tar.gz\n",
        "${HOME}/pkg\n",
        "pkg==$VERSION\n",
        "pyyaml \\\n",
        "pkg --hash=sha256:abc\n",
        "git+https://example.com/pkg.git\n",
    ],
)
def test_anything_else_runs_the_real_setup(text: str) -> None:
    reason = requirements_reason(text.encode())
    assert reason is not None and "not a plain requirement" in reason


def test_a_requirement_named_like_an_entry_of_the_workspace_runs_the_real_setup(
    tmp_path: Path,
) -> None:
    workspace = _staged(tmp_path, **{"requirements.txt": "pyyaml\nhelpers\n", "helpers": ""})
    assert dependency_source(workspace, DEFAULT_SETUP, True) == (
        "requirements.txt names helpers, also in the workspace"
    )


def test_requirements_that_are_not_utf8_run_the_real_setup() -> None:
    assert requirements_reason(b"pyyaml\n\xff\n") == "requirements.txt is not UTF-8"


def _staged(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


UV_NAMES = [
    "pyproject.toml",
    "uv.lock",
    ".python-version",
    ".python-versions",
    "uv.toml",
    "setup.py",
    "setup.cfg",
    ".venv",
]


@pytest.mark.parametrize("name", UV_NAMES)
def test_the_submissions_own_project_files_run_the_real_setup(tmp_path: Path, name: str) -> None:
    workspace = _staged(tmp_path, **{"requirements.txt": "pyyaml\n", name: ""})
    assert dependency_source(workspace, DEFAULT_SETUP, True) == f"the submission has its own {name}"


@pytest.mark.parametrize("name", UV_NAMES)
def test_without_requirements_own_project_files_run_the_real_setup(
    tmp_path: Path, name: str
) -> None:
    workspace = _staged(tmp_path, **{"main.py": "", name: ""})
    assert dependency_source(workspace, SETUP_WITHOUT_REQUIREMENTS, True) == (
        f"the submission has its own {name}"
    )


def test_without_requirements_the_cache_is_made_from_nothing_of_the_submission(
    tmp_path: Path,
) -> None:
    """Whatever else the submission holds, the source is the same: no bytes of it."""
    workspace = _staged(tmp_path, **{"main.py": "print(1)\n", "notes.txt": "x"})
    assert dependency_source(workspace, SETUP_WITHOUT_REQUIREMENTS, True) == DependencySource(None)
    assert DependencySource(None).setup == SETUP_WITHOUT_REQUIREMENTS
    assert default_environment(workspace).setup_commands == SETUP_WITHOUT_REQUIREMENTS
    assert dependency_source(workspace, ("uv init", "uv sync"), True) == (
        "the setup is not `uv init` then `uv add -r requirements.txt || true`"
    )
    assert dependency_source(workspace, SETUP_WITHOUT_REQUIREMENTS, False) is None
    # An empty requirements.txt is a requirements.txt: a key of its own, never the one without.
    (tmp_path / "requirements.txt").write_text("")
    assert dependency_source(workspace, DEFAULT_SETUP, True) == DependencySource(b"")
    variables: dict[str, str] = {}
    keys = {
        dependencies_key("i", source, setup, variables, scope=EVALUATION_CACHE_SCOPE)
        for source, setup in ((None, SETUP_WITHOUT_REQUIREMENTS), (b"", DEFAULT_SETUP))
    }
    assert len(keys) == 2


def test_the_cache_stands_in_only_for_the_default_setup(tmp_path: Path) -> None:
    workspace = _staged(tmp_path, **{"requirements.txt": "pyyaml\n"})
    assert dependency_source(workspace, DEFAULT_SETUP, True) == DependencySource(b"pyyaml\n")
    # Not the default environment, or nothing to set up: nothing to say.
    assert dependency_source(workspace, DEFAULT_SETUP, False) is None
    assert dependency_source(workspace, (), True) is None
    assert dependency_source(workspace, ("pip install -r requirements.txt",), True) == (
        "the setup is not `uv init` then `uv add -r requirements.txt`"
    )
    (tmp_path / "requirements.txt").unlink()
    (tmp_path / "requirements.txt").symlink_to("other.txt")
    (tmp_path / "other.txt").write_text("pyyaml\n")
    assert dependency_source(workspace, DEFAULT_SETUP, True) == (
        "requirements.txt is not a regular file"
    )


# Run by the tests user as the build's setup: what a requirement's build script could do to the
# finishing step, where the runner copies the workspace into the cache and marks it complete.
POISONING_SETUP = (
    # A process left behind, to change the workspace while the runner copies it (and after).
    "nohup sh -c 'sleep 3; while :; do echo late > late-file; sleep 0.1; done' >/dev/null 2>&1 &",
    # The cache's own folder, and its mark of completion, from inside.
    "for target in /scbench-cache/dependencies/env /scbench-cache/dependencies/env/complete; do "
    'echo poisoned > "$target/x" 2>/dev/null; echo poisoned > "$target" 2>/dev/null; '
    "done; true",
    # A link to the mark, a setuid file, and ordinary results of a setup.
    "ln -s /scbench-cache/dependencies/env/complete mark && "
    "cp /bin/sh own-shell && chmod 4755 own-shell && mkdir .venv && echo ok > .venv/made",
)


def test_a_setup_cannot_poison_the_cache_it_is_built_into(
    tmp_path: Path, test_image: str, docker_client: docker.DockerClient
) -> None:
    """The cache holds what the setup left in the workspace, copied by the runner once every
    process of the setup is gone, and its key in a file the setup could not write: no late
    write, no write into the cache's own folder, links kept as links, no setuid bit."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "requirements.txt").write_text("pyyaml\n")
    volume = f"scbench-ci-test-{uuid.uuid4().hex}"
    docker_client.volumes.create(volume, labels={CACHE_LABEL: "test"})
    key = "k" * 64
    containers = Containers(
        docker_client,
        test_image,
        confinement("512m", 1.0, 256),
        lambda: tmpfs_limits(256 * 1024**2),
    )
    try:
        with LogSink(tmp_path / "build.log", None) as log:
            names = build_dependencies(
                containers,
                volume,
                key,
                b"pyyaml\n",
                workspace,
                POISONING_SETUP,
                {},
                log,
                time.monotonic() + 300,
            )
        assert isinstance(names, docker_cache.Built), (tmp_path / "build.log").read_text()
        assert names.names == ("mark", "own-shell", ".venv")
        assert names.bytes > 1024  # what the volume holds, as du measures it
        time.sleep(4)  # the late writer, had it survived, would have written by now
        listing = docker_client.containers.run(
            test_image,
            [
                "sh",
                "-c",
                "cd /data/env && cat complete && echo && ls -A . workspace && "
                "readlink workspace/mark && stat -c %a workspace/own-shell && "
                "cat workspace/.venv/made",
            ],
            volumes={volume: {"bind": "/data", "mode": "ro"}},
            remove=True,
        ).decode()
    finally:
        docker_client.volumes.get(volume).remove(force=True)
    assert listing.split("\n") == [
        key,
        ".:",
        "complete",
        "workspace",
        "",
        "workspace:",
        ".venv",
        "mark",
        "own-shell",
        "/scbench-cache/dependencies/env/complete",
        "755",
        "ok",
        "",
    ]
