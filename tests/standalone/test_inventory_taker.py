"""The test runner's inventory of the tests (`--scbench-inventory=SPEC`, SCBench 1.0's rules):
taken in its own session, each pass's node ids are those SCBench 1.0's `pytest --collect-only -q`
pass prints (run here, as it builds them, with this environment's pytest); where the session
cannot tell, the runner runs the passes; the inventory is sealed once the tests are collected, so
that a run killed afterwards keeps it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.foundation.layout import PYTEST_INI, REPORTS_DIR, WORKSPACE_TESTS_DIR
from scbench_ci.job.pytest_command import inventory_spec
from scbench_ci.job.workspace import stage_workspace
from scbench_ci.problem.load import load_problem
from scbench_ci.standalone import pytest_runner
from scbench_ci.standalone.pytest_runner import (
    COLLECTED_PREFIX,
    INVENTORY_OPTION,
    KILL_DESCENDANTS,
    SEAL_KEY_VARIABLE,
    collected_ids,
    collected_text,
)
from scbench_ci.trust.seal import INVENTORY
from testing.paths import REPO_ROOT

pytestmark = pytest.mark.slow

KEYWORDS = REPO_ROOT / "tests/data/inventory/keywords"
KEY = "k" * 64
ENTRYPOINT = f"{sys.executable} main.py"


def test_collected_ids_are_the_lines_scbench_1_0_takes_for_node_ids() -> None:
    output = "\n".join(
        [
            "t.py::test_a",
            "  t.py::TestB::test_c[x-1]  ",
            "t.py::test_d[with space]",
            "====== 2 tests collected in 0.01s ======",
            "collected 3 items",
            "no-colons-here",
            "",
            "t.py::test_e\rt.py::test_f",  # splitlines: a carriage return ends a line too
        ]
    )
    assert collected_ids(output) == [
        "t.py::test_a",
        "t.py::TestB::test_c[x-1]",
        "t.py::test_e",
        "t.py::test_f",
    ]


def _workspace(tmp_path: Path, problem_dir: Path, checkpoint_name: str) -> Path:
    problem = load_problem(problem_dir)
    checkpoint = problem.checkpoint(checkpoint_name)
    root = tmp_path / "workspace"
    stage_workspace(
        problem,
        checkpoint,
        include_prior_tests=True,
        submission=problem_dir / "solutions" / checkpoint_name,
        root=root,
    )
    return root


def _run(
    workspace: Path, checkpoint: str, prior: list[str], pytest_args: tuple[str, ...] = ()
) -> tuple[dict[str, Any], str]:
    """The runner with an inventory spec as the command builds it, this environment's pytest (no
    report plugins): its inventory document and its output."""
    problem = load_problem(KEYWORDS)
    spec = inventory_spec(
        problem.checkpoint(checkpoint),
        tuple(problem.checkpoint(name) for name in prior),
        ENTRYPOINT,
        pytest_args,
    )
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            pytest_runner.__file__,
            KILL_DESCENDANTS,
            INVENTORY_OPTION + json.dumps(spec),
            *("-c", PYTEST_INI, "-p", "no:cacheprovider", WORKSPACE_TESTS_DIR),
            f"--entrypoint={ENTRYPOINT}",
            f"--checkpoint={checkpoint}",
            "-vv",
            *pytest_args,
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=300,
        env={**_environment(), SEAL_KEY_VARIABLE: KEY},
    )
    document = json.loads((workspace / REPORTS_DIR / INVENTORY).read_text())
    return document, done.stdout


def _environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith("PYTEST")}


def _scbench_passes(
    workspace: Path, checkpoint: str, prior: list[str], pytest_args: tuple[str, ...] = ()
) -> dict[tuple[str | None, str], tuple[int, list[str]]]:
    """SCBench 1.0's passes as its `_build_collect_cmd` builds them (after the run's own ini
    file, as the runner runs them), run with this environment's pytest; each one's exit code and
    the ids its parser takes."""
    found = {}
    planned = [(m, checkpoint) for m in ("error", "functionality", "regression", None)]
    planned += [(None, name) for name in prior]
    for marker, name in planned:
        command = [
            *(sys.executable, "-m", "pytest", "-c", PYTEST_INI, "-p", "no:cacheprovider"),
            "--collect-only",
            "-q",
            f"--entrypoint={ENTRYPOINT}",
            f"--checkpoint={name}",
            *(["-m", marker] if marker else []),
            *("-k", name),
            *pytest_args,
            WORKSPACE_TESTS_DIR,
        ]
        done = subprocess.run(command, cwd=workspace, capture_output=True, text=True, timeout=120)
        ids = collected_ids(done.stdout) if done.returncode in (0, 5) else []
        found[(marker, name)] = (done.returncode, sorted(ids))
    return found


def _passes(document: dict[str, Any]) -> dict[tuple[str | None, str], tuple[int, list[str]]]:
    return {(p["marker"], p["keyword"]): (p["exit"], sorted(p["ids"])) for p in document["passes"]}


@pytest.mark.parametrize(
    ("checkpoint", "prior"), [("checkpoint_1", []), ("checkpoint_10", ["checkpoint_1"])]
)
def test_the_session_s_inventory_is_what_scbench_s_passes_print(
    tmp_path: Path, checkpoint: str, prior: list[str]
) -> None:
    workspace = _workspace(tmp_path, KEYWORDS, checkpoint)
    document, output = _run(workspace, checkpoint, prior)
    assert document["taken_by"] == "session", output
    assert _passes(document) == _scbench_passes(workspace, checkpoint, prior)
    # The `collected N items` of pytest's own line, the id with a space included.
    assert document["collected"] == {"checkpoint_1": 8, "checkpoint_10": 19}[checkpoint]


def test_pytest_arguments_make_the_runner_run_scbench_s_passes(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, KEYWORDS, "checkpoint_10")
    document, _ = _run(workspace, "checkpoint_10", ["checkpoint_1"], ("-p", "no:warnings"))
    assert document["taken_by"] == "passes"
    assert document["reasons"] == [
        "pytest arguments were given, which may change what a pass prints or keeps"
    ]
    expected = _scbench_passes(workspace, "checkpoint_10", ["checkpoint_1"], ("-p", "no:warnings"))
    assert _passes(document) == expected


@pytest.mark.parametrize(
    ("hook", "printed", "by_passes"),
    [
        ("pytest_collection_finish(session)", "a/test_x.py::test_ghost", True),
        ("pytest_collection_finish(session)", "nothing like a node id", False),
        # Once the tests have run, as in every pass.
        ("pytest_sessionfinish(session)", "a/test_x.py::test_ghost", True),
        # As each test starts, which no pass does.
        ("pytest_runtest_logstart(nodeid)", "a/test_x.py::test_ghost", False),
    ],
)
def test_a_line_like_a_node_id_printed_besides_pytest_runs_the_passes(
    tmp_path: Path, hook: str, printed: str, by_passes: bool
) -> None:
    problem = tmp_path / "keywords"
    shutil.copytree(KEYWORDS, problem)
    with (problem / "tests/conftest.py").open("a") as conftest:
        conftest.write(f"\n\ndef {hook}:\n    print({printed!r})\n")
    workspace = _workspace(tmp_path, problem, "checkpoint_1")
    document, output = _run(workspace, "checkpoint_1", [])
    assert printed in output  # the watch passes everything on to the log
    assert (document["taken_by"] == "passes") is by_passes
    assert _passes(document) == _scbench_passes(workspace, "checkpoint_1", [])
    if by_passes:
        assert printed in document["reasons"][0]
        assert printed in _passes(document)[(None, "checkpoint_1")][1]


def test_a_collection_error_fails_every_pass_as_scbench_s_would(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, KEYWORDS, "checkpoint_1")
    (workspace / WORKSPACE_TESTS_DIR / "test_checkpoint_1.py").chmod(0o644)
    with (workspace / WORKSPACE_TESTS_DIR / "test_checkpoint_1.py").open("a") as tests:
        tests.write("\nimport no_such_module_anywhere\n")
    document, _ = _run(workspace, "checkpoint_1", [])
    assert {p["exit"] for p in document["passes"]} == {2}
    assert _passes(document) == _scbench_passes(workspace, "checkpoint_1", [])


def test_a_keyword_pytest_refuses_is_a_usage_error_of_its_pass(tmp_path: Path) -> None:
    """A checkpoint named `and` is no `-k` expression: SCBench's pass exits 4."""
    workspace = _workspace(tmp_path, KEYWORDS, "checkpoint_1")
    spec = {
        "file": f"{REPORTS_DIR}/{INVENTORY}",
        "passes": [{"marker": None, "keyword": "and", "argv": []}],
    }
    subprocess.run(
        [
            *(sys.executable, "-I", pytest_runner.__file__, KILL_DESCENDANTS),
            INVENTORY_OPTION + json.dumps(spec),
            *("-c", PYTEST_INI, "-p", "no:cacheprovider", WORKSPACE_TESTS_DIR),
            f"--entrypoint={ENTRYPOINT}",
            "--checkpoint=checkpoint_1",
        ],
        cwd=workspace,
        capture_output=True,
        timeout=300,
        env={**_environment(), SEAL_KEY_VARIABLE: KEY},
    )
    document = json.loads((workspace / REPORTS_DIR / INVENTORY).read_text())
    assert [(p["exit"], p["ids"]) for p in document["passes"]] == [(4, [])]


