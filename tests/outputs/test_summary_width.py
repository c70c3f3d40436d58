"""The golden summaries as GitHub shows them (testing/github_page.py: cmarkgfm, GitHub's markdown
CSS, headless Chromium): no table is wider than GitHub's content width, folded ones included."""

from __future__ import annotations

import pytest

from testing.github_page import CONTENT_WIDTH_PX, TableWidth, measure
from testing.golden import SCENARIOS

pytestmark = pytest.mark.browser

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
