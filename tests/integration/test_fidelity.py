"""What the tests' processes see under scbench-ci equals what they see under SCBench's own flow.

The probe problem's tests record, for the test process and the submission's processes, PATH and
what `python`, `python3`, `uv` resolve to, `VIRTUAL_ENV`, the working directory, HOME and every
variable, umask, limits, stdin, where they can write and the free disk there, the bytes the first
and the second `uv run` print, a `uv run` from a copied folder and an import of a test dependency
from a folder without a project. Each submission (with and without a requirements.txt) runs once
under SCBench's flow (testing/fidelity/scbench_flow.py) and under scbench-ci, with and without the
cached environments; the records must be equal, but for what records.DELIBERATE names. Both run
at SCBench's defaults: its evaluation image (scbench-ci's default, SCBench's recipe), as
1000:1000, HOME=/tmp/agent_home, in /workspace, on a bridge network during the tests too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.fidelity import scbench_flow
from testing.fidelity.records import (
    PROBE_PROBLEM,
    PROBE_SUBMISSION,
    comparable,
    free_disk,
    read_records,
)
from testing.paths import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("evaluation_image")]

SUBMISSIONS = ("with_requirements", "without_requirements")
_HARDLINK_WARNING = re.compile(r"warning: Failed to hardlink files;.*?this warning\.\n", re.S)


@pytest.fixture(scope="module")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The probe's entry alone, and with a requirements.txt."""
    folders = {}
    for name in SUBMISSIONS:
        folder = tmp_path_factory.mktemp("submissions") / name
        shutil.copytree(PROBE_SUBMISSION, folder)
        if name == "with_requirements":
            (folder / "requirements.txt").write_text("pyyaml\n")
        folders[name] = folder
    return folders


@pytest.fixture(scope="module")
def under_scbench(
    tmp_path_factory: pytest.TempPathFactory, submissions: dict[str, Path], evaluation_image: str
) -> dict[str, dict[str, Any]]:
    """Each submission's records under SCBench's flow."""
    config = yaml.safe_load((PROBE_PROBLEM / "config.yaml").read_text())
    records = {}
    for name, submission in submissions.items():
        workspace = tmp_path_factory.mktemp("scbench") / "workspace"
        checkpoints = ["checkpoint_1"]
        scbench_flow.stage(PROBE_PROBLEM, checkpoints, "checkpoint_1", submission, workspace, {})
        command = scbench_flow.pytest_command(
            entrypoint="uv run main.py",
            checkpoint="checkpoint_1",
            timeout=config["checkpoints"]["checkpoint_1"]["timeout"],
            test_dependencies=config["test_dependencies"],
        )
        run = scbench_flow.run(workspace, evaluation_image, command, {})
        report = workspace / ".scbench/pytest-report.json"
        assert report.is_file(), run.output[-3000:]
        records[name] = read_records(report)
    return records


def evaluate(submission: Path, output: Path, *options: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            "evaluate",
            "--problem",
            str(PROBE_PROBLEM),
            "--checkpoint",
            "checkpoint_1",
            "--submission",
            str(submission),
            "--output",
            str(output),
            "--quiet",
            *options,
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return read_records(output / "probe/checkpoint_1/pytest-report.json")


@pytest.mark.parametrize("submission", SUBMISSIONS)
@pytest.mark.parametrize("cache", ["cached", "no-cache"])
def test_the_docker_executor_shows_the_tests_what_scbench_shows_them(
    under_scbench: dict[str, dict[str, Any]],
    submissions: dict[str, Path],
    tmp_path: Path,
    submission: str,
    cache: str,
) -> None:
    options = ["--executor", "docker", *(["--no-cache"] if cache == "no-cache" else [])]
    records = evaluate(submissions[submission], tmp_path / "out", *options)
    reference = under_scbench[submission]

    assert comparable(records) == comparable(reference)
    # The first `uv run` prints what it prints under SCBench: nothing after `uv add`, uv's
    # building of the workspace's own package without a requirements.txt.
    first = records["test_first_and_second_uv_run"]["first"]["stderr"]
    assert (first == "") == (submission == "with_requirements")
    # A test dependency is importable from a folder of the test's own, as under uvx.
    assert records["test_uv_run_from_a_copied_folder"]["copied"]["stdout"]["yaml"] is True
    for place, free in free_disk(records).items():
        expected = free_disk(reference)[place]
        assert abs(free - expected) <= max(2 * 1024**3, expected // 20), place
    setup_log = (tmp_path / "out/probe/checkpoint_1/setup.log").read_text()
    # With or without a requirements.txt, the cached run's setup is a copy of what the setup made.
    assert ("copied into the workspace from cache volume" in setup_log) == (cache == "cached")
    assert "does without caches" not in setup_log


@pytest.mark.parametrize("submission", SUBMISSIONS)
def test_the_local_executor_resolves_what_scbench_resolves(
    under_scbench: dict[str, dict[str, Any]],
    submissions: dict[str, Path],
    tmp_path: Path,
    submission: str,
) -> None:
    """On this machine, paths, the tools' places and the caller's CA variables are the machine's;
    what resolves to what, and what prints what, is SCBench's."""
    records = evaluate(submissions[submission], tmp_path / "out", "--executor", "local")
    assert _resolution(records) == _resolution(under_scbench[submission])


def _resolution(records: dict[str, Any]) -> dict[str, Any]:
    seen = comparable(records)
    first = seen["test_first_and_second_uv_run"]
    test_process = seen["test_the_test_process"]
    copied = seen["test_uv_run_from_a_copied_folder"]["copied"]
    workspace = first["first"]["stdout"]["cwd"]
    test_path = test_process["view"]["stdout"]["env"]["PATH"]
    uv_run_python = seen["test_uv_run_python_in_the_workspace"]["uv_run_python"]["stdout"]

    def where(path: str | None) -> str | None:
        return None if path is None else path.replace(workspace, "<workspace>")

    def printed(stderr: str) -> str:
        # uv warns when its cache and the workspace are on different file systems: on this
        # machine both are in /tmp; in SCBench's container, one is a bind mount.
        return _HARDLINK_WARNING.sub("", where(stderr) or "")

    return {
        "first stderr": printed(first["first"]["stderr"]),
        "second stderr": first["second"]["stderr"],
        "entry python": where(first["first"]["stdout"]["executable"]),
        "entry VIRTUAL_ENV": where(first["first"]["stdout"]["env"].get("VIRTUAL_ENV")),
        "entry imports yaml": first["first"]["stdout"]["yaml"],
        "test process python is the first on PATH": test_process["executable_is_first_python"],
        "test process PATH starts with": test_path.split(":")[0],
        "copied python": copied["stdout"]["executable"],
        "copied VIRTUAL_ENV": copied["stdout"]["env"].get("VIRTUAL_ENV"),
        "copied imports yaml": copied["stdout"]["yaml"],
        "imports outside a project": [
            seen[f"test_import_a_test_dependency_outside_the_project[{python}]"]["import"]
            for python in ("python", "python3")
        ],
        "uv run python": where(uv_run_python),
    }
