"""The local executor with real subprocesses: environment, timeouts, cleanup, logs."""

import io
import json
import os
import threading
import time
from pathlib import Path

import pytest

from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.local import LocalExecutor, _tail
from scbench_ci.executors.processes import STEP_VARIABLE
from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG
from scbench_ci.trust.untrusted_tree import UntrustedTree
from testing.probes import PROBE_KEY, PROBE_OUTPUT, RUNNER_STARTED, probe_command, shell

pytestmark = pytest.mark.slow

CANARY = "scbench-local-canary"


def _living_canaries(tag: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def _execute(
    tmp_path: Path,
    code: str,
    *,
    setup: tuple[str, ...] = (),
    timeout: float = 60,
    echo: io.StringIO | None = None,
    variables: dict[str, str] | None = None,
) -> ExecutionResult:
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True, exist_ok=True)
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    return LocalExecutor().execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=setup,
            command=probe_command(workspace, code, variables),
            session_timeout_s=timeout,
            seal_key=PROBE_KEY,
            echo=echo,
        )
    )


def test_exit_code_log_and_live_echo(tmp_path: Path) -> None:
    echo = io.StringIO()
    result = _execute(tmp_path, shell("echo out; echo err >&2; exit 7"), echo=echo)
    assert (result.exit_code, result.setup_exit_code, result.timed_out_in) == (7, None, None)
    log = (tmp_path / "logs" / PYTEST_LOG).read_text()
    assert log.endswith("out\nerr\n")  # after uvx's "Installed ..." when it had to install
    assert RUNNER_STARTED in log
    assert echo.getvalue() == log.replace(RUNNER_STARTED, "")  # the runner's line: log only
    assert not (tmp_path / "logs" / SETUP_LOG).exists()


def test_runs_in_the_workspace_with_a_minimal_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("UV_INDEX_URL", "https://user:password@example.invalid/simple")
    dump = (
        "import json, os; json.dump({'cwd': os.getcwd(), 'env': dict(os.environ)}, "
        "open('.scbench/env.json', 'w'))"
    )
    result = _execute(tmp_path, dump, variables={"SCBENCH_CHECKPOINT": "checkpoint_1"})
    assert result.exit_code == 0
    seen = json.loads((tmp_path / "workspace/.scbench/env.json").read_text())
    assert seen["cwd"] == str(tmp_path / "workspace")
    env = seen["env"]
    assert env["SCBENCH_CHECKPOINT"] == "checkpoint_1"
    assert env["HOME"] != os.environ.get("HOME") and env["LANG"] == "C.UTF-8"
    assert "PATH" in env and "UV_CACHE_DIR" in env
    for leaked in (
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "UV_INDEX_URL",
    ):
        assert leaked not in env
    allowed = {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "UV_CACHE_DIR",
        "SCBENCH_CHECKPOINT",
        "PWD",
        "SHLVL",
        "_",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "PIP_CERT",
        "CURL_CA_BUNDLE",
        "LC_CTYPE",
        "UV",  # set by uvx
        "PYTEST_VERSION",  # set by pytest
        STEP_VARIABLE,  # tells the run's processes from other runs'
    }
    assert set(env) <= allowed


def test_session_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    tag = f"{CANARY}-timeout-{os.getpid()}"
    script = f"sleep 300 & exec -a {tag} sleep 301"
    started = time.monotonic()
    result = _execute(tmp_path, shell(script), timeout=1.5)
    assert result.timed_out_in == "tests" and result.exit_code is None
    assert time.monotonic() - started < 10
    assert "stopped at the session timeout (1.5 s)" in (tmp_path / "logs" / PYTEST_LOG).read_text()
    assert _living_canaries(tag) == []


def test_processes_that_leave_the_group_are_killed_too(tmp_path: Path) -> None:
    tag = f"{CANARY}-daemon-{os.getpid()}"
    spawn = (
        "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"time.sleep(300)', '{tag}'], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
    )
    result = _execute(tmp_path, spawn)
    assert result.exit_code == 0
    assert result.leftover_processes == 1
    assert _living_canaries(tag) == []
    assert (
        "killed 1 process(es) still running after the tests ended"
        in (tmp_path / "logs" / PYTEST_LOG).read_text()
    )


