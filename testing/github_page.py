"""Markdown as GitHub shows it, in headless Chromium: rendered by cmarkgfm (GitHub's own
renderer, with its extensions), styled by GitHub's markdown CSS (the npm package
`github-markdown-css`), in an `article.markdown-body` of GitHub's content width. What the
summary's width test and scripts/screenshot_summary.py load.

Raw HTML is kept (cmarkgfm's unsafe option): GitHub's sanitizer keeps the few tags the summary
writes (<details>, <summary>, <code>, <strong>; tests/outputs/test_summary.py checks it writes
no other), whereas cmark's safe mode would drop them all, and with them the folded blocks and
the monospace of test ids in table cells. GFM's tag filter still disarms <script> and the like,
and the page's content security policy runs only the page's own script and loads nothing.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from testing.npm import npm_package
from testing.paths import REPO_ROOT

CONTENT_WIDTH_PX = 1012
"""The width of a job summary's and a pull request comment's markdown on github.com."""
CSS_PACKAGE = "github-markdown-css"
CSS_VERSION = "5.9.0"
CSS_FILE = "github-markdown-light.css"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PROVISION = "scripts/provision-browser.sh"
BROWSER_TIMEOUT_S = 120
NONCE = "measure"
MEASURES_ID = "measures"

# First, as GitHub shows the page (folded blocks closed): where each article's `data-find`
# text is first seen, from the article's top (null: not seen). Then opens every folded block and
# measures each table of each article and the page.
MEASURE_SCRIPT = """
const seen = {};
for (const article of document.querySelectorAll("article.markdown-body[data-find]")) {
  const needle = article.dataset.find;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  seen[article.dataset.name] = null;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const at = node.textContent.indexOf(needle);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + needle.length);
    const box = range.getBoundingClientRect();
    // Inside a closed <details> a text is laid out but not shown.
    if (box.height === 0 || !node.parentElement.checkVisibility()) continue;
    seen[article.dataset.name] = Math.round(box.top - article.getBoundingClientRect().top);
    break;
  }
}
for (const details of document.querySelectorAll("details")) details.open = true;
const tables = [];
for (const article of document.querySelectorAll("article.markdown-body")) {
  for (const table of article.querySelectorAll("table")) {
    const header = table.querySelector("tr");
    tables.push({
      page: article.dataset.name,
      header: header ? header.innerText.split("\\t").map((cell) => cell.trim()).join(" | ") : "",
      scrollWidth: table.scrollWidth,
      clientWidth: table.clientWidth,
    });
  }
}
const measures = {
  height: Math.ceil(document.documentElement.getBoundingClientRect().height),
  tables,
  seen,
};
document.getElementById("measures").textContent = JSON.stringify(measures);
"""


@dataclass(frozen=True)
class TableWidth:
    page: str
    """The name of the markdown it is in."""
    header: str
    """Its first row's cells, ` | ` between them."""
    scroll_width: int
    """Its whole width, what scrolls included."""
    client_width: int
    """What the page shows of it: at most CONTENT_WIDTH_PX."""

    @property
    def too_wide(self) -> bool:
        return self.scroll_width > min(self.client_width, CONTENT_WIDTH_PX)


@dataclass(frozen=True)
class Measures:
    height_px: int
    """The page's height with every <details> open."""
    tables: list[TableWidth]
    seen_px: dict[str, int | None]
    """Per page given a text to find: how far below its top the text is first seen, folded
    blocks closed as GitHub shows them; None when it is not seen."""


def markdown_html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def github_page(pages: Sequence[tuple[str, str]], find: Mapping[str, str] | None = None) -> str:
    """An HTML page of each (name, markdown) as GitHub shows it, one article each, one below the
    other, and the script that measures them (`find`: a text to look for, per page name)."""
    css = (github_css() / CSS_FILE).read_text()
    find = find or {}
    articles = "\n".join(
        f'<article class="markdown-body" data-name="{html.escape(name)}"'
        + (f' data-find="{html.escape(find[name])}"' if name in find else "")
        + f">\n{markdown_html(markdown)}\n</article>"
        for name, markdown in pages
    )
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{NONCE}'"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<style>
{css}
</style>
<style>
body {{ margin: 0; background: #ffffff; }}
article.markdown-body {{ box-sizing: border-box; width: {CONTENT_WIDTH_PX}px; padding: 0; }}
</style>
</head>
<body>
{articles}
<pre id="{MEASURES_ID}" hidden></pre>
<script nonce="{NONCE}">{MEASURE_SCRIPT}</script>
</body>
</html>
"""


def github_css() -> Path:
    """The folder of GitHub's markdown CSS files, installed when missing."""
    folder = npm_package(CSS_PACKAGE, CSS_VERSION, "the summary's width test")
    return folder / "node_modules" / CSS_PACKAGE


def measure(pages: Sequence[tuple[str, str]], find: Mapping[str, str] | None = None) -> Measures:
    """Each table's width, the page's height, and where each text of `find` (per page name) is
    first seen, in one Chromium process for all the pages."""
    with tempfile.TemporaryDirectory(prefix="github-page-") as scratch:
        page = Path(scratch) / "page.html"
        page.write_text(github_page(pages, find))
        dom = chromium(Path(scratch), "--dump-dom", page.as_uri()).stdout
    found = re.search(f'<pre id="{MEASURES_ID}" hidden="">(.*?)</pre>', dom, re.DOTALL)
    if found is None:
        raise RuntimeError(f"the page's script wrote no measures: {dom[-2000:]}")
    measures = json.loads(html.unescape(found.group(1)))
    return Measures(
        measures["height"],
        [
            TableWidth(table["page"], table["header"], table["scrollWidth"], table["clientWidth"])
            for table in measures["tables"]
        ],
        measures["seen"],
    )


def screenshot(markdown: str, name: str, output: Path) -> int:
    """A PNG of the whole page of the markdown, every <details> open; its height in px."""
    height = measure([(name, markdown)]).height_px
    with tempfile.TemporaryDirectory(prefix="github-page-") as scratch:
        page = Path(scratch) / "page.html"
        page.write_text(github_page([(name, markdown)]))
        chromium(
            Path(scratch),
            f"--screenshot={output.resolve()}",
            f"--window-size={CONTENT_WIDTH_PX},{height}",
            page.as_uri(),
        )
    return height


def browser() -> str:
    """Chromium's (or Chrome's) command; missing, it fails the test, never skips it."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.fail(f"no Chromium on PATH ({', '.join(BROWSERS)}): run {PROVISION}", pytrace=False)


def chromium(profile: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium run with `arguments`, its profile in the folder `profile`."""
    argv = [
        browser(),
        "--headless",
        "--no-sandbox",  # as root, Chromium's sandbox refuses to start
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--force-device-scale-factor=1",
        f"--user-data-dir={profile / 'profile'}",
        *arguments,
    ]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=BROWSER_TIMEOUT_S,
        check=False,
        cwd=REPO_ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    return done
