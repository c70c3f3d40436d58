"""Annotations pointing at the test files in the repository: `::error` for checkpoint failures,
regressions since the baseline and failing tests, `::warning` for flaky tests; for a check, its
findings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from scbench_ci.outputs.check_console import checked
from scbench_ci.outputs.console import flaky_outcome, flaky_tests
from scbench_ci.outputs.github.workflow import command
from scbench_ci.problem.model import Group
from scbench_ci.reports import FAILING
from scbench_ci.results.findings import Severity
from scbench_ci.results.model import RunResult

MAX_ANNOTATIONS = 10
"""GitHub shows at most 10 error and 10 warning annotations of a step."""
MAX_MESSAGE_CHARS = 1000


def error_annotations(result: RunResult, workspace: Path) -> list[str]:
    """At most MAX_ANNOTATIONS errors (checkpoint failures, then regressions, then the other
    failing tests by group) and MAX_ANNOTATIONS warnings (flaky tests).

    Tests are read one checkpoint at a time, and no further than the lines that are shown."""
    return [
        *islice(_errors(result, workspace), MAX_ANNOTATIONS),
        *islice(_warnings(result, workspace), MAX_ANNOTATIONS),
    ]


def finding_annotations(run: RunResult, workspace: Path) -> list[str]:
    """A check's runs the infrastructure stopped and its findings: at most MAX_ANNOTATIONS
    errors (those runs first), then at most MAX_ANNOTATIONS warnings."""
    errors = [
        command("error", _short(text), title=f"{problem.name} · infrastructure")
        for problem, report in checked(run)
        for text in report.infrastructure
    ]
    warnings: list[str] = []
    for problem, report in checked(run):
        for finding in report.findings:
            line = command(
                finding.severity.value,
                _short(finding.message),
                title=f"{problem.name} · {finding.stage}",
                file=_repository_path(Path(problem.path).parent / finding.file, workspace),
                line=finding.line,
            )
            (errors if finding.severity is Severity.ERROR else warnings).append(line)
    return [*errors[:MAX_ANNOTATIONS], *warnings[:MAX_ANNOTATIONS]]


def _errors(result: RunResult, workspace: Path) -> Iterator[str]:
    for problem, checkpoint in result.checkpoints():
        failure = checkpoint.failure
        if failure is not None:
            yield command(
                "error",
                _short(failure.message),
                title=f"{problem.name} / {checkpoint.name}: {failure.kind.value}",
            )
    paths = {problem.name: problem.path for problem in result.problems}
    regressions = result.comparison.regressions if result.comparison else ()
    for change in regressions:
        yield command(
            "error",
            _short(
                f"{change.before} before, {change.after} now"
                + (f": {change.message}" if change.message else "")
            ),
            title=f"Regression: {result.where(change.problem, change.checkpoint)} · "
            f"{change.group.value} · {change.test}",
            file=_repository_path(Path(paths[change.problem]) / change.file, workspace),
            line=change.line,
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
                yield command(
                    "error",
                    _short(test.message or test.status.value),
                    title=f"{result.where(problem.name, checkpoint.name)} · {group.value} · "
                    f"{test.id}",
                    file=_repository_path(Path(problem.path) / test.file, workspace),
                    line=test.line,
                )


def _warnings(result: RunResult, workspace: Path) -> Iterator[str]:
    for flaky in flaky_tests(result):
        test = flaky.test
        yield command(
            "warning",
            _short(
                flaky_outcome(test) + (f"; first failure: {test.message}" if test.message else "")
            ),
            title=f"Flaky: {result.where(flaky.problem.name, flaky.checkpoint.name)} · "
            f"{test.group.value} · {test.id}",
            file=_repository_path(Path(flaky.problem.path) / test.file, workspace),
            line=test.line,
        )


def _repository_path(path: Path, workspace: Path) -> str | None:
    """The runner maps annotation paths relative to the workspace; outside it, give none."""
    if not path.is_relative_to(workspace):
        return None
    return os.path.relpath(path, workspace)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " …"
