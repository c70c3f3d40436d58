"""The tests' process started with its container, ahead of its run (`warm_runner.py`), against the
real daemon: what the tests see is what a process started at their time sees (variables, argv,
command line, stdin, folder, the modules imported before them, which of them pytest rewrote, where
their bytecode is), the seal key never among its variables; a run whose setup runs starts its
tests as it always did."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker

from scbench_ci.executors.base import ExecutionRequest
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.job.pytest_command import PYTEST_PLUGINS
from scbench_ci.standalone.pytest_runner import SEAL_KEY_VARIABLE
from testing.probes import PROBE_KEY, PROBE_OUTPUT, probe_command

SEES = """
import json, os, pathlib, sys
try:  # the runner's, undumpable: only root may read it
    initial = pathlib.Path("/proc/self/environ").read_bytes().decode()
except OSError as error:
    initial = error.strerror
ticks = int(pathlib.Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
import time
since = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
started = time.time() - since
pathlib.Path(PROBE_OUTPUT).write_text(json.dumps({
    "env": dict(os.environ),
    "argv": sys.argv,
    "orig_argv": sys.orig_argv,
    "cmdline": pathlib.Path("/proc/self/cmdline").read_bytes().decode().split("\\0"),
    "stdin": os.readlink("/proc/self/fd/0"),
    "cwd": os.getcwd(),
    "ppid": os.getppid(),
    "modules": sorted(sys.modules),
    "elsewhere": sorted(
        name for name, module in list(sys.modules.items())
        if isinstance(getattr(module, "__cached__", None), str)
        and os.path.dirname(module.__cached__)
        != os.path.join(os.path.dirname(module.__file__), "__pycache__")
    ),
    "prefix": sys.pycache_prefix,
    # pytest's assertion rewriting, which a plugin imported before its hook misses.
    "rewritten": sorted(
        name for name, module in list(sys.modules.items())
        if type(getattr(module, "__loader__", None)).__name__ == "AssertionRewritingHook"
    ),
    "initial": initial,
    # The start is in clock ticks, cut down: it reads earlier, never later. Started ahead, the
    # process is at least a workspace copy older than its files; at their time, younger.
    "started_before_its_files": started < os.stat(__file__).st_ctime,
}))
"""


def _seen(executor: DockerExecutor, folder: Path, setup: tuple[str, ...]) -> dict[str, Any]:
    workspace, logs = folder / "workspace", folder / "logs"
    (workspace / ".scbench").mkdir(parents=True)
    logs.mkdir()
    result = executor.execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=setup,
            command=replace(
                probe_command(workspace, SEES, {"SCBENCH_CHECKPOINT": "checkpoint_1"}),
                requirements=PYTEST_PLUGINS,  # the plugins a run has, loaded ahead too
            ),
            session_timeout_s=300,
            seal_key=PROBE_KEY,
            echo=None,
        )
    )
    assert result.exit_code == 0, (logs / "pytest.log").read_text()
    # Nothing was left running: not the runner started ahead that a run did not use.
    assert result.leftover_processes == 0
    seen: dict[str, Any] = json.loads((workspace / PROBE_OUTPUT).read_text())
    return seen


def test_the_tests_cannot_tell_their_process_was_started_ahead(
    docker_client: docker.DockerClient, test_image: str, tmp_path: Path
) -> None:
    executor = DockerExecutor(DockerSettings(image=test_image))
    executor.expect(None, 1)
    try:
        # The runner's environment cached; then, during a run of the shape that caching gives,
        # the next container is made ahead of the run that takes it.
        _seen(executor, tmp_path / "warm-up", ())
        _seen(executor, tmp_path / "cached", ())
        ahead = _seen(executor, tmp_path / "ahead", ())
        # A setup command runs (it could be the submission's): the tests start after it.
        at_their_time = _seen(executor, tmp_path / "cold", ("true",))
    finally:
        executor.close()
    # What differs by nature: each container's own name; and when the process started.
    assert ahead["env"].pop("HOSTNAME") != at_their_time["env"].pop("HOSTNAME")
    assert ahead.pop("started_before_its_files") and not at_their_time.pop(
        "started_before_its_files"
    )
    assert ahead == at_their_time
    assert {"pytest_jsonreport", "pytest_timeout", "ctrf"} <= {
        name.split(".")[0] for name in ahead["modules"]
    }
    assert {"pytest_jsonreport", "pytest_timeout"} <= set(ahead["rewritten"])
    assert ahead["stdin"] == "/dev/null" and ahead["prefix"] is None and not ahead["elsewhere"]
    assert ahead["initial"] == "Permission denied" and SEAL_KEY_VARIABLE not in ahead["env"]
