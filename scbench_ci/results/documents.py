"""Results as JSON documents and back: each result type as results.json (and a checkpoint's
result.json) holds it, and the inverse, which derives again what a document only states: the
counts from its tests, the verdicts from the policy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from scbench_ci.executors.base import ImageRecord, MissingProgram
from scbench_ci.foundation.scbench_runner import scbench_runner
from scbench_ci.job.reports import Status, capped_as_written
from scbench_ci.problem.model import Group
from scbench_ci.results import policy
from scbench_ci.results.comparison_model import CheckpointDelta, Comparison, TestChange
from scbench_ci.results.findings import (
    CheckReport,
    Stage,
    finding_from_json,
    finding_to_json,
)
from scbench_ci.results.history_json import history_from_json, history_to_json
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    NetworkFailures,
    ProblemResult,
    RepeatCount,
    RunResult,
    ScbenchRecord,
    TestResult,
    add_counts,
)
from scbench_ci.results.network_causes import network_failures
from scbench_ci.results.policy import GroupCounts
from scbench_ci.results.quality import QualityMeasures, QualityOutcome, Unmeasured
from scbench_ci.results.schema import SCHEMA_VERSION
from scbench_ci.results.trends import trends, trends_to_json
from scbench_ci.results.verdict import count_groups, counts_skipped, verdict
from scbench_ci.trust.strict_json import JsonError


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
        "notices": list(result.notices),
        "submission": result.submission,
        "artifacts": result.artifacts,
        "started_at": result.started_at,
        "fingerprint": result.fingerprint,
        "reused": result.reused,
        "phases": {name: round(seconds, 3) for name, seconds in result.phases.items()},
        "image": None if result.image is None else _image_json(result.image),
        "quality": None if result.quality is None else _quality_json(result.quality),
        "network": None if result.network is None else _network_json(result.network),
        "scbench": None if result.scbench is None else _scbench_json(result.scbench),
        "tests": [_test_json(test) for test in result.tests],
    }


def _network_json(network: NetworkFailures) -> dict[str, Any]:
    return {"tests": network.tests, "hosts": list(network.hosts)}


def _scbench_json(record: ScbenchRecord) -> dict[str, Any]:
    return {
        "infrastructure_failure": record.infrastructure_failure,
        "pytest_collected": record.pytest_collected,
        "test_collection_hash": record.collection_hash,
        "inventory": record.inventory,
    }


def _scbench_from_json(document: Mapping[str, Any] | None) -> ScbenchRecord | None:
    if document is None:
        return None
    return ScbenchRecord(
        infrastructure_failure=document["infrastructure_failure"],
        pytest_collected=document["pytest_collected"],
        collection_hash=document["test_collection_hash"],
        inventory=document["inventory"],
    )


def _quality_json(quality: QualityOutcome) -> dict[str, Any]:
    measures = None if quality.measures is None else asdict(quality.measures)
    if measures is not None and quality.measures is not None:
        measures["seconds"] = round(measures["seconds"], 3)
        measures["cloned_pct"] = quality.measures.cloned_pct
        measures["verbosity_flagged_pct"] = quality.measures.verbosity_flagged_pct
    document = {"measures": measures, "reason": quality.reason}
    if quality.unmeasured is not None:
        unmeasured = quality.unmeasured
        document["unmeasured"] = {"count": unmeasured.count, "files": list(unmeasured.files)}
    return document


def _quality_from_json(document: Mapping[str, Any] | None, where: str) -> QualityOutcome | None:
    """A JsonError at `where` when it has both measures and a reason, or neither."""
    if document is None:
        return None
    measures, reason = document["measures"], document["reason"]
    if (measures is None) == (reason is None):
        raise JsonError(f"{where}quality", "has measures and a reason" if reason else "has neither")
    unmeasured = document.get("unmeasured")
    return QualityOutcome(
        None if measures is None else QualityMeasures(**_without(measures, DERIVED_MEASURES)),
        reason,
        None if unmeasured is None else _unmeasured_from_json(unmeasured, f"{where}quality"),
    )


DERIVED_MEASURES = ("cloned_pct", "verbosity_flagged_pct")
"""Written beside the measures they derive from, and derived again when read."""


def _without(document: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in names}


def _unmeasured_from_json(document: Mapping[str, Any], where: str) -> Unmeasured:
    """A JsonError at `where` when it lists more files than it counts, or a file other than as
    one line of printable text (as they are written)."""
    files = tuple(document["files"])
    if len(files) > document["count"]:
        raise JsonError(f"{where}.unmeasured", "lists more files than it counts")
    for number, name in enumerate(files):
        if not name.isprintable():
            raise JsonError(
                f"{where}.unmeasured.files[{number}]", "is not one line of printable text"
            )
    return Unmeasured(document["count"], files)


def _image_json(image: ImageRecord) -> dict[str, Any]:
    return {**asdict(image), "missing": [asdict(program) for program in image.missing]}


def _image_from_json(document: Mapping[str, Any] | None) -> ImageRecord | None:
    if document is None:
        return None
    return ImageRecord(
        name=document["name"],
        id=document["id"],
        built_from=document["built_from"],
        toolchains=document["toolchains"],
        note=document["note"],
        versions=dict(document["versions"]),
        missing=tuple(
            MissingProgram(each["program"], each["without"]) for each in document.get("missing", ())
        ),
    )


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
        "scbench": run.scbench,
        "comparison": None if run.comparison is None else comparison_to_json(run.comparison),
        "history": None if run.history is None else history_to_json(run.history),
        "trends": run_trends(run),
        "totals": {
            "problems": len(run.problems),
            "checkpoints": len(checkpoints),
            "checkpoints_passed": sum(c.passed for c in checkpoints),
            "groups": {group.value: _counts_json(counts) for group, counts in totals.items()},
            "all": _counts_json(add_counts(totals.values())),
        },
    }


def run_trends(run: RunResult) -> dict[str, Any] | None:
    """What the run's history says (`trends`), as results.json holds it."""
    return None if run.history is None else trends_to_json(trends(run.history))


