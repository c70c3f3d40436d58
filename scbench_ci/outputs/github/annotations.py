"""Annotations pointing at the test files in the repository: errors for checkpoint failures,
regressions since the baseline and failing tests, warnings for flaky tests; for a check, its
findings. What is an annotation is decided here once; the step writes the first of them as
workflow commands (`workflow_commands`), a Check Run carries them all (`check_run.py`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Literal

from scbench_ci.job.reports import FAILING
from scbench_ci.outputs.check_console import checked
from scbench_ci.outputs.console import flaky_outcome, flaky_tests
from scbench_ci.outputs.github.workflow import workflow_command
from scbench_ci.problem.model import Group
from scbench_ci.results.findings import Severity
from scbench_ci.results.model import RunResult

MAX_ANNOTATIONS = 10
"""GitHub shows at most 10 error and 10 warning annotations of a step."""
MAX_MESSAGE_CHARS = 1000


@dataclass(frozen=True)
class Annotation:
    level: Literal["error", "warning"]
    message: str
    """Cut to MAX_MESSAGE_CHARS."""
    title: str
    file: str | None
    """Relative to the workspace; None when it is not in the workspace, or there is none."""
    line: int | None

    def workflow_command(self) -> str:
        """The annotation as a workflow command, every part escaped."""
        return workflow_command(
            self.level, self.message, title=self.title, file=self.file, line=self.line
        )


@dataclass(frozen=True)
class Annotations:
    """A run's errors and its warnings, each read lazily: tests one checkpoint at a time, and no
    further than what is taken of them."""

    errors: Iterable[Annotation]
    warnings: Iterable[Annotation]

    def __iter__(self) -> Iterator[Annotation]:
        yield from self.errors
        yield from self.warnings


Annotate = Callable[[RunResult, Path], Annotations]
"""A command's annotations of its run, paths relative to the workspace."""


def workflow_commands(annotations: Annotations) -> list[str]:
    """At most MAX_ANNOTATIONS errors, then at most MAX_ANNOTATIONS warnings, as the step's
    workflow commands."""
    return [
        annotation.workflow_command()
        for annotation in (
            *islice(annotations.errors, MAX_ANNOTATIONS),
            *islice(annotations.warnings, MAX_ANNOTATIONS),
        )
    ]


def run_annotations(result: RunResult, workspace: Path) -> Annotations:
    """Errors: checkpoint failures, then regressions, then the other failing tests by group;
    warnings: flaky tests."""
    return Annotations(_errors(result, workspace), _warnings(result, workspace))


def error_annotations(result: RunResult, workspace: Path) -> list[str]:
    """`run_annotations` as the step writes them."""
    return workflow_commands(run_annotations(result, workspace))


def check_annotations(run: RunResult, workspace: Path) -> Annotations:
    """A check's runs the infrastructure stopped and its error findings, then its warnings."""
    errors = [
        Annotation("error", _short(text), f"{problem.name} · infrastructure", None, None)
        for problem, report in checked(run)
        for text in report.infrastructure
    ]
    warnings: list[Annotation] = []
    for problem, report in checked(run):
        for finding in report.findings:
            annotation = Annotation(
                "error" if finding.severity is Severity.ERROR else "warning",
                _short(finding.message),
                f"{problem.name} · {finding.stage}",
                _repository_path(Path(problem.path).parent / finding.file, workspace),
                finding.line,
            )
            (errors if annotation.level == "error" else warnings).append(annotation)
    return Annotations(errors, warnings)


def finding_annotations(run: RunResult, workspace: Path) -> list[str]:
    """`check_annotations` as the step writes them."""
    return workflow_commands(check_annotations(run, workspace))


def _errors(result: RunResult, workspace: Path) -> Iterator[Annotation]:
    for problem, checkpoint in result.checkpoints():
        failure = checkpoint.failure
        if failure is not None:
            title = f"{problem.name} / {checkpoint.name}: {failure.kind.value}"
            yield Annotation("error", _short(failure.message), title, None, None)
    paths = {problem.name: problem.path for problem in result.problems}
    regressions = result.comparison.regressions if result.comparison else ()
    for change in regressions:
        yield Annotation(
            "error",
            _short(
                f"{change.before} before, {change.after} now"
                + (f": {change.message}" if change.message else "")
            ),
            f"Regression: {result.where(change.problem, change.checkpoint)} · "
            f"{change.group.value} · {change.test}",
            _repository_path(Path(paths[change.problem]) / change.file, workspace),
            change.line,
        )
    regressed = {(change.problem, change.checkpoint, change.test) for change in regressions}
    for group in Group:
        for problem, checkpoint in result.checkpoints():
            if not checkpoint.groups[group].failed:
                continue
            for test in checkpoint.tests:
                if test.group is not group or test.status not in FAILING:
                    continue
                if (problem.name, checkpoint.name, test.id) in regressed:
                    continue
                yield Annotation(
                    "error",
                    _short(test.message or test.status.value),
                    f"{result.where(problem.name, checkpoint.name)} · {group.value} · {test.id}",
                    _repository_path(Path(problem.path) / test.file, workspace),
                    test.line,
                )


def _warnings(result: RunResult, workspace: Path) -> Iterator[Annotation]:
    for flaky in flaky_tests(result):
        test = flaky.test
        yield Annotation(
            "warning",
            _short(
                flaky_outcome(test) + (f"; first failure: {test.message}" if test.message else "")
            ),
            f"Flaky: {result.where(flaky.problem.name, flaky.checkpoint.name)} · "
            f"{test.group.value} · {test.id}",
            _repository_path(Path(flaky.problem.path) / test.file, workspace),
            test.line,
        )


def _repository_path(path: Path, workspace: Path) -> str | None:
    """The runner maps annotation paths relative to the workspace; outside it, give none."""
    if not path.is_relative_to(workspace):
        return None
    return os.path.relpath(path, workspace)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " …"
