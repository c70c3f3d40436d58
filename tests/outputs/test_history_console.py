"""`scbench-ci history`'s text: each run's code quality, when some run of the history was
measured, between the pass rates and the flaky tests; nothing of it otherwise."""

from __future__ import annotations

from scbench_ci.job.reports import Status
from scbench_ci.outputs.history_console import render_trends
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.model import RunResult
from scbench_ci.results.trends import trends
from testing.results import make_checkpoint, make_run, make_test, measured, not_measured

PASSED = make_test("a", Status.PASSED)


def nights(figures: list[tuple[float, float] | None]) -> RunResult:
    run = None
    for day, measures in enumerate(figures, start=1):
        made = make_checkpoint(PASSED)
        checkpoint = (
            not_measured(made, "timed out") if measures is None else measured(made, *measures)
        )
        tonight = make_run(checkpoint, started_at=f"2026-05-0{day}T01:30:00+00:00")
        run = with_history(tonight, 10, "abcdef0123" if day == 3 else None, carried(run))
    assert run is not None and run.history is not None
    return run


def test_each_run_s_quality_is_printed_with_how_many_checkpoints_were_measured() -> None:
    run = nights([(0.066, 0.22), None, (0.115, 0.39)])
    text = render_trends(trends(run.history), "results.json")  # type: ignore[arg-type]
    assert (
        "\n\nCode quality per run, oldest first (the mean over its measured checkpoints):\n"
        "  run  started           commit   verbosity    erosion  measured\n"
        "    1  2026-05-01 01:30  -             6.6%      22.0%         1\n"
        "    2  2026-05-02 01:30  -                -          -         0\n"
        "    3  2026-05-03 01:30  abcdef0      11.5%      39.0%         1\n"
        "\nFlaky"
    ) in text


def test_nothing_of_quality_without_a_measured_run() -> None:
    run = nights([None, None])
    text = render_trends(trends(run.history), "results.json")  # type: ignore[arg-type]
    assert "quality" not in text.lower()
