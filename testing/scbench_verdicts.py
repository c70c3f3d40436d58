"""A checkpoint's verdict in SCBench's own terms, as SCBench's package decided it
(benchmarks/scbench_checkpoint.py's `checkpoint.json`) or as scbench-ci decided it (its output
folder), and what differs between two of them.

Test ids are scbench-ci's (`tests/<file>::<name>`): SCBench's name the folder it stages the tests
in (`.evaluation_tests/`), the same files. Statuses are SCBench's words (`passed`, `failed`,
`error`, `skipped`), scbench-ci's mapped to them as its `evaluation.json` maps them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scbench_ci.job.reports import Status
from scbench_ci.results.scbench_format import EVALUATION_FILE, STATUSES

SCBENCH_TESTS_FOLDER = ".evaluation_tests/"
"""SCBench's `WORKSPACE_TEST_DIR`, as its test ids start."""


@dataclass(frozen=True)
class Verdict:
    """One checkpoint's evaluation, field by field as SCBench's CorrectnessResults has it."""

    tests: Mapping[str, tuple[str, str]]
    """Each test's (status, group)."""
    pass_counts: Mapping[str, int]
    total_counts: Mapping[str, int]
    pytest_collected: int | None
    test_collection_hash: str | None
    infrastructure_failure: bool | None
    """None where scbench-ci wrote no evaluation.json (pytest never ran to an exit code)."""
    core_cases: bool
    """`core-cases`: SCBench's `PassPolicy.check` on its counts; scbench-ci's verdict."""
    pytest_exit_code: int | None

    def to_json(self) -> dict[str, Any]:
        document = asdict(self)
        document["tests"] = {test: list(pair) for test, pair in self.tests.items()}
        return document

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Verdict:
        fields = dict(document)
        fields["tests"] = {test: (pair[0], pair[1]) for test, pair in document["tests"].items()}
        return cls(**fields)


def from_scbench(checkpoint: Mapping[str, Any]) -> Verdict:
    """SCBench's verdict from what benchmarks/scbench_checkpoint.py wrote (`checkpoint.json`)."""
    return Verdict(
        tests={
            "tests/" + test.removeprefix(SCBENCH_TESTS_FOLDER): (entry["status"], entry["group"])
            for test, entry in checkpoint["tests"].items()
        },
        pass_counts=dict(checkpoint["pass_counts"]),
        total_counts=dict(checkpoint["total_counts"]),
        pytest_collected=checkpoint["pytest_collected"],
        test_collection_hash=checkpoint["test_collection_hash"],
        infrastructure_failure=checkpoint["infrastructure_failure"],
        core_cases=checkpoint["core_cases"],
        pytest_exit_code=checkpoint["pytest_exit_code"],
    )


def from_scbench_ci(output: Path, problem: str, checkpoint: str) -> Verdict:
    """scbench-ci's verdict on one checkpoint from its output folder: the tests and the verdict
    from results.json, the rest from the `evaluation.json` it writes in SCBench's format."""
    results = json.loads((output / "results.json").read_text())
    (entry,) = (
        found
        for each in results["problems"]
        if each["name"] == problem
        for found in each["checkpoints"]
        if found["name"] == checkpoint
    )
    tests = {
        test["id"]: (STATUSES[Status(test["status"])], test["group"]) for test in entry["tests"]
    }
    evaluation_path = output / entry["artifacts"] / EVALUATION_FILE
    evaluation = json.loads(evaluation_path.read_text()) if evaluation_path.is_file() else {}
    return Verdict(
        tests=tests,
        pass_counts=evaluation.get("pass_counts", {}),
        total_counts=evaluation.get("total_counts", {}),
        pytest_collected=evaluation.get("pytest_collected"),
        test_collection_hash=evaluation.get("test_collection_hash"),
        infrastructure_failure=evaluation.get("infrastructure_failure"),
        core_cases=bool(entry["passed"]),
        pytest_exit_code=entry["pytest_exit_code"],
    )


def differences(scbench: Verdict, ours: Verdict) -> list[str]:
    """Each way `ours` differs from `scbench`, one line each (none: the same verdict)."""
    found = []
    for test in sorted(scbench.tests.keys() | ours.tests.keys()):
        theirs, mine = scbench.tests.get(test), ours.tests.get(test)
        if theirs is None or mine is None:
            where = "scbench-ci" if theirs is None else "SCBench"
            found.append(f"{test}: only under {where}")
        elif theirs != mine:
            found.append(
                f"{test}: SCBench {theirs[0]} ({theirs[1]}), scbench-ci {mine[0]} ({mine[1]})"
            )
    for field in (
        "pass_counts",
        "total_counts",
        "pytest_collected",
        "test_collection_hash",
        "infrastructure_failure",
        "core_cases",
        "pytest_exit_code",
    ):
        theirs, mine = getattr(scbench, field), getattr(ours, field)
        if theirs != mine:
            found.append(f"{field}: SCBench {_shown(theirs)}, scbench-ci {_shown(mine)}")
    return found


def _shown(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {value[key]}" for key in sorted(value)) or "{}"
    return str(value)
