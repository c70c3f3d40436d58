"""The `evaluate` core: the jobs planned and the inputs checked before anything runs, then the run,
its comparison and the output folder, whichever front end built the options."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from scbench_ci.action.inputs import read_inputs
from scbench_ci.commands.evaluate import run_evaluate
from scbench_ci.foundation.errors import ExitCode, ProblemError, UsageError
from scbench_ci.options import EvaluationOptions
from scbench_ci.outputs.summary import SUMMARY_FILE
from scbench_ci.results.baseline import Baseline
from scbench_ci.results.file import RESULTS_FILE
from testing.problems import ProblemFolder


class _Started(Exception):
    """The core asked for the baseline: the inputs were good, and nothing has run yet."""


def _baseline() -> Baseline | None:
    raise _Started


def _never_opened() -> contextlib.AbstractContextManager[TextIO | None]:
    raise AssertionError("the runs' output was opened")


def _quiet() -> contextlib.AbstractContextManager[TextIO | None]:
    return contextlib.nullcontext()


def _env(workspace: Path, **inputs: str) -> dict[str, str]:
    env = {"GITHUB_WORKSPACE": str(workspace)}
    env.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return env


def _action_options(env: dict[str, str]) -> EvaluationOptions:
    return read_inputs(env).options


def test_the_problem_is_read_before_anything_runs(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "p")
    for checkpoint, message in [
        ("checkpoint_9", "checkpoints: no checkpoint 'checkpoint_9'"),
        ("checkpoint_1", "problem folder does not exist"),
    ]:
        problem = "p" if checkpoint == "checkpoint_9" else "missing"
        options = _action_options(_env(tmp_path, problem=problem, checkpoint=checkpoint))
        with pytest.raises(ProblemError, match=message):
            run_evaluate(options, echo=_never_opened, warn=print, baseline=_baseline)
    assert not (tmp_path / ".scbench").exists()


@pytest.mark.parametrize("checkpoint", ["checkpoint_2", "all"])
def test_every_evaluated_submission_folder_stays_in_the_workspace(
    tmp_path: Path, checkpoint: str
) -> None:
    """Each evaluated checkpoint's folder is checked, `{checkpoint}` replaced by its name: only
    checkpoint_2's is a symlink out of the workspace."""
    ProblemFolder(tmp_path / "workspace/p")
    solutions = tmp_path / "workspace/solutions"
    for name in ("checkpoint_1", "checkpoint_3"):
        (solutions / name).mkdir(parents=True)
    (solutions / "checkpoint_2").symlink_to(tmp_path)
    env = _env(tmp_path / "workspace", problem="p", submission="solutions/{checkpoint}")

    def run(checkpoint: str) -> None:
        options = _action_options({**env, "INPUT_CHECKPOINT": checkpoint})
        run_evaluate(options, echo=_never_opened, warn=print, baseline=_baseline)

    with pytest.raises(_Started):
        run("checkpoint_1")
    with pytest.raises(UsageError, match="input submission: 'solutions/checkpoint_2' leaves"):
        run(checkpoint)


@contextlib.contextmanager
def _recorded(lines: list[str]) -> Iterator[TextIO | None]:
    lines.append("opened")
    yield None
    lines.append("closed")


@pytest.mark.slow
def test_the_output_folder_and_the_exit_code(tmp_path: Path) -> None:
    """results.json and summary.md, naming the artifact as the run's problems make it; the
    verdict read through `fail_on`."""
    problem = ProblemFolder(tmp_path / "demo")
    problem.write("tests/test_checkpoint_1.py", "def test_fails():\n    assert False\n")
    (tmp_path / "submission").mkdir()
    options = EvaluationOptions(
        problems=(problem.root,),
        checkpoint="checkpoint_1",
        submission=str(tmp_path / "submission"),
        output_dir=tmp_path / "out",
        executor="local",
        fail_on="never",
    )
    opened: list[str] = []
    outcome = run_evaluate(
        options,
        echo=lambda: _recorded(opened),
        warn=print,
        artifact_name=lambda run: f"scbench-{run.problems[0].name}",
    )
    assert opened == ["opened", "closed"]
    assert outcome.results_path == tmp_path / "out" / RESULTS_FILE
    assert json.loads(outcome.results_path.read_text())["passed"] is False
    assert "scbench-demo" in (tmp_path / "out" / SUMMARY_FILE).read_text()
    assert not outcome.result.passed
    assert outcome.exit_code is ExitCode.PASSED