def _counts_json(counts: GroupCounts) -> dict[str, Any]:
    return {**asdict(counts), "pass_rate": counts.pass_rate}


def _test_json(test: TestResult) -> dict[str, Any]:
    return {
        "id": test.id,
        "checkpoint": test.checkpoint,
        "group": test.group.value,
        "status": test.status.value,
        "duration_s": test.duration_s,
        "markers": list(test.markers),
        "message": test.message,
        "details": test.traceback,
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
                **_quality_before_json(delta),
            }
            for delta in comparison.checkpoints
        ],
        "selection_notes": list(comparison.selection_notes),
    }


def _quality_before_json(delta: CheckpointDelta) -> dict[str, Any]:
    """The baseline's verbosity and erosion of the checkpoint, when it was measured."""
    if delta.verbosity_before is None or delta.erosion_before is None:
        return {}
    return {
        "quality_before": {"verbosity": delta.verbosity_before, "erosion": delta.erosion_before}
    }


def _optional_counts(counts: GroupCounts | None) -> dict[str, Any] | None:
    return None if counts is None else _counts_json(counts)


def agree(told: Mapping[str, Any], derived: Mapping[str, Any], where: str) -> None:
    """Each field `derived` has is what `told` says, or a JsonError at the first that is not."""
    for key, value in derived.items():
        if isinstance(value, Mapping):
            agree(told[key], value, f"{where}.{key}")
        elif told[key] != value:
            raise JsonError(
                f"{where}.{key}",
                f"says {shown(told[key])}, but the tests listed give {shown(value)}",
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
                        c,
                        policy_name,
                        flaky_passes,
                        f"problems[{i}].checkpoints[{j}]",
                        scbench=document["scbench"],
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
        scbench=document["scbench"],
        comparison=None
        if document["comparison"] is None
        else comparison_from_json(document["comparison"]),
        history=None if document["history"] is None else history_from_json(document["history"]),
    )


def check_from_json(document: Mapping[str, Any]) -> CheckReport:
    """The inverse of `check_to_json`: its counts follow from the findings."""
    return CheckReport(
        findings=tuple(finding_from_json(finding) for finding in document["findings"]),
        skipped=frozenset(Stage(name) for name, counts in document["stages"].items() if not counts),
        infrastructure=tuple(document["infrastructure"]),
    )


def checkpoint_from_json(
    document: Mapping[str, Any],
    policy_name: str,
    flaky_passes: bool,
    where: str = "",
    *,
    scbench: str,
) -> CheckpointResult:
    """Its counts are those of its tests (a JsonError at `where` when the document's are not),
    counted as the runner `scbench` counts them, its verdict that of the policy over them and
    its failure."""
    failure = None
    if document["failure"] is not None:
        failure = Failure(
            FailureKind(document["failure"]["kind"]),
            document["failure"]["message"],
            document["failure"]["log_tail"],
        )
    tests = tuple(test_from_json(test) for test in document["tests"])
    record = _scbench_from_json(document.get("scbench"))
    groups = count_groups(tests, flaky_passes, counts_skipped(scbench_runner(scbench), record))
    prefix = f"{where}." if where else ""
    for group, counts in groups.items():
        agree(document["groups"][group.value], _counts_json(counts), f"{prefix}groups.{group}")
    agree(document["totals"], _counts_json(add_counts(groups.values())), f"{prefix}totals")
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
        notices=tuple(document["notices"]),
        submission=document["submission"],
        artifacts=document["artifacts"],
        started_at=document["started_at"],
        fingerprint=document["fingerprint"],
        reused=document["reused"],
        phases=dict(document["phases"]),
        image=_image_from_json(document.get("image")),
        quality=_quality_from_json(document.get("quality"), prefix),
        # Derived again from the tests, as the counts are: what the file says is not read.
        network=network_failures(tests),
        scbench=record,
    )


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
                verbosity_before=delta["quality_before"]["verbosity"]
                if "quality_before" in delta
                else None,
                erosion_before=delta["quality_before"]["erosion"]
                if "quality_before" in delta
                else None,
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


def test_from_json(document: Mapping[str, Any]) -> TestResult:
    message, details = capped_as_written(document["message"], document["details"])
    return TestResult(
        id=document["id"],
        checkpoint=document["checkpoint"],
        group=Group(document["group"]),
        status=Status(document["status"]),
        duration_s=document["duration_s"],
        markers=tuple(document["markers"]),
        message=message,
        traceback=details,
        file=document["file"],
        line=document["line"],
        reruns=document["reruns"],
        repeat=None
        if document["repeat"] is None
        else RepeatCount(document["repeat"]["passed"], document["repeat"]["runs"]),
    )


def shown(value: object) -> str:
    """A value from the file, for a message: escaped and capped."""
    text = json.dumps(value, ensure_ascii=True) if _jsonable(value) else repr(value)
    return text if len(text) <= 100 else text[:99] + "…"


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str)
