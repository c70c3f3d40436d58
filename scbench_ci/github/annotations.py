"""`::error` annotations for failing tests, pointing at the test file in the repository."""

from __future__ import annotations

import os
from pathlib import Path

from scbench_ci.github.workflow import command
from scbench_ci.problem import Group
from scbench_ci.reports import FAILING
from scbench_ci.results import EvaluationResult

MAX_ANNOTATIONS = 10
MAX_MESSAGE_CHARS = 1000


def error_annotations(result: EvaluationResult, workspace: Path) -> list[str]:
    """At most MAX_ANNOTATIONS lines: checkpoint failures first, then failing tests by group."""
    lines = []
    for checkpoint in result.checkpoints:
        failure = checkpoint.failure
        if failure is not None:
            lines.append(
                command(
                    "error",
                    _short(failure.message),
                    title=f"{result.problem.name} / {checkpoint.name}: {failure.kind.value}",
                )
            )
    order = list(Group)
    failing = sorted(
        (
            (checkpoint.name, test)
            for checkpoint in result.checkpoints
            for test in checkpoint.tests
            if test.status in FAILING
        ),
        key=lambda pair: order.index(pair[1].group),
    )
    for checkpoint_name, test in failing:
        lines.append(
            command(
                "error",
                _short(test.message or test.status.value),
                title=f"{checkpoint_name} · {test.group.value} · {test.id}",
                file=_repository_path(result.problem.root / test.file, workspace),
                line=test.line,
            )
        )
    return lines[:MAX_ANNOTATIONS]


def _repository_path(path: Path, workspace: Path) -> str | None:
    """The runner maps annotation paths relative to the workspace; outside it, give none."""
    if not path.is_relative_to(workspace):
        return None
    return os.path.relpath(path, workspace)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " …"
