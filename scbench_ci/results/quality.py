"""A checkpoint's code-quality measures: SCBench's verbosity and erosion, as `scb-check` reports
them for the submission's own files (as SCBench 1.0 calls it, with `--include-all`), with the
source files it left out, or why they are missing.

Plain data. Measuring (in the sandbox), reading the report through the strict reader, writing
results.json and rendering are other modules' jobs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QualityMeasures:
    """`scb-check check PATH --report --include-all`'s figures for one checkpoint's submission,
    and those SCBench 1.0's metrics derive from them (its metrics/checkpoint/driver.py)."""

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
    clone_loc: int | None = None
    """Lines flagged by clone detection (SCBench 1.0's `cloned_sloc_lines`); None in a results
    file written before it was recorded."""

    @property
    def cloned_pct(self) -> float | None:
        """SCBench 1.0's `cloned_pct`: `clone_loc / total_loc` (None without lines, as there)."""
        if self.clone_loc is None or self.total_loc <= 0:
            return None
        return self.clone_loc / self.total_loc

    @property
    def verbosity_flagged_pct(self) -> float | None:
        """SCBench 1.0's `verbosity_flagged_pct`: `verbosity_flagged_loc / total_loc`, scb-check's
        `verbosity` by another name (None without lines, as there)."""
        return self.verbosity_flagged_loc / self.total_loc if self.total_loc > 0 else None


MAX_UNMEASURED_LISTED = 50
"""How many of the source files the measure left out a result names (all are counted)."""


@dataclass(frozen=True)
class Unmeasured:
    """The submission's source files, as staged, that the measure did not measure: in folders
    scb-check skips by name (`build`, `dist`, `env`, `node_modules`, ...), or that its parsers
    cannot read. What the evaluator lists, not what the submission says."""

    count: int = 0
    files: tuple[str, ...] = ()
    """The first MAX_UNMEASURED_LISTED of them in path order, each path as one line of printable
    text (a byte that is not UTF-8 shown as `\\xff`, a line break as `\\n`)."""

    def named(self, most: int) -> str:
        """`build/a.py, build/b.py and 3 more`: the first `most` files and how many others."""
        shown = self.files[:most]
        more = f" and {self.count - len(shown)} more" if self.count > len(shown) else ""
        return ", ".join(shown) + more


@dataclass(frozen=True)
class QualityOutcome:
    """The measures of one checkpoint, or in words why there are none."""

    measures: QualityMeasures | None
    reason: str | None = None
    """Why `measures` is missing (the measure failed, timed out, or found no source file): never
    set when `measures` is."""
    unmeasured: Unmeasured | None = Unmeasured()
    """What `measures` leave out (none when `measures` is missing: the reason says why nothing
    was measured); None when not known (a results file written before it was recorded)."""
