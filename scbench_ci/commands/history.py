"""`history`: what the history a results.json carries says, its trends."""

from __future__ import annotations

from scbench_ci.options import HistoryOptions
from scbench_ci.results.file import load_results
from scbench_ci.results.trends import Trends, trends


def history(options: HistoryOptions) -> Trends | None:
    """None: the results.json carries no history."""
    run = load_results(options.results)
    return None if run.history is None else trends(run.history)
