"""A full-page screenshot of a summary as GitHub shows it, and the page's height.

    python scripts/screenshot_summary.py SUMMARY_MD OUT_PNG

The markdown is rendered as the width test renders it (testing/github_page.py: cmarkgfm,
GitHub's markdown CSS, headless Chromium) at GitHub's content width, 1012 px, every <details>
block open. Prints the page's height in px. Needs Chromium (scripts/provision-browser.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.github_page import screenshot  # noqa: E402 (the checkout on the path first)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].endswith(".png"):
        print("usage: screenshot_summary.py SUMMARY_MD OUT_PNG", file=sys.stderr)
        return 2
    summary, output = Path(argv[0]), Path(argv[1])
    if not summary.is_file():
        print(f"SUMMARY_MD: {summary} is not a file", file=sys.stderr)
        return 2
    height = screenshot(summary.read_text(), summary.name, output)
    print(f"{output}: {height} px high")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
