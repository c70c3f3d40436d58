"""`::error` annotations for failing tests, pointing at the test file in the repository."""

from __future__ import annotations

import os
from pathlib import Path

from scbench_ci.github.workflow import command
from scbench_ci.problem import Group
from scbench_ci.reports import FAILING
from scbench_ci.results import CheckpointResult, ProblemResult, RunResult

MAX_ANNOTATIONS = 10
MAX_MESSAGE_CHARS = 1000


def error_annotations(result: RunResult, workspace: Path) -> list[str]:
    """At most MAX_ANNOTATIONS lines: checkpoint failures first, then failing tests by group.

    Tests are read one checkpoint at a time, and no further than the lines that are shown."""
    lines = []
    for problem, checkpoint in result.checkpoints():
        failure = checkpoint.failure
        if failure is not None:
            lines.append(
                command(
                    "error",
                    _short(failure.message),
                    title=f"{problem.name} / {checkpoint.name}: {failure.kind.value}",
                )
            )
    for group in Group:
        for problem, checkpoint in result.checkpoints():
            if len(lines) >= MAX_ANNOTATIONS:
                return lines[:MAX_ANNOTATIONS]
            if not checkpoint.groups[group].failed:
                continue
            for test in checkpoint.tests:
                if test.group is not group or test.status not in FAILING:
                    continue
                lines.append(
                    command(
                        "error",
                        _short(test.message or test.status.value),
                        title=f"{_where(result, problem, checkpoint)} · {group.value} · {test.id}",
                        file=_repository_path(Path(problem.path) / test.file, workspace),
                        line=test.line,
                    )
                )
    return lines[:MAX_ANNOTATIONS]


def _where(result: RunResult, problem: ProblemResult, checkpoint: CheckpointResult) -> str:
    return f"{problem.name} / {checkpoint.name}" if len(result.problems) > 1 else checkpoint.name


def _repository_path(path: Path, workspace: Path) -> str | None:
    """The runner maps annotation paths relative to the workspace; outside it, give none."""
    if not path.is_relative_to(workspace):
        return None
    return os.path.relpath(path, workspace)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " …"
