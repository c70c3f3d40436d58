from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.results.findings import (
    CheckReport,
    Finding,
    Severity,
    Stage,
    finding_from_json,
    finding_path,
    finding_to_json,
)

FINDING = Finding(
    Stage.ORACLE,
    Severity.ERROR,
    "demo/tests/test_checkpoint_1.py",
    12,
    "fails with the reference solution",
    checkpoint="checkpoint_1",
    test="tests/test_checkpoint_1.py::test_a",
)


def test_json_round_trip() -> None:
    data = finding_to_json(FINDING)
    assert data == {
        "stage": "oracle",
        "severity": "error",
        "file": "demo/tests/test_checkpoint_1.py",
        "line": 12,
        "message": "fails with the reference solution",
        "checkpoint": "checkpoint_1",
        "test": "tests/test_checkpoint_1.py::test_a",
    }
    assert finding_from_json(json.loads(json.dumps(data))) == FINDING
    plain = Finding(Stage.STATIC, Severity.WARNING, "demo/config.yaml", None, "m")
    assert finding_from_json(finding_to_json(plain)) == plain


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"stage": "lint"}, "'lint' is not a valid Stage"),
        ({"severity": None}, "None is not a valid Severity"),
        ({"file": 3}, "file and message must be strings"),
        ({"line": 0}, "line must be a number from 1 or null, got 0"),
        ({"line": True}, "line must be a number from 1 or null, got True"),
        ({"test": ["x"]}, "test must be a string or null"),
    ],
)
def test_json_that_is_not_a_finding(change: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=f"^not a finding: .*{expected}"):
        finding_from_json(finding_to_json(FINDING) | change)


@pytest.mark.parametrize("data", [{}, [], {"stage": "static"}])
def test_json_missing_keys(data: Any) -> None:
    with pytest.raises(ValueError, match=r"^not a finding"):
        finding_from_json(data)


def test_paths_relative_to_the_base_when_inside_it() -> None:
    assert (
        finding_path(Path("/repo/problems/a/config.yaml"), Path("/repo"))
        == "problems/a/config.yaml"
    )
    assert (
        finding_path(Path("/elsewhere/a/config.yaml"), Path("/repo")) == "/elsewhere/a/config.yaml"
    )


def test_a_report_counts_each_stage_and_passes_with_warnings_only() -> None:
    warning = Finding(Stage.TIME, Severity.WARNING, "demo/tests/test_checkpoint_1.py", 3, "slow")
    report = CheckReport((warning,), skipped=frozenset({Stage.FLAKY}))
    assert report.passed
    assert [report.counts(stage) for stage in Stage] == [
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 0),
        None,
        (0, 1),
    ]
    assert not CheckReport((warning, FINDING)).passed
    assert CheckReport((FINDING,)).counts(Stage.ORACLE) == (1, 0)
    assert not CheckReport((), infrastructure=("demo / checkpoint_1 oracle: no daemon",)).passed
