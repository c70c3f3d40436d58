"""SCBench's own evaluation flow, re-created as SCBench's code runs it, for differential tests.

What SCBench does for one checkpoint (slop_code `evaluation/pytest_runner.py` `PytestRunner.run`,
`execution/docker_runtime/exec.py`, `execution/shared.py` and the default environment
`configs/environments/docker-python3.12-uv.yaml`), and so what this does:

- the workspace is a copy of the submission on the host (its own `tests/` kept; SCBench's
  snapshots leave out `*.pyc`, `venv/`, `.venv/` and `.evaluation_tests/`); the problem's `tests/`
  is copied into `.evaluation_tests/` (`WORKSPACE_TEST_DIR`: conftest.py, the test files of this
  checkpoint and, with prior tests, of every earlier one, and every other file and folder), then a
  `pytest.ini` (`testpaths = tests`, which the command's `.evaluation_tests` argument overrides,
  and the markers);
- an entry script `HANDLE_ENTRY.sh` is written into the workspace: the environment's setup
  commands (`uv init`, `uv add -r requirements.txt`, whatever they exit with), a split marker,
  then `uvx --with=<plugins> --with=<test dependencies> pytest ...`;
- it runs as `docker run --rm -v <workspace>:/workspace --workdir /workspace -e <env> <image>
  /bin/sh -c "bash -l HANDLE_ENTRY.sh"` in SCBench's evaluation image (the environment's base plus
  `setup_base.docker.j2`: scbench-ci's default image), as 1000:1000 (`get_eval_user`), owning the
  workspace (SCBench's image `chown`s it), on a bridge network; the environment is the
  environment file's `env` (`UV_CACHE_DIR`, `PIP_CACHE_DIR`, `PIP_CONFIG_FILE`), the checkpoint's,
  and the assets' variables; `HOME` is `/tmp/agent_home`, as SCBench's image sets it.

The index and CA variables of this machine are passed too, as every container here needs them to
reach PyPI.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker

SCBENCH_WORKDIR = "/workspace"
SCBENCH_HOME = "/tmp/agent_home"
SCBENCH_EVAL_USER = "1000:1000"
SCBENCH_ENV = {
    "UV_CACHE_DIR": "/tmp/uv-cache",
    "PIP_CACHE_DIR": "/tmp/pip-cache-dir",
    "PIP_CONFIG_FILE": "/tmp/pip-conf",
}
SCBENCH_SETUP = ("uv init", "uv add -r requirements.txt")
# SCBench's list as its runner has it, not ours (scbench_ci.job.pytest_command.PYTEST_PLUGINS): a
# change in either shows up as a difference.
TEST_DEPENDENCIES = (
    "pytest",
    "pytest-json-ctrf",
    "pytest-json-report",
    "pytest-timeout",
    "jsonschema",
    "deepdiff",
)
BUILTIN_MARKERS = {
    "error": "error-handling / edge-case tests",
    "functionality": "non-core / nice-to-have tests",
    "regression": "regression tests from prior checkpoints",
}
WORKSPACE_TEST_DIR = ".evaluation_tests"
"""SCBench's `slop_code.common.constants.WORKSPACE_TEST_DIR`, not ours: a change in either shows."""
SPLIT_STRING = "_____STARTING COMMAND_____"
ENTRY_SCRIPT = "HANDLE_ENTRY.sh"


@dataclass(frozen=True)
class ScbenchRun:
    workspace: Path
    """The workspace on this machine, as the run left it (`.scbench/` holds the reports)."""
    output: str


def stage(
    problem: Path,
    checkpoints: list[str],
    checkpoint: str,
    submission: Path,
    workspace: Path,
    markers: dict[str, str],
    *,
    include_prior_tests: bool = True,
) -> None:
    """The workspace as SCBench makes it: the submission, the selected tests (the checkpoint's,
    and with `include_prior_tests`, SCBench's default, every earlier one's), pytest.ini."""
    shutil.copytree(
        submission,
        workspace,
        symlinks=True,
        ignore=shutil.ignore_patterns("*.pyc", "venv", ".venv", WORKSPACE_TEST_DIR),
    )
    chosen = (
        checkpoints[: checkpoints.index(checkpoint) + 1] if include_prior_tests else [checkpoint]
    )
    selected = {f"test_{name}.py" for name in chosen}
    tests = workspace / WORKSPACE_TEST_DIR
    tests.mkdir()
    for item in (problem / "tests").iterdir():
        if item.is_file():
            is_test = item.name.startswith("test_") and item.name.endswith(".py")
            if not is_test or item.name in selected:
                shutil.copy2(item, tests / item.name)
        elif item.is_dir() and item.name != "__pycache__":
            shutil.copytree(item, tests / item.name)
    lines = [f"    {name}: {text}" for name, text in BUILTIN_MARKERS.items()]
    lines += [
        f"    {name}: {text}" for name, text in markers.items() if name not in BUILTIN_MARKERS
    ]
    (workspace / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\nmarkers =\n" + "\n".join(lines) + "\n"
    )


