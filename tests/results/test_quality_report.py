"""What the measure printed (scb-check's report and the files it measured) read strictly into a
checkpoint's quality: every way it can be wrong is a reason, never an error; the staged source
files it did not measure are named."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from scbench_ci.executors.base import MAX_QUALITY_OUTPUT_BYTES, QualityRun
from scbench_ci.results.quality import QualityMeasures, QualityOutcome, Unmeasured
from scbench_ci.results.quality_report import read_quality

# scb-check 0.2.0's report on circuit_eval's checkpoint_1 reference solution.
REPORT: dict[str, Any] = {
    "verbosity": 0.07267833109017496,
    "erosion": 0.43223100097762573,
    "cog_erosion": 0.7342161203016297,
    "files_scanned": 6,
    "total_loc": 743,
    "verbosity_flagged_loc": 54,
    "clone_loc": 53,
    "ast_grep_flagged_loc": 1,
    "structural_rule_loc": 0,
    "structural_rule_findings": 0,
    "total_functions": 46,
    "high_cc_functions": 4,
    "high_cog_functions": 8,
    "total_mass": 807.7003211559224,
    "high_cc_mass": 349.11311830317413,
    "total_cog_mass": 1165.7427383589825,
    "high_cog_mass": 855.9071106277299,
    "syntax_tree_count": 6,
    "syntax_node_count": 7592,
    "syntax_by_language": {"python": {"tree_count": 6, "node_count": 7592}},
}


SIX = tuple(f"pkg/module_{number}.py" for number in range(6))


def printed(report: object, measured: object) -> bytes:
    """What the measure's launcher prints."""
    return json.dumps({"report": report, "measured": measured}).encode()


def hexed(*paths: str) -> list[str]:
    return [os.fsencode(path).hex() for path in paths]


def _read(report: object, staged: tuple[str, ...] = SIX) -> QualityOutcome | None:
    return read_quality(QualityRun(printed(report, hexed(*SIX)), None, 2.5, staged=staged))


def test_a_report_gives_the_measures() -> None:
    assert _read(REPORT) == QualityOutcome(
        QualityMeasures(
            verbosity=REPORT["verbosity"],
            erosion=REPORT["erosion"],
            cog_erosion=REPORT["cog_erosion"],
            total_loc=743,
            total_functions=46,
            verbosity_flagged_loc=54,
            high_cc_functions=4,
            files_scanned=6,
            tool_version="0.2.0",
            seconds=2.5,
            clone_loc=53,
        ),
        unmeasured=Unmeasured(),
    )


def test_the_figures_scbench_1_0_derives_are_derived_as_it_does() -> None:
    outcome = _read(REPORT)
    assert outcome is not None and outcome.measures is not None

    # metrics/checkpoint/driver.py, _scb_check_metrics_from_report at 0a2e7bec
    assert outcome.measures.cloned_pct == 53 / 743
    assert outcome.measures.verbosity_flagged_pct == 54 / 743 == REPORT["verbosity"]


def test_the_staged_source_files_it_did_not_measure_are_named() -> None:
    staged = (*SIX, "build/generated.py", "gen/bad\udcff.py", "dist/a.js", "x/\n::error::\x1b.py")
    outcome = _read(REPORT, staged)

    assert outcome is not None and outcome.measures is not None
    # One line of printable text each, whatever bytes name it.
    assert outcome.unmeasured == Unmeasured(
        4, ("build/generated.py", "dist/a.js", "gen/bad\\xff.py", "x/\\n::error::\\x1b.py")
    )


def test_the_names_are_cut_and_the_count_is_not() -> None:
    many = tuple(f"build/{number:03}.py" for number in range(120))
    outcome = _read(REPORT, (*SIX, *many))

    assert outcome is not None and outcome.unmeasured is not None
    assert outcome.unmeasured.count == 120
    assert outcome.unmeasured.files == many[:50]


