"""A checkpoint's code-quality measures: SCBench's verbosity and erosion, as `scb-check` reports
them for the submission's own files, or why they are missing.

Plain data. Measuring (in the sandbox), reading the report through the strict reader, writing
results.json and rendering are other modules' jobs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QualityMeasures:
    """`scb-check check PATH --report`'s figures for one checkpoint's submission."""

    verbosity: float
    """Share of lines flagged by clone detection, ast-grep slop rules and structural rules (0-1)."""
    erosion: float
    """Share of function mass (complexity x sqrt(sloc)) in functions of cyclomatic complexity > 10
    (0-1)."""
    cog_erosion: float
    """As `erosion`, by cognitive complexity (0-1)."""
    total_loc: int
    total_functions: int
    verbosity_flagged_loc: int
    high_cc_functions: int
    files_scanned: int
    tool_version: str
    """The `scb-check` version that measured."""
    seconds: float
    """How long the measure took, in the sandbox."""


@dataclass(frozen=True)
class QualityOutcome:
    """The measures of one checkpoint, or in words why there are none."""

    measures: QualityMeasures | None
    reason: str | None = None
    """Why `measures` is missing (the measure failed, timed out, or found no source file): never
    set when `measures` is."""
