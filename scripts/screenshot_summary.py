"""A full-page screenshot of a summary as GitHub shows it, and the page's height.

    python scripts/screenshot_summary.py SUMMARY_MD OUT_PNG [TEXT]

The markdown is rendered as the width test renders it (testing/github_page.py: cmarkgfm,
GitHub's markdown CSS, headless Chromium) at GitHub's content width, 1012 px, every <details>
block open. Prints the page's height in px and, given a TEXT, how far below the page's top it
is first seen with the folded blocks closed, as GitHub first shows them (the first screen test:
tests/outputs/test_summary_width.py). Needs Chromium (scripts/provision-browser.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.github_page import measure, screenshot  # noqa: E402 (the checkout on the path first)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not argv[1].endswith(".png"):
        print("usage: screenshot_summary.py SUMMARY_MD OUT_PNG [TEXT]", file=sys.stderr)
        return 2
    summary, output = Path(argv[0]), Path(argv[1])
    if not summary.is_file():
        print(f"SUMMARY_MD: {summary} is not a file", file=sys.stderr)
        return 2
    markdown = summary.read_text()
    height = screenshot(markdown, summary.name, output)
    print(f"{output}: {height} px high")
    if len(argv) == 3:
        seen = measure([(summary.name, markdown)], {summary.name: argv[2]}).seen_px[summary.name]
        where = "not seen with the folded blocks closed" if seen is None else f"at {seen} px"
        print(f"{argv[2]!r}: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
