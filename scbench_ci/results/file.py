"""results.json: the writer and the one typed reader (its inverse), both held to the shipped schema.

A run writes each checkpoint's result to its own `result.json` in the checkpoint's folder as soon
as the checkpoint is judged, and keeps only its counts in memory: the checkpoint's tests are read
back from that file when something iterates over them (`StoredTests`). The run's results.json is
then written one checkpoint at a time, so neither grows the evaluator's memory with the run.

What each result is as JSON, and back, is `documents`'; the schemas and their versions are
`schema`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, overload

from scbench_ci.foundation.errors import UsageError
from scbench_ci.results.documents import (
    agree,
    check_to_json,
    checkpoint_from_json,
    checkpoint_to_json,
    run_from_json,
    run_header,
    run_trends,
    shown,
    test_from_json,
)
from scbench_ci.results.file_checks import check_checkpoint, check_run
from scbench_ci.results.history_json import check_history
from scbench_ci.results.model import CheckpointResult, RunResult, TestResult
from scbench_ci.results.pull_request import (
    PULL_REQUEST_FILE,
    PullRequestRef,
    pull_request_from_json,
    pull_request_to_json,
)
from scbench_ci.results.schema import (
    SCHEMA_FILES,
    SCHEMA_VERSION,
    schema,
    schema_of,
    schema_problem,
    upgraded,
    upgraded_checkpoint,
    validator,
)
from scbench_ci.trust.output_folder import write_file
from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse
from scbench_ci.trust.untrusted_tree import Kind, UntrustedTree, UntrustedTreeError

_T = TypeVar("_T")
LIMITS = JsonLimits()
"""What a results.json may hold: its size, depth, string and list lengths, numbers."""
PULL_REQUEST_LIMITS = JsonLimits(
    max_bytes=4096, max_containers=1, max_depth=1, max_string_chars=100, max_items=2
)
"""What a pull_request.json may hold: one small object."""
RESULTS_FILE = "results.json"
CHECKPOINT_RESULT_FILE = "result.json"
"""Each checkpoint's entry of results.json, alone, in the checkpoint's folder."""


class ResultsError(UsageError):
    """A results file that cannot be read, or is not what scbench-ci writes."""


# Writing.


def write_checkpoint(result: CheckpointResult, path: Path) -> CheckpointResult:
    """Write the checkpoint's result.json; the same result, its tests now read from the file."""
    document = checkpoint_to_json(result)
    validator("checkpoint").validate(document)
    write_file(path.parent, path.name, _dumps(document).encode())
    return replace(result, tests=StoredTests(path, len(document["tests"])))


def write_results(run: RunResult, output_dir: Path) -> Path:
    """results.json, written one checkpoint at a time."""
    header = run_header(run)
    validator("envelope").validate({**header, "problems": []})
    chunks = (chunk.encode() for chunk in _results_text(header, run))
    return write_file(output_dir, RESULTS_FILE, chunks)


def write_pull_request(reference: PullRequestRef, output_dir: Path) -> Path:
    """pull_request.json beside results.json."""
    document = pull_request_to_json(reference)
    return write_file(output_dir, PULL_REQUEST_FILE, _dumps(document).encode())


def _results_text(header: dict[str, Any], run: RunResult) -> Iterator[str]:
    yield _dumps(header)[: -len("\n}\n")] + ',\n  "problems": ['
    for index, problem in enumerate(run.problems):
        head = {
            "name": problem.name,
            "path": problem.path,
            "version": problem.version,
            "checkpoint_order": list(problem.checkpoint_order),
            "passed": problem.passed,
            "infrastructure_failure": problem.infrastructure_failure,
            "check": None if problem.check is None else check_to_json(problem.check),
        }
        validator("problem_head").validate({**head, "checkpoints": []})
        yield ("," if index else "") + "\n    " + _indent(_dumps(head), 4)[: -len("\n    }")]
        yield ',\n      "checkpoints": ['
        for number, checkpoint in enumerate(problem.checkpoints):
            document = checkpoint_to_json(checkpoint)
            validator("checkpoint").validate(document)
            yield ("," if number else "") + "\n        " + _indent(_dumps(document), 8)
        yield "\n      ]\n    }"
    yield "\n  ]\n}\n"


