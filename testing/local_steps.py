"""One `run:` step of a workflow, run here as the runner runs it: its script in
`bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`), in the environment the
workflow's, the job's and the step's `env:` make, with the `${{ }}` expressions in them replaced by
values the test gives, GITHUB_OUTPUT a file of its own, and each `github.<name>` as GITHUB_<NAME>.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing.runner import read_env_file

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
STEP_TIMEOUT_S = 300


@dataclass(frozen=True)
class StepRun:
    exit_code: int
    output: str
    """stdout and stderr, interleaved."""
    outputs: dict[str, str]


def find_step(workflow: dict[str, Any], job: str, step_id: str) -> dict[str, Any]:
    (step,) = [step for step in workflow["jobs"][job]["steps"] if step.get("id") == step_id]
    return dict(step)


def run_step(
    workflow: dict[str, Any],
    job: str,
    step_id: str,
    *,
    cwd: Path,
    context: Mapping[str, str],
    env: Mapping[str, str] | None = None,
) -> StepRun:
    """Runs the step with `context` giving each expression's value (`github.ref_name`, ...) and
    `env` set over everything else."""
    step = find_step(workflow, job, step_id)
    shell = step.get("shell") or workflow.get("defaults", {}).get("run", {}).get("shell")
    assert shell == "bash", f"step {step_id}: the emulation runs `shell: bash`, not {shell!r}"
    script = step["run"]
    assert not _EXPRESSION.search(script), f"step {step_id}: an expression in its script"
    environment = dict(os.environ)
    for name, value in context.items():
        if name.startswith("github."):
            environment[f"GITHUB_{name.removeprefix('github.').upper()}"] = value
    for scope in (workflow, workflow["jobs"][job], step):
        for name, value in (scope.get("env") or {}).items():
            environment[name] = _evaluate(str(value), context)
    environment.update(env or {})
    with tempfile.TemporaryDirectory(prefix="scbench-step-") as temp:
        output_file = Path(temp) / "github_output"
        output_file.write_text("")
        environment["GITHUB_OUTPUT"] = str(output_file)
        script_file = Path(temp) / f"{step_id}.sh"
        script_file.write_text(script)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=cwd,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=STEP_TIMEOUT_S,
            check=False,
        )
        return StepRun(done.returncode, done.stdout, read_env_file(output_file.read_text()))


def _evaluate(value: str, context: Mapping[str, str]) -> str:
    def replace(found: re.Match[str]) -> str:
        expression = found.group(1)
        assert expression in context, f"the test gives no value for ${{{{ {expression} }}}}"
        return context[expression]

    return _EXPRESSION.sub(replace, value)
