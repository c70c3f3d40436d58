"""`history`: what the history a results.json carries says, its trends, beside the run that
carries it (whose failing tests say why they fail)."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.options import HistoryOptions
from scbench_ci.results.baseline import results_file
from scbench_ci.results.file import load_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.trends import Trends, trends

RESULTS_ARGUMENT = "RESULTS_JSON"


@dataclass(frozen=True)
class Recorded:
    run: RunResult
    """The run whose results.json carries the history: the history's last run."""
    trends: Trends | None
    """None: the results.json carries no history."""
    source: str
    """The results.json read."""


def run_history(options: HistoryOptions) -> Recorded:
    """The results.json `options.results` names, or the one a folder holds (as `--baseline`
    reads it)."""
    file = results_file(options.results, RESULTS_ARGUMENT)
    run = load_results(file)
    return Recorded(run, None if run.history is None else trends(run.history), str(file))