def test_a_run_killed_after_collection_keeps_its_sealed_inventory(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, KEYWORDS, "checkpoint_1")
    killer = (
        "import os, signal\n\n\ndef test_zz_kill():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    (workspace / WORKSPACE_TESTS_DIR / "sub" / "test_zz.py").write_text(killer)
    document, output = _run(workspace, "checkpoint_1", [])
    assert "[scbench-ci] seal" not in output
    data = (workspace / REPORTS_DIR / INVENTORY).read_bytes()
    assert f"\n{COLLECTED_PREFIX}{collected_text(KEY, data)}\n" in output
    assert document["passes"][-1]["ids"]


def test_what_a_test_s_process_writes_before_pytest_is_killed_is_in_the_log(
    tmp_path: Path,
) -> None:
    """While the tests run, standard output is the log itself, as it is for SCBench: nothing
    waits in the watch's pipe, whose pump dies with pytest. The test holds the interpreter's lock
    until it is killed, so the pump could not pass anything on in time."""
    workspace = _workspace(tmp_path, KEYWORDS, "checkpoint_1")
    child = (
        "import os, signal; os.write(1, b'written by a child\\n'); os.kill(PYTEST, signal.SIGKILL)"
    )
    killed = f"""
import os, subprocess, sys


def test_zz_killed(capfd):
    sys.setswitchinterval(1000)  # no other thread of pytest's runs while this one does
    child = {child!r}.replace("PYTEST", str(os.getpid()))
    with capfd.disabled():
        subprocess.Popen([sys.executable, "-c", child])
        while True:
            pass
"""
    (workspace / WORKSPACE_TESTS_DIR / "sub" / "test_zz.py").write_text(killed)
    _, output = _run(workspace, "checkpoint_1", [])
    assert "[scbench-ci] seal" not in output
    assert "written by a child\n" in output
