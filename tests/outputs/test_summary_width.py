"""The golden summaries as GitHub shows them (testing/github_page.py: cmarkgfm, GitHub's markdown
CSS, headless Chromium): no table is wider than GitHub's content width, folded ones included;
a failing run's cause is in the first screen; the trajectory's chart is drawn (mermaid, in the
same browser) and its figures are seen."""

from __future__ import annotations

import re

import pytest

from scbench_ci.outputs.check_console import checked
from scbench_ci.results.file import load_results
from testing.github_page import CONTENT_WIDTH_PX, TableWidth, measure
from testing.golden import SCENARIOS, TRAJECTORY, first_cause
from testing.mermaid import draw, mermaid_blocks

GOLDEN_FOLDERS = {scenario.name: scenario.folder for scenario in SCENARIOS}

pytestmark = pytest.mark.browser

FIRST_SCREEN_PX = 1000
"""How far down a person reads before scrolling: the cause of a failure is within it."""
FAILING = {
    "single_pass",
    "single_fail",
    "missing_module",
    "multi_problem",
    "comparison",
    "merge",
    "scale",
}
"""The goldens with failing tests: those that fail, and those that pass with failing tests."""

WIDE_TABLE = (
    "| " + " | ".join(f"column_{index}" for index in range(40)) + " |\n" + "| --- " * 40 + "|\n"
)


def too_wide(tables: list[TableWidth]) -> list[str]:
    return [
        f"{table.page}: the table `{table.header}` is {table.scroll_width} px wide, over "
        f"GitHub's {CONTENT_WIDTH_PX} px"
        for table in tables
        if table.too_wide
    ]


def test_no_table_of_a_golden_summary_is_wider_than_the_page() -> None:
    measures = measure([(scenario.name, scenario.summary.read_text()) for scenario in SCENARIOS])
    pages = {table.page for table in measures.tables}
    assert pages == {scenario.name for scenario in SCENARIOS}  # each has a table, measured
    wide = too_wide(measures.tables)
    if wide:
        pytest.fail("\n".join(wide), pytrace=False)


def test_a_table_wider_than_the_page_is_found_folded_or_not() -> None:
    folded = f"<details><summary>folded</summary>\n\n{WIDE_TABLE}\n</details>\n"
    narrow = "| Problem | 1 |\n| --- | :---: |\n| wordstat | ✅ |\n"
    measures = measure([("folded", folded), ("open", WIDE_TABLE), ("narrow", narrow)])
    assert too_wide(measures.tables)[0].startswith("folded: the table `column_0 | column_1 | ")
    assert [table.too_wide for table in measures.tables] == [True, True, False]
    assert measures.tables[0].client_width == CONTENT_WIDTH_PX


def test_the_cause_is_in_the_first_screen_of_each_failing_golden() -> None:
    """Folded blocks closed, as GitHub first shows a summary: the main cause of the first failing
    checkpoint, else of the first that passes with failing tests (testing/golden.py first_cause),
    is seen within FIRST_SCREEN_PX of the top."""
    causes = {}
    for scenario in SCENARIOS:
        run = load_results(scenario.results)
        cause = None if checked(run) else first_cause(run)  # a check's summary is another page
        if cause is not None:
            causes[scenario.name] = cause
    assert set(causes) == FAILING
    pages = [(name, (GOLDEN_FOLDERS[name] / "summary.md").read_text()) for name in causes]
    seen = measure(pages, causes).seen_px
    late = {name: px for name, px in seen.items() if px is None or px > FIRST_SCREEN_PX}
    assert late == {}, f"the cause is not seen in the first {FIRST_SCREEN_PX} px: {late}"


def test_a_cause_in_a_closed_block_or_far_down_is_not_in_the_first_screen() -> None:
    folded = "<details><summary>folded</summary>\n\nthe cause\n\n</details>\n"
    far = "".join(f"line {index}\n\n" for index in range(60)) + "the cause\n"
    near = "## Failed\n\nthe cause\n"
    pages = [("folded", folded), ("far", far), ("near", near)]
    seen = measure(pages, dict.fromkeys(("folded", "far", "near"), "the cause")).seen_px
    assert seen["folded"] is None
    assert seen["far"] is not None and seen["far"] > FIRST_SCREEN_PX
    assert seen["near"] is not None and 0 < seen["near"] < 100


def test_the_trajectory_golden_fits_the_page_and_its_figures_are_seen() -> None:
    """The trajectory's table (with the baseline's columns) is within GitHub's width, and its
    last checkpoint's figures are shown unfolded."""
    measures = measure([("trajectory", TRAJECTORY.read_text())], {"trajectory": "39.0% (+5.0)"})
    headers = [table.header for table in measures.tables]
    assert any(header.startswith("# | Checkpoint | Verbosity | Erosion") for header in headers)
    assert too_wide(measures.tables) == []
    assert measures.seen_px["trajectory"] is not None


@pytest.mark.slow
@pytest.mark.npm
def test_the_trajectory_golden_s_chart_is_drawn_with_both_lines() -> None:
    (chart,) = mermaid_blocks(TRAJECTORY.read_text())

    drawn = draw(chart)

    assert drawn.error is None and drawn.svg is not None
    strokes = re.findall(r'<g class="line-plot-(\d)"><path [^>]*stroke="(#[0-9a-f]{6})"', drawn.svg)
    assert strokes == [("0", "#0969da"), ("1", "#cf222e")]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", drawn.svg)
    assert labels[:5] == ["Verbosity and erosion per checkpoint (%)", "1", "2", "3", "5"]
