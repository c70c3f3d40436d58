"""`--jobs auto` in Docker: evaluations whose tests wait leave the CPU idle, and more start
beside them; a checkpoint that timed out while extra jobs ran beside it is run again without
them, and a test that came near its timeout beside them stops further extras."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from scbench_ci.engines.admission import Decision
from scbench_ci.executors.choice import each_executors_settings
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.job.plan import plan_jobs
from scbench_ci.options import EvaluationOptions
from scbench_ci.pipeline.evaluation import RUN_AGAIN_NOTICE, evaluate_jobs
from scbench_ci.pipeline.placement import OnThisMachine
from scbench_ci.results.file import read_checkpoint
from testing.cli import run_cli
from testing.problems import ProblemFolder

# Extra jobs start only while the CPU stays idle, and a test's share of its timeout is measured.
pytestmark = pytest.mark.serial

WAITS = """
import subprocess
import time


def test_answers_then_waits(entrypoint_argv):
    run = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=60)
    assert run.stdout == "ready\\n"
    time.sleep({seconds})
"""


def _waiting_problem(root: Path, checkpoints: dict[str, float], timeout_s: float = 60) -> Path:
    """One checkpoint per entry, its one test waiting that many seconds; the solution prints
    `ready`."""
    problem = ProblemFolder(
        root / "waits",
        {
            "name": "waits",
            "entry_file": "main",
            "timeout": timeout_s,
            "checkpoints": {name: {"include_prior_tests": False} for name in checkpoints},
        },
    )
    for name, seconds in checkpoints.items():
        problem.write(f"tests/test_{name}.py", WAITS.format(seconds=seconds))
        problem.write(f"solutions/{name}/main.py", "print('ready')\n")
    return problem.root


def test_auto_starts_more_beside_evaluations_that_wait(tmp_path: Path, test_image: str) -> None:
    """Four checkpoints that wait 25 s each on a machine that is otherwise idle: `auto` starts
    one per core, then more once the CPU has stayed idle; every verdict is the solution's."""
    names = {f"checkpoint_{n}": 25 for n in range(1, 5)}
    problem = _waiting_problem(tmp_path, names)
    output = tmp_path / "out"
    run = run_cli(
        *("evaluate", "--problem", problem, "--checkpoint", "all"),
        *("--submission", problem / "solutions/{checkpoint}", "--output", output),
        *("--executor", "docker", "--image", test_image, "--jobs", "auto"),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((output / "results.json").read_text())
    assert results["jobs"] >= 3, run.stdout
    assert [c["passed"] for c in results["problems"][0]["checkpoints"]] == [True] * 4
    assert "side by side: one more started, the CPU was" in run.stdout
    assert "RUN_AGAIN" not in run.stdout and RUN_AGAIN_NOTICE not in run.stdout


class Crowd:
    """Admits `most` at once, beyond a base count of one, until backed off: every job runs
    beside extra ones."""

    tick_s: float | None = 0.2
    base = 1

    def __init__(self, most: int) -> None:
        self.most = most
        self.backed_off: list[str] = []

    def decide(self, running: int, holding: bool) -> Decision:
        if running < self.base:
            return Decision(True)
        if holding or self.backed_off or running >= self.most:
            return Decision(False, "no room")
        return Decision(True, "room")

    def started(self) -> None:
        pass

    def back_off(self, reason: str) -> None:
        self.backed_off.append(reason)


def test_a_timeout_beside_extra_jobs_is_run_again_without_them(
    tmp_path: Path, test_image: str
) -> None:
    """`hangs` times out beside two others: its result is its second run's, made once they
    ended, and says so; `near` used more than half of its timeout beside them: no extra starts
    after it. `near` waits 55% of its timeout: what its test takes besides the wait (starting the
    submission beside two other runs on 2 cores once took more than 2 s) stays far from it."""
    problem = _waiting_problem(
        tmp_path, {"hangs": 30, "near": 5.5, "quick": 0.5, "after": 0.5}, timeout_s=10
    )
    output = tmp_path / "out"
    options = EvaluationOptions(
        problems=(problem,),
        checkpoint="all",
        submission=str(problem / "solutions/{checkpoint}"),
        output_dir=output,
        executor="docker",
        settings_by_executor=each_executors_settings({"image": test_image}),
        # The second run is made, not the first one's signed result taken.
        skip_existing=True,
    )
    plan = plan_jobs(options.problems, "all", options.submission, output, None)
    crowd = Crowd(most=3)
    with contextlib.closing(OnThisMachine(DockerExecutor(options.executor_settings))) as placement:
        evaluations = evaluate_jobs(options, plan.jobs, placement, None, admission=crowd)

    results = {job.checkpoint.name: result for job, result in evaluations.results}
    assert evaluations.side_by_side == 3
    hangs = results["hangs"]
    assert not hangs.passed
    assert RUN_AGAIN_NOTICE in hangs.notices
    stored = read_checkpoint(
        output / "waits/hangs/result.json", options.policy, False, options.scbench
    )
    assert RUN_AGAIN_NOTICE in stored.notices
    assert results["near"].passed and RUN_AGAIN_NOTICE not in results["near"].notices
    assert re.fullmatch(
        r"a test of waits / near used (5[5-9]|[6-9]\d)% of its 10 s timeout beside extra jobs",
        crowd.backed_off[0],
    ), crowd.backed_off
    assert all(result.passed for name, result in results.items() if name != "hangs")