def _dumps(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _indent(text: str, spaces: int) -> str:
    """JSON text nested `spaces` deep: every line but the first indented, no final newline."""
    return text.rstrip("\n").replace("\n", "\n" + " " * spaces)


# Reading.


def load_results(path: Path) -> RunResult:
    """A results.json of this or an earlier schema version, re-judged: its verdicts are derived
    from its tests, its policy and its failures, never read.

    Anything else (not JSON, past a cap, not the schema, an impossible value, counts that do not
    count its tests) is a ResultsError naming the file and the field, and nothing else is raised."""
    document = _read_json(path)
    if not isinstance(document, dict):
        raise ResultsError(f"{path}: not a scbench-ci results.json (not a JSON object)")
    version = document.get("schema_version")
    if type(version) is not int or version not in SCHEMA_FILES:
        raise ResultsError(
            f"{path}: schema_version {shown(version)} is not supported "
            f"(this scbench-ci reads versions {min(SCHEMA_FILES)} to {max(SCHEMA_FILES)})"
        )
    _check(path, document, schema(version))
    document = upgraded(document, version)
    return _judged(path, lambda: _run_from_checked(document, version == SCHEMA_VERSION))


def load_pull_request(path: Path) -> PullRequestRef:
    """The pull_request.json an artifact carries beside its results.json; a ResultsError
    naming the file and the field for anything else."""
    document = _read_json(path, PULL_REQUEST_LIMITS)
    return _judged(path, lambda: pull_request_from_json(document))


def read_checkpoint(
    path: Path, policy_name: str, flaky_passes: bool, scbench: str
) -> CheckpointResult:
    """A checkpoint's own result.json (as `write_checkpoint` wrote it), judged by `policy_name`
    and counted as the runner `scbench` counts."""
    document = upgraded_checkpoint(_read_json(path))
    _check(path, document, schema_of("checkpoint"))
    return _judged(
        path, lambda: _checkpoint_from_checked(document, "", policy_name, flaky_passes, scbench)
    )


def _judged(path: Path, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except JsonError as error:
        raise ResultsError(f"{path}: {error}") from None


def _run_from_checked(document: Mapping[str, Any], current: bool) -> RunResult:
    check_run(document)
    if document["history"] is not None:
        check_history(document["history"], "history")
    run = run_from_json(document)
    if current:
        agree(document["totals"], _derived_totals(run), "totals")
        if document["trends"] != run_trends(run):
            raise JsonError("trends", "not what its history gives")
    return run


def _derived_totals(run: RunResult) -> dict[str, Any]:
    """The run's totals as the writer counts them, but for the verdicts (derived anyway)."""
    totals = dict(run_header(run)["totals"])
    del totals["checkpoints_passed"]
    return totals


def _checkpoint_from_checked(
    document: Mapping[str, Any], where: str, policy_name: str, flaky_passes: bool, scbench: str
) -> CheckpointResult:
    check_checkpoint(document, where)
    return checkpoint_from_json(document, policy_name, flaky_passes, where, scbench=scbench)


class StoredTests(Sequence[TestResult]):
    """A checkpoint's tests, read from its result.json each time they are gone through."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[TestResult]:
        document = _read_json(self.path)
        _check(self.path, document, schema_of("checkpoint"))
        _judged(self.path, lambda: check_checkpoint(document, ""))
        for test in document["tests"]:
            yield test_from_json(test)

    @overload
    def __getitem__(self, index: int) -> TestResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TestResult]: ...
    def __getitem__(self, index: int | slice) -> TestResult | Sequence[TestResult]:
        return tuple(self)[index]

    def __repr__(self) -> str:
        return f"StoredTests({str(self.path)!r}, {self._count})"


def _read_json(path: Path, limits: JsonLimits = LIMITS) -> Any:
    """The file's JSON, read through the guard of untrusted files: its folder as the user gave
    it, the file itself regular and never through a link, within the limits."""
    try:
        with UntrustedTree.opened(path.parent) as folder:
            kind = folder.kind(path.name)
            if kind is None:
                raise ResultsError(f"{path}: no such file")
            if kind is Kind.FOLDER:
                raise ResultsError(f"{path}: a folder, not a results file")
            data = folder.read_file(path.name, limits.max_bytes)
        return parse(data, limits)
    except UntrustedTreeError as error:
        raise ResultsError(f"{path}: {error.reason}") from None
    except JsonError as error:
        raise ResultsError(f"{path}: {error}") from None


def _check(path: Path, document: Any, schema: Mapping[str, Any]) -> None:
    problem = schema_problem(document, schema)
    if problem is not None:
        raise ResultsError(f"{path}: not a scbench-ci results file: {problem}")
