"""results.json: the writer and the one typed reader (its inverse), both held to the shipped schema.

A run writes each checkpoint's result to its own `result.json` in the checkpoint's folder as soon
as the checkpoint is judged, and keeps only its counts in memory: the checkpoint's tests are read
back from that file when something iterates over them (`StoredTests`). The run's results.json is
then written one checkpoint at a time, so neither grows the evaluator's memory with the run.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, overload

import jsonschema

from scbench_ci.errors import UsageError
from scbench_ci.problem.model import Group
from scbench_ci.reports import Status
from scbench_ci.results import policy
from scbench_ci.results.comparison import CheckpointDelta, Comparison, TestChange
from scbench_ci.results.file_checks import check_checkpoint, check_run
from scbench_ci.results.findings import (
    CheckReport,
    Stage,
    finding_from_json,
    finding_to_json,
)
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    ProblemResult,
    RepeatCount,
    RunResult,
    TestResult,
    add_counts,
    count_groups,
    verdict,
)
from scbench_ci.results.policy import GroupCounts
from scbench_ci.trust.output_folder import write_file
from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse, path_of
from scbench_ci.trust.untrusted_tree import Kind, UntrustedTree, UntrustedTreeError

SCHEMA_VERSION = 3
_T = TypeVar("_T")
LIMITS = JsonLimits()
"""What a results.json may hold: its size, depth, string and list lengths, numbers."""
RESULTS_FILE = "results.json"
CHECKPOINT_RESULT_FILE = "result.json"
"""Each checkpoint's entry of results.json, alone, in the checkpoint's folder."""
_SCHEMA_FILES = {
    1: "results.v1.schema.json",
    2: "results.v2.schema.json",
    3: "results.schema.json",
}


class ResultsError(UsageError):
    """A results file that cannot be read, or is not what scbench-ci writes."""


# Writing.


def checkpoint_to_json(result: CheckpointResult) -> dict[str, Any]:
    failure = result.failure
    return {
        "name": result.name,
        "include_prior_tests": result.include_prior_tests,
        "passed": result.passed,
        "failure": None
        if failure is None
        else {
            "kind": failure.kind.value,
            "message": failure.message,
            "log_tail": failure.log_tail,
        },
        "pytest_exit_code": result.pytest_exit_code,
        "duration_s": result.duration_s,
        "totals": _counts_json(result.counts),
        "groups": {group.value: _counts_json(counts) for group, counts in result.groups.items()},
        "warnings": list(result.warnings),
        "submission": result.submission,
        "artifacts": result.artifacts,
        "started_at": result.started_at,
        "fingerprint": result.fingerprint,
        "reused": result.reused,
        "phases": {name: round(seconds, 3) for name, seconds in result.phases.items()},
        "tests": [_test_json(test) for test in result.tests],
    }


def write_checkpoint(result: CheckpointResult, path: Path) -> CheckpointResult:
    """Write the checkpoint's result.json; the same result, its tests now read from the file."""
    document = checkpoint_to_json(result)
    _validator("checkpoint").validate(document)
    write_file(path.parent, path.name, _dumps(document).encode())
    return replace(result, tests=StoredTests(path, len(document["tests"])))


def run_header(run: RunResult) -> dict[str, Any]:
    """results.json without its problems: the run's settings, verdict and totals."""
    checkpoints = [checkpoint for _, checkpoint in run.checkpoints()]
    totals = run.group_totals()
    return {
        "schema_version": SCHEMA_VERSION,
        "policy": run.policy,
        "policy_description": policy.describe(run.policy),
        "passed": run.passed,
        "infrastructure_failure": run.infrastructure_failure,
        "executor": run.executor,
        "jobs": run.jobs,
        "started_at": run.started_at,
        "duration_s": round(run.duration_s, 3),
        "tool_versions": run.tool_versions,
        "reruns": run.reruns,
        "repeat": run.repeat,
        "flaky_passes": run.flaky_passes,
        "comparison": None if run.comparison is None else comparison_to_json(run.comparison),
        "totals": {
            "problems": len(run.problems),
            "checkpoints": len(checkpoints),
            "checkpoints_passed": sum(c.passed for c in checkpoints),
            "groups": {group.value: _counts_json(counts) for group, counts in totals.items()},
            "all": _counts_json(add_counts(totals.values())),
        },
    }


