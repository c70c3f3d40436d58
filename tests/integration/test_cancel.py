"""Ctrl-C or SIGTERM in the middle of side-by-side evaluations: the run ends now, not when the
tests do, and nothing of it is left (containers, volumes, processes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testing.problems import ProblemFolder
from tests.integration.test_hostile import nothing_survives  # noqa: F401 (autouse)

HANGING = "import time\n\ndef test_waits():\n    time.sleep(600)\n"


@pytest.mark.parametrize(
    ("executor", "stop"), [("docker", signal.SIGINT), ("local", signal.SIGTERM)]
)
def test_a_cancelled_run_stops_every_evaluation_at_once(
    executor: str, stop: signal.Signals, tmp_path: Path, test_image: str
) -> None:
    problem = ProblemFolder(tmp_path / "problem")
    for name in ("checkpoint_1", "checkpoint_2", "checkpoint_3"):
        problem.write(f"tests/test_{name}.py", HANGING)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    output = tmp_path / "out"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "scbench_ci", "evaluate", "--problem", str(problem.root)),
            *("--checkpoint", "all", "--submission", str(submission), "--output", str(output)),
            *("--jobs", "2", "--executor", executor),
            *(("--image", test_image) if executor == "docker" else ()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Long enough for both first evaluations to be in their tests (a warm start takes seconds).
    time.sleep(20)
    assert process.poll() is None
    process.send_signal(stop)
    stopped = time.monotonic()
    out, err = process.communicate(timeout=60)
    assert time.monotonic() - stopped < 30
    assert process.returncode == (130 if stop == signal.SIGINT else 143), out + err
    assert err.strip().endswith("interrupted" if stop == signal.SIGINT else "terminated")
    assert "Traceback" not in err
    assert not (output / "results.json").exists()  # no verdict from a run that did not finish