def materialize_assets(problem: Path, assets: dict[str, str], workspace: Path) -> dict[str, str]:
    """SCBench's `materialize_static_assets_for_tests` (`pytest_runner.py` STEP 2): each static
    asset (name: path in the problem) copied into `.evaluation_tests/assets/<name>`; the variables
    it sets, relative to the workspace."""
    variables: dict[str, str] = {}
    folder = Path(WORKSPACE_TEST_DIR, "assets")
    for name, path in assets.items():
        source, target = problem / path, workspace / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
        variables["SCBENCH_ASSETS_DIR"] = str(folder)
        variables[f"SCBENCH_ASSET_{name.upper()}"] = str(folder / name)
    return variables


def pytest_command(
    *, entrypoint: str, checkpoint: str, timeout: int, test_dependencies: list[str]
) -> str:
    """SCBench's `_build_pytest_command`, word for word."""
    withs = [f"--with={dependency}" for dependency in (*TEST_DEPENDENCIES, *test_dependencies)]
    return " ".join(
        [
            "uvx",
            *withs,
            "pytest",
            f"--timeout={timeout}",
            f"--entrypoint={shlex.quote(entrypoint)}",
            f"--checkpoint={shlex.quote(checkpoint)}",
            "--ctrf=.scbench/ctrf-report.json",
            "--json-report",
            "--json-report-file=.scbench/pytest-report.json",
            "--json-report-omit=traceback",
            "--json-report-omit=streams",
            "--json-report-omit=log",
            "--json-report-omit=collectors",
            "--json-report-omit=warnings",
            "-vv",
            WORKSPACE_TEST_DIR,
        ]
    )


def run(
    workspace: Path,
    image: str,
    command: str,
    variables: dict[str, str],
) -> ScbenchRun:
    """Run the staged workspace as SCBench's Docker runtime does: setup, then the command."""
    setup = "\n".join(SCBENCH_SETUP)
    (workspace / ENTRY_SCRIPT).write_text(
        f'#!/bin/sh\n{setup}\n\necho "\n\n{SPLIT_STRING}\n" >&2\n'
        f'echo "\n\n{SPLIT_STRING}\n"\n{command}\n'
    )
    (workspace / ENTRY_SCRIPT).chmod(0o755)
    environment = {**SCBENCH_ENV, **variables, **_machine_variables(), "HOME": SCBENCH_HOME}
    uid, gid = (int(part) for part in SCBENCH_EVAL_USER.split(":"))
    for folder, _, files in os.walk(workspace):
        for path in (folder, *(os.path.join(folder, name) for name in files)):
            os.lchown(path, uid, gid)
    client = docker.from_env()
    try:
        container = client.containers.run(
            image,
            ["/bin/sh", "-c", f"bash -l {ENTRY_SCRIPT}"],
            volumes={str(workspace): {"bind": SCBENCH_WORKDIR, "mode": "rw"}},
            working_dir=SCBENCH_WORKDIR,
            environment=environment,
            user=SCBENCH_EVAL_USER,
            network_mode="bridge",
            detach=True,
        )
        try:
            # Whatever pytest exits with (1: a test failed), as SCBench's runtime takes it.
            container.wait()
            output = container.logs(stdout=True, stderr=True)
        finally:
            container.remove(force=True)
    finally:
        client.close()
    return ScbenchRun(workspace, output.decode(errors="replace"))


def _machine_variables() -> dict[str, str]:
    """This machine's index and proxy settings: how any container here reaches PyPI."""
    pattern = re.compile(r"(UV|PIP)_[A-Z_]*INDEX[A-Z_]*|(HTTPS?|NO)_PROXY", re.IGNORECASE)
    return {name: value for name, value in os.environ.items() if pattern.fullmatch(name)}


def ordered_checkpoints(config: dict[str, Any]) -> list[str]:
    """A problem's checkpoints in order (`order`, then name), from its config.yaml."""
    checkpoints = config["checkpoints"]
    return sorted(checkpoints, key=lambda name: (checkpoints[name].get("order", 0), name))


def reference_report(
    problem: Path, config: dict[str, Any], checkpoint: str, workspace: Path, image: str
) -> Path:
    """The checkpoint's reference solution run under this flow in `workspace` (staged, then one
    `docker run` with its setup); the pytest-report.json it wrote."""
    markers = {name: str(m.get("description", "")) for name, m in config.get("markers", {}).items()}
    stage(
        problem,
        ordered_checkpoints(config),
        checkpoint,
        problem / "solutions" / checkpoint,
        workspace,
        markers,
        include_prior_tests=config["checkpoints"][checkpoint].get("include_prior_tests", True),
    )
    timeout = config["checkpoints"][checkpoint].get("timeout") or config.get("timeout") or 30
    command = pytest_command(
        entrypoint=f"uv run {config['entry_file']}.py",
        checkpoint=checkpoint,
        timeout=int(timeout),
        test_dependencies=list(config.get("test_dependencies") or []),
    )
    assets = {name: str(asset["path"]) for name, asset in config.get("static_assets", {}).items()}
    outcome = run(workspace, image, command, materialize_assets(problem, assets, workspace))
    report = workspace / ".scbench/pytest-report.json"
    if not report.is_file():
        raise SystemExit(f"no report under SCBench's flow:\n{outcome.output[-3000:]}")
    return report