def test_a_failing_setup_command_is_noted_and_the_rest_and_the_tests_run(tmp_path: Path) -> None:
    """As SCBench's entry script, whose setup commands are lines without `set -e`."""
    result = _execute(
        tmp_path,
        shell("echo tests ran"),
        setup=("echo preparing", "echo broken >&2; exit 3", "echo still"),
    )
    assert (result.exit_code, result.setup_exit_code, result.timed_out_in) == (0, 3, None)
    setup_log = (tmp_path / "logs" / SETUP_LOG).read_text()
    assert setup_log == (
        "[scbench-ci] $ echo preparing\npreparing\n"
        "[scbench-ci] $ echo broken >&2; exit 3\nbroken\n"
        "[scbench-ci] setup command failed with exit code 3\n"
        "[scbench-ci] $ echo still\nstill\n"
    )
    assert "tests ran" in (tmp_path / "logs" / PYTEST_LOG).read_text()


def test_setup_counts_against_the_session_timeout(tmp_path: Path) -> None:
    result = _execute(tmp_path, "pass", setup=("sleep 30",), timeout=1)
    assert (result.exit_code, result.setup_exit_code, result.timed_out_in) == (None, None, "setup")


def _wait_for(path: Path) -> str:
    """Probe code that waits (at most a minute) until `path` exists."""
    return (
        "import pathlib, time\n"
        "_until = time.monotonic() + 60\n"
        f"while not pathlib.Path({str(path)!r}).exists() and time.monotonic() < _until:\n"
        "    time.sleep(0.05)\n"
    )


def test_runs_side_by_side_kill_only_their_own_processes(tmp_path: Path) -> None:
    """One run leaves a daemon behind while another, started after it, is still running (a long
    sleep with a child of its own): each kills its own leftovers and nothing of the other's."""
    tag = f"{CANARY}-side-by-side-{os.getpid()}"
    signals = tmp_path / "signals"
    signals.mkdir()
    leaver = (
        f"import pathlib; pathlib.Path({str(signals / 'leaver-started')!r}).touch()\n"
        + _wait_for(signals / "long-started")
        + "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"time.sleep(300)', '{tag}'], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    )
    long = (
        "import pathlib, subprocess\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"pathlib.Path({str(signals / 'long-started')!r}).touch()\n"
        + _wait_for(signals / "leaver-done")
        + "time.sleep(1)\n"
        "alive = child.poll() is None\n"
        "child.kill()\n"
        "pathlib.Path(PROBE_OUTPUT).write_text('child alive' if alive else 'child killed')\n"
    )
    results: dict[str, ExecutionResult] = {}

    def run(name: str, code: str) -> None:
        results[name] = _execute(tmp_path / name, code)

    first = threading.Thread(target=run, args=("leaver", leaver))
    first.start()
    # The long run starts once the leaver's tests run: by a rule like "every child this process
    # gained since the run started is the run's", it would be the leaver's.
    until = time.monotonic() + 120
    while not (signals / "leaver-started").exists() and time.monotonic() < until:
        time.sleep(0.05)
    second = threading.Thread(target=run, args=("long", long))
    second.start()
    first.join(timeout=120)
    (signals / "leaver-done").touch()
    second.join(timeout=120)

    assert (results["leaver"].exit_code, results["leaver"].leftover_processes) == (0, 1)
    assert _living_canaries(tag) == []
    assert (results["long"].exit_code, results["long"].leftover_processes) == (0, 0)
    assert (tmp_path / "long/workspace" / PROBE_OUTPUT).read_text() == "child alive"


def test_the_quality_log_s_tail_is_read_whatever_its_size_or_kind(tmp_path: Path) -> None:
    """scb-check's stderr, written while the submission's code may run: a file larger than any
    bound gives its tail; a link, a folder or nothing gives none (the measure's reason then
    names the exit code only)."""
    huge = tmp_path / "huge.log"
    with huge.open("wb") as log:
        log.truncate(300 * 1024 * 1024)  # sparse: 300 MiB, above the tree's file bound
        log.seek(0, os.SEEK_END)
        log.write(b"Traceback: the end")
    (tmp_path / "link.log").symlink_to(huge)
    (tmp_path / "folder.log").mkdir()
    with UntrustedTree.opened(tmp_path) as logs:
        assert _tail(logs, "huge.log", 9) == b": the end"
        assert [_tail(logs, name, 9) for name in ("link.log", "folder.log", "none.log")] == [
            b"",
            b"",
            b"",
        ]
