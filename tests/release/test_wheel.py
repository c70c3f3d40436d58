"""The released wheel as a user gets it: installed into a fresh virtual environment (its
dependencies from the package index), it evaluates the example in Docker with the exact counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from scbench_ci import __version__
from testing.examples import EXPECTED, group_counts
from testing.paths import EXAMPLES
from testing.results import checkpoint_documents

INSTALL_TIMEOUT_S = 600


def _run(argv: list[str | Path], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_wheel_in_a_fresh_environment_evaluates_the_example(
    built_dist: Path, test_image: str, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    (wheel,) = built_dist.glob("*.whl")
    created = _run([sys.executable, "-m", "venv", venv], tmp_path, 120)
    assert created.returncode == 0, created.stderr
    pip = [venv / "bin/python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    installed = _run([*pip, wheel], tmp_path, INSTALL_TIMEOUT_S)
    assert installed.returncode == 0, installed.stderr

    version = _run([venv / "bin/scbench-ci", "--version"], tmp_path, 60)
    assert version.stdout == f"scbench-ci {__version__}\n", version.stderr
    located = _run(
        [venv / "bin/python", "-c", "import scbench_ci; print(scbench_ci.__file__)"], tmp_path, 60
    )
    assert Path(located.stdout.strip()).is_relative_to(venv)

    problem = EXAMPLES / "wordstat"
    evaluated = _run(
        [
            venv / "bin/scbench-ci",
            *("evaluate", "--problem", problem, "--checkpoint", "checkpoint_2"),
            *("--submission", problem / "solutions/checkpoint_2"),
            *("--executor", "docker", "--image", test_image, "--output", tmp_path / "out"),
            "--quiet",
        ],
        tmp_path,
        900,
    )
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    results = json.loads((tmp_path / "out/results.json").read_text())
    assert results["tool_versions"]["scbench-ci"] == __version__
    (checkpoint,) = checkpoint_documents(results)
    assert (
        group_counts(checkpoint)
        == EXPECTED[("wordstat", "checkpoint_2", "solutions/checkpoint_2")][1]
    )
    # The template the wheel carries rendered the summary.
    assert "wordstat" in (tmp_path / "out/summary.md").read_text()
