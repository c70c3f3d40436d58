"""scb-check's report, as the quality measure took it from the sandbox, read strictly into a
checkpoint's quality: bounded bytes, every figure a finite number in its range, the shares in
0..1; anything else is a reason, never an error.
"""

from __future__ import annotations

import math
from typing import Any

from scbench_ci.executors.base import MAX_QUALITY_REPORT_BYTES, QualityRun
from scbench_ci.results.quality import QualityMeasures, QualityOutcome
from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse

_LIMITS = JsonLimits(
    max_bytes=MAX_QUALITY_REPORT_BYTES,
    max_containers=256,
    max_depth=4,
    max_string_chars=256,
    max_items=256,
)
SHARES = ("verbosity", "erosion", "cog_erosion")
"""The report's figures that are shares (0 to 1)."""
COUNTS = ("total_loc", "total_functions", "verbosity_flagged_loc", "high_cc_functions")
MAX_COUNT = 10**12
MAX_SECONDS = 1e6


def read_quality(run: QualityRun | None) -> QualityOutcome | None:
    """The checkpoint's quality; None when it was not measured (not asked for)."""
    if run is None:
        return None
    if run.report is None:
        return QualityOutcome(None, reason=run.reason or "scb-check left no report")
    try:
        report = parse(run.report, _LIMITS)
    except JsonError as error:
        return QualityOutcome(None, reason=f"scb-check's report is not JSON as expected: {error}")
    figures = _figures(report)
    if isinstance(figures, str):
        return QualityOutcome(None, reason=f"scb-check's report {figures}")
    if figures["files_scanned"] == 0 or figures["total_loc"] == 0:
        return QualityOutcome(None, reason="scb-check found no source file to measure")
    return QualityOutcome(
        QualityMeasures(
            verbosity=float(figures["verbosity"]),
            erosion=float(figures["erosion"]),
            cog_erosion=float(figures["cog_erosion"]),
            total_loc=int(figures["total_loc"]),
            total_functions=int(figures["total_functions"]),
            verbosity_flagged_loc=int(figures["verbosity_flagged_loc"]),
            high_cc_functions=int(figures["high_cc_functions"]),
            files_scanned=int(figures["files_scanned"]),
            tool_version=run.tool_version,
            seconds=min(max(run.seconds, 0.0), MAX_SECONDS),
        )
    )


def _figures(report: Any) -> dict[str, float | int] | str:
    """The figures the measures take, each checked; else what is wrong, in words."""
    if not isinstance(report, dict):
        return "is not a JSON object"
    figures: dict[str, float | int] = {}
    for name in SHARES:
        value = report.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"has no number {name}"
        if not (math.isfinite(value) and 0 <= value <= 1):
            return f"gives {name} outside 0..1"
        figures[name] = value
    for name in (*COUNTS, "files_scanned"):
        value = report.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"has no whole number {name}"
        if not 0 <= value <= MAX_COUNT:
            return f"gives {name} outside 0..{MAX_COUNT}"
        figures[name] = value
    if figures["verbosity_flagged_loc"] > figures["total_loc"]:
        return "flags more lines than it counts"
    if figures["high_cc_functions"] > figures["total_functions"]:
        return "flags more functions than it counts"
    return figures
