"""What the quality measure printed in the sandbox (`{"report": <scb-check's report>, "measured":
[<files>]}`, executors/quality_command.py), read strictly into a checkpoint's quality: bounded
bytes, every figure a finite number in its range, the shares in 0..1, as many files named as the
report counts; anything else is a reason, never an error. The staged source files it did not name
are what the measure left out.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from scbench_ci.executors.base import MAX_QUALITY_OUTPUT_BYTES, QualityRun
from scbench_ci.executors.quality_command import measured_name
from scbench_ci.results.quality import (
    MAX_UNMEASURED_LISTED,
    QualityMeasures,
    QualityOutcome,
    Unmeasured,
)
from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse
from scbench_ci.trust.untrusted_tree import MAX_ENTRIES

_LIMITS = JsonLimits(
    max_bytes=MAX_QUALITY_OUTPUT_BYTES,
    max_containers=256,
    max_depth=5,
    max_string_chars=8192,
    max_items=MAX_ENTRIES,
)
"""A path is at most 4,096 bytes (8,192 hex digits); no submission stages more than MAX_ENTRIES
files."""
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
SHARES = ("verbosity", "erosion", "cog_erosion")
"""The report's figures that are shares (0 to 1)."""
COUNTS = (
    "total_loc",
    "total_functions",
    "verbosity_flagged_loc",
    "clone_loc",
    "high_cc_functions",
)
MAX_COUNT = 10**12
MAX_SECONDS = 1e6


def read_quality(run: QualityRun | None) -> QualityOutcome | None:
    """The checkpoint's quality; None when it was not measured (not asked for)."""
    if run is None:
        return None
    if run.report is None:
        return QualityOutcome(None, reason=run.reason or "scb-check left no report")
    try:
        printed = parse(run.report, _LIMITS)
    except JsonError as error:
        return QualityOutcome(None, reason=f"scb-check's report is not JSON as expected: {error}")
    if not isinstance(printed, dict) or set(printed) != {"report", "measured"}:
        return QualityOutcome(None, reason="the measure's output is not its report and its files")
    figures = _figures(printed["report"])
    if isinstance(figures, str):
        return QualityOutcome(None, reason=f"scb-check's report {figures}")
    if figures["files_scanned"] == 0 or figures["total_loc"] == 0:
        return QualityOutcome(None, reason="scb-check found no source file to measure")
    measured = _measured(printed["measured"], int(figures["files_scanned"]))
    if isinstance(measured, str):
        return QualityOutcome(None, reason=f"scb-check's list of the files it measured {measured}")
    left_out = sorted(name for name in run.staged if measured_name(name) not in measured)
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
            clone_loc=int(figures["clone_loc"]),
        ),
        unmeasured=Unmeasured(
            len(left_out), tuple(map(shown_path, left_out[:MAX_UNMEASURED_LISTED]))
        ),
    )


def shown_path(path: str) -> str:
    """A file's path as one line of printable text: a byte that is not UTF-8 as `\\xff`, a
    character that is not printable (a line break, an escape) as its escape (`\\n`)."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode() for char in text
    )


def _measured(names: Any, count: int) -> set[bytes] | str:
    """The files the report's figures are of, by their bytes; else what is wrong, in words."""
    if not isinstance(names, list):
        return "is not a list"
    if len(names) != count:
        return f"names {len(names)} files where the report counts {count}"
    if not all(isinstance(name, str) and _HEX.fullmatch(name) for name in names):
        return "names a file other than by the hex of its path"
    measured = {bytes.fromhex(name) for name in names}
    if len(measured) != count:
        return "names a file twice"
    return measured


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
    if max(figures["verbosity_flagged_loc"], figures["clone_loc"]) > figures["total_loc"]:
        return "flags more lines than it counts"
    if figures["high_cc_functions"] > figures["total_functions"]:
        return "flags more functions than it counts"
    return figures