def write_results(run: RunResult, output_dir: Path) -> Path:
    """results.json, written one checkpoint at a time."""
    header = run_header(run)
    _validator("envelope").validate({**header, "problems": []})
    chunks = (chunk.encode() for chunk in _results_text(header, run))
    return write_file(output_dir, RESULTS_FILE, chunks)


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
        _validator("problem_head").validate({**head, "checkpoints": []})
        yield ("," if index else "") + "\n    " + _indent(_dumps(head), 4)[: -len("\n    }")]
        yield ',\n      "checkpoints": ['
        for number, checkpoint in enumerate(problem.checkpoints):
            document = checkpoint_to_json(checkpoint)
            _validator("checkpoint").validate(document)
            yield ("," if number else "") + "\n        " + _indent(_dumps(document), 8)
        yield "\n      ]\n    }"
    yield "\n  ]\n}\n"


def _dumps(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _indent(text: str, spaces: int) -> str:
    """JSON text nested `spaces` deep: every line but the first indented, no final newline."""
    return text.rstrip("\n").replace("\n", "\n" + " " * spaces)


def _counts_json(counts: GroupCounts) -> dict[str, Any]:
    return {
        "passed": counts.passed,
        "failed": counts.failed,
        "skipped": counts.skipped,
        "total": counts.total,
        "flaky": counts.flaky,
        "pass_rate": counts.pass_rate,
    }


def _test_json(test: TestResult) -> dict[str, Any]:
    return {
        "id": test.id,
        "checkpoint": test.checkpoint,
        "group": test.group.value,
        "status": test.status.value,
        "duration_s": test.duration_s,
        "markers": list(test.markers),
        "message": test.message,
        "details": test.details,
        "file": test.file,
        "line": test.line,
        "reruns": test.reruns,
        "repeat": None
        if test.repeat is None
        else {"passed": test.repeat.passed, "runs": test.repeat.runs},
    }


def check_to_json(report: CheckReport) -> dict[str, Any]:
    def counts(stage: Stage) -> dict[str, int] | None:
        found = report.counts(stage)
        return None if found is None else {"errors": found[0], "warnings": found[1]}

    return {
        "passed": report.passed,
        "infrastructure": list(report.infrastructure),
        "stages": {stage.value: counts(stage) for stage in Stage},
        "findings": [finding_to_json(finding) for finding in report.findings],
    }


def comparison_to_json(comparison: Comparison) -> dict[str, Any]:
    def changes(items: tuple[TestChange, ...]) -> list[dict[str, Any]]:
        return [{**asdict(item), "group": item.group.value} for item in items]

    return {
        "baseline": comparison.baseline,
        "baseline_started_at": comparison.baseline_started_at,
        "totals": {
            "regressions": len(comparison.regressions),
            "fixed": len(comparison.fixed),
            "new": len(comparison.new),
            "removed": len(comparison.removed),
            "flaky": len(comparison.flaky),
            "verdict_changes": len(comparison.verdict_changes),
        },
        "regressions": changes(comparison.regressions),
        "fixed": changes(comparison.fixed),
        "new": changes(comparison.new),
        "removed": changes(comparison.removed),
        "flaky": changes(comparison.flaky),
        "checkpoints": [
            {
                "problem": delta.problem,
                "checkpoint": delta.checkpoint,
                "passed_before": delta.passed_before,
                "passed_after": delta.passed_after,
                "groups": {
                    group.value: {
                        "before": _optional_counts(delta.groups_before.get(group)),
                        "after": _optional_counts(delta.groups_after.get(group)),
                    }
                    for group in Group
                },
            }
            for delta in comparison.checkpoints
        ],
        "selection_notes": list(comparison.selection_notes),
    }


def _optional_counts(counts: GroupCounts | None) -> dict[str, Any] | None:
    return None if counts is None else _counts_json(counts)


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
    if type(version) is not int or version not in _SCHEMA_FILES:
        known = " and ".join(str(v) for v in _SCHEMA_FILES)
        raise ResultsError(
            f"{path}: schema_version {_shown(version)} is not supported "
            f"(this scbench-ci reads {known})"
        )
    _check(path, document, _schema(version))
    if version == 1:
        document = _upgrade_v1(document)
    if version <= 2:
        document = _upgrade_v2(document)
    return _judged(path, lambda: _run_from_checked(document, version == SCHEMA_VERSION))


def read_checkpoint(path: Path, policy_name: str, flaky_passes: bool) -> CheckpointResult:
    """A checkpoint's own result.json (as `write_checkpoint` wrote it), judged by `policy_name`."""
    document = _read_json(path)
    _check(path, document, _schema_of("checkpoint"))
    return _judged(path, lambda: _checkpoint_from_checked(document, "", policy_name, flaky_passes))


def _judged(path: Path, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except JsonError as error:
        raise ResultsError(f"{path}: {error}") from None


def _run_from_checked(document: Mapping[str, Any], current: bool) -> RunResult:
    check_run(document)
    run = run_from_json(document)
    if current:
        _agree(document["totals"], _derived_totals(run), "totals")
    return run


def _derived_totals(run: RunResult) -> dict[str, Any]:
    """The run's totals as the writer counts them, but for the verdicts (derived anyway)."""
    totals = dict(run_header(run)["totals"])
    del totals["checkpoints_passed"]
    return totals


def _checkpoint_from_checked(
    document: Mapping[str, Any], where: str, policy_name: str, flaky_passes: bool
) -> CheckpointResult:
    check_checkpoint(document, where)
    return checkpoint_from_json(document, policy_name, flaky_passes, where)


def _agree(told: Mapping[str, Any], derived: Mapping[str, Any], where: str) -> None:
    """Each field `derived` has is what `told` says, or a JsonError at the first that is not."""
    for key, value in derived.items():
        if isinstance(value, Mapping):
            _agree(told[key], value, f"{where}.{key}")
        elif told[key] != value:
            raise JsonError(
                f"{where}.{key}",
                f"says {_shown(told[key])}, but the tests listed give {_shown(value)}",
            )


def run_from_json(document: Mapping[str, Any]) -> RunResult:
    """The inverse of what write_results writes (a document that passed the schema and its
    checks): each checkpoint judged again by the run's policy."""
    policy_name, flaky_passes = document["policy"], document["flaky_passes"]
    return RunResult(
        policy=policy_name,
        executor=document["executor"],
        jobs=document["jobs"],
        started_at=document["started_at"],
        duration_s=document["duration_s"],
        problems=tuple(
            ProblemResult(
                name=problem["name"],
                path=problem["path"],
                version=problem["version"],
                checkpoints=tuple(
                    checkpoint_from_json(
                        c, policy_name, flaky_passes, f"problems[{i}].checkpoints[{j}]"
                    )
                    for j, c in enumerate(problem["checkpoints"])
                ),
                checkpoint_order=tuple(problem["checkpoint_order"]),
                check=None if problem["check"] is None else check_from_json(problem["check"]),
            )
            for i, problem in enumerate(document["problems"])
        ),
        tool_versions=dict(document["tool_versions"]),
        reruns=document["reruns"],
        repeat=document["repeat"],
        flaky_passes=flaky_passes,
        comparison=None
        if document["comparison"] is None
        else comparison_from_json(document["comparison"]),
    )


def check_from_json(document: Mapping[str, Any]) -> CheckReport:
    """The inverse of `check_to_json`: its counts follow from the findings."""
    return CheckReport(
        findings=tuple(finding_from_json(finding) for finding in document["findings"]),
        skipped=frozenset(Stage(name) for name, counts in document["stages"].items() if not counts),
        infrastructure=tuple(document["infrastructure"]),
    )


def checkpoint_from_json(
    document: Mapping[str, Any], policy_name: str, flaky_passes: bool, where: str = ""
) -> CheckpointResult:
    """Its counts are those of its tests (a JsonError at `where` when the document's are not),
    its verdict that of the policy over them and its failure."""
    failure = None
    if document["failure"] is not None:
        failure = Failure(
            FailureKind(document["failure"]["kind"]),
            document["failure"]["message"],
            document["failure"]["log_tail"],
        )
    tests = tuple(_test_from_json(test) for test in document["tests"])
    groups = count_groups(tests, flaky_passes)
    prefix = f"{where}." if where else ""
    for group, counts in groups.items():
        _agree(document["groups"][group.value], _counts_json(counts), f"{prefix}groups.{group}")
    _agree(document["totals"], _counts_json(add_counts(groups.values())), f"{prefix}totals")
    return CheckpointResult(
        name=document["name"],
        include_prior_tests=document["include_prior_tests"],
        passed=verdict(policy_name, failure, groups),
        failure=failure,
        pytest_exit_code=document["pytest_exit_code"],
        duration_s=document["duration_s"],
        groups=groups,
        tests=tests,
        warnings=tuple(document["warnings"]),
        submission=document["submission"],
        artifacts=document["artifacts"],
        started_at=document["started_at"],
        fingerprint=document["fingerprint"],
        reused=document["reused"],
        phases=dict(document["phases"]),
    )


class StoredTests(Sequence[TestResult]):
    """A checkpoint's tests, read from its result.json each time they are gone through."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[TestResult]:
        document = _read_json(self.path)
        _check(self.path, document, _schema_of("checkpoint"))
        _judged(self.path, lambda: check_checkpoint(document, ""))
        for test in document["tests"]:
            yield _test_from_json(test)

    @overload
    def __getitem__(self, index: int) -> TestResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TestResult]: ...
    def __getitem__(self, index: int | slice) -> TestResult | Sequence[TestResult]:
        return tuple(self)[index]

    def __repr__(self) -> str:
        return f"StoredTests({str(self.path)!r}, {self._count})"


def _read_json(path: Path) -> Any:
    """The file's JSON, read through the guard of untrusted files: its folder as the user gave
    it, the file itself regular and never through a link, within the limits."""
    try:
        with UntrustedTree.opened(path.parent) as folder:
            kind = folder.kind(path.name)
            if kind is None:
                raise ResultsError(f"{path}: no such file")
            if kind is Kind.FOLDER:
                raise ResultsError(f"{path}: a folder, not a results file")
            data = folder.read_file(path.name, LIMITS.max_bytes)
        return parse(data, LIMITS)
    except UntrustedTreeError as error:
        raise ResultsError(f"{path}: {error.reason}") from None
    except JsonError as error:
        raise ResultsError(f"{path}: {error}") from None


def _check(path: Path, document: Any, schema: Mapping[str, Any]) -> None:
    validator = _StrictValidator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        where = path_of(error.absolute_path) or "the document"
        raise ResultsError(f"{path}: not a scbench-ci results file: {where}: {_short(error)}")


def _short(error: jsonschema.ValidationError) -> str:
    message = str(error.message)
    return message if len(message) <= 300 else message[:299] + "…"


def _shown(value: object) -> str:
    """A value from the file, for a message: escaped and capped."""
    text = json.dumps(value, ensure_ascii=True) if _jsonable(value) else repr(value)
    return text if len(text) <= 100 else text[:99] + "…"


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _upgrade_v1(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 1 document (one problem) as version 2 has it."""
    checkpoints = [
        {
            **checkpoint,
            "submission": "",
            "artifacts": "",
            "started_at": document["started_at"],
            "fingerprint": None,
            "reused": False,
            "phases": {},
        }
        for checkpoint in document["checkpoints"]
    ]
    return {
        **document,
        "schema_version": 2,
        "jobs": 1,
        "problems": [
            {
                **document["problem"],
                "path": "",
                "passed": document["passed"],
                "infrastructure_failure": document["infrastructure_failure"],
                "checkpoints": checkpoints,
            }
        ],
    }


def _upgrade_v2(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 2 document as version 3 has it: nothing was flaky, rerun or repeated,
    there was no comparison, and it was no check."""

    def counts(old: Mapping[str, Any]) -> dict[str, Any]:
        return {**old, "flaky": 0}

    def checkpoint(old: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **old,
            "totals": counts(old["totals"]),
            "groups": {name: counts(value) for name, value in old["groups"].items()},
            "tests": [{**test, "reruns": 0, "repeat": None} for test in old["tests"]],
        }

    return {
        **document,
        "schema_version": SCHEMA_VERSION,
        "reruns": 0,
        "repeat": 1,
        "flaky_passes": False,
        "comparison": None,
        "problems": [
            {
                **problem,
                "checkpoint_order": [c["name"] for c in problem["checkpoints"]],
                "checkpoints": [checkpoint(c) for c in problem["checkpoints"]],
                "check": None,
            }
            for problem in document["problems"]
        ],
    }


def comparison_from_json(document: Mapping[str, Any]) -> Comparison:
    def changes(items: list[Mapping[str, Any]]) -> tuple[TestChange, ...]:
        return tuple(TestChange(**{**item, "group": Group(item["group"])}) for item in items)

    def groups(delta: Mapping[str, Any], side: str) -> dict[Group, GroupCounts]:
        return {
            Group(name): _counts_from_json(pair[side])
            for name, pair in delta["groups"].items()
            if pair[side] is not None
        }

    return Comparison(
        baseline=document["baseline"],
        baseline_started_at=document["baseline_started_at"],
        regressions=changes(document["regressions"]),
        fixed=changes(document["fixed"]),
        new=changes(document["new"]),
        removed=changes(document["removed"]),
        flaky=changes(document["flaky"]),
        checkpoints=tuple(
            CheckpointDelta(
                problem=delta["problem"],
                checkpoint=delta["checkpoint"],
                passed_before=delta["passed_before"],
                passed_after=delta["passed_after"],
                groups_before=groups(delta, "before"),
                groups_after=groups(delta, "after"),
            )
            for delta in document["checkpoints"]
        ),
        selection_notes=tuple(document["selection_notes"]),
    )


def _counts_from_json(document: Mapping[str, Any]) -> GroupCounts:
    return GroupCounts(
        passed=document["passed"],
        failed=document["failed"],
        skipped=document["skipped"],
        total=document["total"],
        flaky=document["flaky"],
    )


def _test_from_json(document: Mapping[str, Any]) -> TestResult:
    return TestResult(
        id=document["id"],
        checkpoint=document["checkpoint"],
        group=Group(document["group"]),
        status=Status(document["status"]),
        duration_s=document["duration_s"],
        markers=tuple(document["markers"]),
        message=document["message"],
        details=document["details"],
        file=document["file"],
        line=document["line"],
        reruns=document["reruns"],
        repeat=None
        if document["repeat"] is None
        else RepeatCount(document["repeat"]["passed"], document["repeat"]["runs"]),
    )


# The schema.


def _is_integer(_: object, value: object) -> bool:
    """An int, never a bool (`True` is an int in Python) nor a float (`3.0`)."""
    return type(value) is int


def _is_number(_: object, value: object) -> bool:
    return type(value) is int or (type(value) is float and math.isfinite(value))


# jsonschema's `integer` takes 3.0, and `number` takes inf and nan.
_StrictValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)


@cache
def _schema(version: int) -> dict[str, Any]:
    text = resources.files("scbench_ci").joinpath("schema", _SCHEMA_FILES[version]).read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _schema_of(part: str) -> dict[str, Any]:
    """The current schema's definition `part` on its own, or one of the parts a streamed
    results.json is checked by: `envelope` (no problems), `problem_head` (no checkpoints)."""
    full = _schema(SCHEMA_VERSION)
    defs = copy.deepcopy(full["$defs"])
    if part == "envelope":
        envelope = copy.deepcopy(full)
        envelope["properties"]["problems"] = {"type": "array", "maxItems": 0}
        return envelope
    if part == "problem_head":
        defs["problem_head"] = copy.deepcopy(defs["problem"])
        defs["problem_head"]["properties"]["checkpoints"] = {"type": "array", "maxItems": 0}
    return {"$schema": full["$schema"], "$defs": defs, "$ref": f"#/$defs/{part}"}


@cache
def _validator(part: str) -> Any:
    return _StrictValidator(_schema_of(part))