@pytest.mark.parametrize(
    ("measured", "reason"),
    [
        (hexed(*SIX[:5]), "names 5 files where the report counts 6"),
        (hexed(*SIX[:5], SIX[0]), "names a file twice"),
        ([*hexed(*SIX[:5]), "pkg/module_5.py"], "names a file other than by the hex of its path"),
        ([*hexed(*SIX[:5]), "ABC"], "names a file other than by the hex of its path"),
        ([*hexed(*SIX[:5]), 7], "names a file other than by the hex of its path"),
        ({"pkg": 6}, "is not a list"),
    ],
)
def test_a_list_of_files_that_cannot_be_is_a_reason(measured: object, reason: str) -> None:
    outcome = read_quality(QualityRun(printed(REPORT, measured), None, 1.0, staged=SIX))

    assert outcome is not None and outcome.measures is None
    assert outcome.reason == f"scb-check's list of the files it measured {reason}"


@pytest.mark.parametrize(
    "data",
    [
        json.dumps(REPORT).encode(),  # scb-check's own output: not through the launcher
        json.dumps({"report": REPORT}).encode(),
        json.dumps({"report": REPORT, "measured": [], "more": 1}).encode(),
    ],
)
def test_output_that_is_not_the_launcher_s_is_a_reason(data: bytes) -> None:
    outcome = read_quality(QualityRun(data, None, 1.0))

    assert outcome == QualityOutcome(
        None, reason="the measure's output is not its report and its files"
    )


def test_not_measured_is_none_and_a_failed_measure_keeps_its_reason() -> None:
    assert read_quality(None) is None
    failed = read_quality(QualityRun(None, "scb-check failed with exit code 2", 0.3))
    assert failed == QualityOutcome(None, reason="scb-check failed with exit code 2")


@pytest.mark.parametrize(
    ("report", "reason"),
    [
        ({**REPORT, "erosion": 1.5}, "gives erosion outside 0..1"),
        ({**REPORT, "verbosity": -0.1}, "gives verbosity outside 0..1"),
        ({**REPORT, "verbosity": "0.1"}, "has no number verbosity"),
        ({**REPORT, "cog_erosion": True}, "has no number cog_erosion"),
        ({**REPORT, "total_loc": 7.0}, "has no whole number total_loc"),
        ({**REPORT, "total_loc": 10**13}, "gives total_loc outside"),
        ({**REPORT, "verbosity_flagged_loc": 800}, "flags more lines than it counts"),
        ({**REPORT, "clone_loc": 744}, "flags more lines than it counts"),
        ({**REPORT, "clone_loc": None}, "has no whole number clone_loc"),
        ({**REPORT, "high_cc_functions": 47}, "flags more functions than it counts"),
        ([REPORT], "is not a JSON object"),
        ({**REPORT, "files_scanned": 0}, "found no source file to measure"),
        ({key: v for key, v in REPORT.items() if key != "erosion"}, "has no number erosion"),
    ],
)
def test_a_report_that_cannot_be_is_a_reason(report: object, reason: str) -> None:
    outcome = _read(report)
    assert outcome is not None and outcome.measures is None
    assert reason in str(outcome.reason)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"NaN", "not JSON"),
        (b'{"erosion": Infinity}', "not JSON"),
        (b'{"a": 1, "a": 2}', "given twice"),
        (b"[" * 100 + b"]" * 100, "nested more than"),
        (b" " * (MAX_QUALITY_OUTPUT_BYTES + 1), "larger than"),
        (b"\xff", "not UTF-8"),
    ],
)
def test_bytes_that_are_not_a_report_are_a_reason(data: bytes, reason: str) -> None:
    outcome = read_quality(QualityRun(data, None, 1.0))
    assert outcome is not None and outcome.measures is None
    assert reason in str(outcome.reason)
    assert str(outcome.reason).startswith("scb-check's report is not JSON as expected")
