"""What the job summary's template reads (templates/summary.md.j2), in named groups along its
sections, each made by one function: the overview at the top of the page, the checkpoints' code
quality, which checkpoints get a section of their own, the changes since the baseline, the flaky
tests, the footer, and the page itself. The history's group is summary_view.HistoryView; the
sections, made as they are rendered, and the size level are given to each rendering
(summary.py)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from scbench_ci.executors.base import MissingProgram
from scbench_ci.outputs.console import FlakyTest, flaky_counting, flaky_meaning, flaky_tests
from scbench_ci.outputs.exit_status import Headline, run_headline
from scbench_ci.outputs.failing_view import (
    ListedCheckpoints,
    failing_checkpoints,
    passing_with_failures,
)
from scbench_ci.outputs.summary_levels import LEVELS
from scbench_ci.outputs.summary_quality import Trajectory, quality_by_checkpoint, trajectory
from scbench_ci.outputs.summary_sections import FixedTests, fixed_tests
from scbench_ci.outputs.summary_view import (
    CheckpointChanges,
    Matrix,
    Numbers,
    RunWarning,
    checkpoint_changes,
    detailed,
    matrix,
    numbers,
    run_warnings,
)
from scbench_ci.results.comparison_model import Comparison
from scbench_ci.results.model import CheckpointResult, RunResult
from scbench_ci.results.quality_steps import QualityStep
from scbench_ci.trust.markdown import Markdown

FOCUSED_SECTIONS = 3
"""Up to this many checkpoints with a section, each is shown whole, every cause of its failing
tests with its traceback; with more, each is a folded block listing its first
summary_levels.LISTED_COMPACT causes."""
LISTED_FLAKY = max(level.listed for level in LEVELS)
"""The flaky tests kept for the table: as many as the level that lists the most shows."""


@dataclass(frozen=True)
class Overview:
    """The top of the page: the headline and its numbers, for several checkpoints the failing
    ones with why and the passing ones with failing tests, then the matrix of problems x
    checkpoints or the checkpoints' table, and the warnings once each."""

    headline: Headline
    numbers: Numbers
    checkpoints: list[CheckpointResult]
    many_problems: bool
    many_checkpoints: bool
    failing: ListedCheckpoints | None
    """None for a run of one checkpoint: its section says why it failed."""
    passing_failures: ListedCheckpoints | None
    """The checkpoints that pass with failing tests; None for a run of one checkpoint: its
    section names them."""
    matrix: Matrix
    warnings: list[RunWarning]


def overview(run: RunResult, fail_on: str) -> Overview:
    checkpoints = [checkpoint for _, checkpoint in run.checkpoints()]
    return Overview(
        headline=run_headline(run, fail_on),
        numbers=numbers(run),
        checkpoints=checkpoints,
        many_problems=len(run.problems) > 1,
        many_checkpoints=len(checkpoints) > 1,
        failing=failing_checkpoints(run) if len(checkpoints) > 1 else None,
        passing_failures=passing_with_failures(run) if len(checkpoints) > 1 else None,
        matrix=matrix(run),
        warnings=run_warnings(run),
    )


@dataclass(frozen=True)
class CodeQuality:
    """The checkpoints' code quality: each one's in its section, and their trajectory beside
    the checkpoints' table (templates/quality.md.j2)."""

    by_checkpoint: dict[tuple[str, str], QualityStep]
    trajectory: Trajectory | None


def code_quality(run: RunResult) -> CodeQuality:
    return CodeQuality(quality_by_checkpoint(run), trajectory(run))


@dataclass(frozen=True)
class Details:
    """Which checkpoints get a section of their own (`--details`), and how they are shown."""

    choice: str
    """The `--details` choice (results.details.DETAILS)."""
    shown: set[tuple[str, str]]
    """The (problem, checkpoint) pairs with a section."""
    hidden: int
    """How many checkpoints have none."""
    compact: bool
    """More than FOCUSED_SECTIONS sections: each is a folded block."""


def chosen_details(run: RunResult, choice: str) -> Details:
    shown = detailed(run, choice)
    hidden = sum(1 for _ in run.checkpoints()) - len(shown)
    return Details(choice, shown, hidden, len(shown) > FOCUSED_SECTIONS)


@dataclass(frozen=True)
class Changes:
    """What changed since the baseline (templates/changes.md.j2)."""

    comparison: Comparison | None
    """None without a baseline."""
    checkpoints: list[CheckpointChanges]
    """Those that changed, one row each."""
    fixed: list[FixedTests]
    """The tests fixed, checkpoint by checkpoint."""


def changes(run: RunResult) -> Changes:
    return Changes(run.comparison, checkpoint_changes(run), fixed_tests(run))


@dataclass(frozen=True)
class Flaky:
    """The run's flaky tests, for their table (templates/changes.md.j2)."""

    count: int
    meaning: str
    """What made a test of the run flaky."""
    counting: str
    """How the run counts them."""
    first: list[FlakyTest]
    """The first LISTED_FLAKY, in the run's order; a level lists `level.listed` of them."""


def flaky(run: RunResult) -> Flaky:
    return Flaky(
        count=sum(checkpoint.counts.flaky for _, checkpoint in run.checkpoints()),
        meaning=flaky_meaning(run),
        counting=flaky_counting(run),
        first=list(islice(flaky_tests(run), LISTED_FLAKY)),
    )


@dataclass(frozen=True)
class Footer:
    """The page's last lines: what the images the tests ran in lack of their SCBench runner's
    image, each program once."""

    missing: list[MissingProgram]


def footer(run: RunResult) -> Footer:
    missing: dict[str, MissingProgram] = {}
    for _, checkpoint in run.checkpoints():
        for program in checkpoint.image.missing if checkpoint.image else ():
            missing.setdefault(program.program, program)
    return Footer(list(missing.values()))


@dataclass(frozen=True)
class Page:
    """What the page says of itself: where everything is, and the size it was kept under."""

    artifact: Markdown
    """The reports, logs and results.json: the artifact, or the output folder."""
    max_bytes: int
