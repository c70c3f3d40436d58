"""Mermaid diagrams drawn as GitHub draws them: mermaid from npm (the version below, within what
GitHub documents; its `info` diagram says which one a page uses) in headless Chromium. What the
summary's chart test loads."""

from __future__ import annotations

import html
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from testing.github_page import chromium
from testing.npm import npm_package

PACKAGE = "mermaid"
VERSION = "11.4.1"
RESULT_ID = "rendered"
VIRTUAL_TIME_MS = 20_000

PAGE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"></head>
<body>
<pre id="{result}" hidden></pre>
<script src="{script}"></script>
<script>
const out = document.getElementById("{result}");
mermaid.initialize({{ startOnLoad: false }});
mermaid
  .render("chart", {diagram})
  .then(({{ svg }}) => {{ out.textContent = JSON.stringify({{ svg }}); }})
  .catch((error) => {{ out.textContent = JSON.stringify({{ error: String(error) }}); }});
</script>
</body>
</html>
"""


@dataclass(frozen=True)
class Drawn:
    svg: str | None
    error: str | None


def mermaid_script() -> Path:
    folder = npm_package(PACKAGE, VERSION, "the summary's chart test")
    return folder / "node_modules" / PACKAGE / "dist" / "mermaid.min.js"


def draw(diagram: str) -> Drawn:
    """The SVG mermaid draws of the diagram's text, or mermaid's error."""
    text = json.dumps(diagram).replace("</", "<\\/")
    page_html = PAGE.format(result=RESULT_ID, script=mermaid_script().as_uri(), diagram=text)
    with tempfile.TemporaryDirectory(prefix="mermaid-") as scratch:
        page = Path(scratch) / "page.html"
        page.write_text(page_html)
        dom = chromium(
            Path(scratch),
            "--allow-file-access-from-files",
            f"--virtual-time-budget={VIRTUAL_TIME_MS}",
            "--dump-dom",
            page.as_uri(),
        ).stdout
    found = re.search(f'<pre id="{RESULT_ID}" hidden="">(.*?)</pre>', dom, re.DOTALL)
    if found is None or not found.group(1):
        raise RuntimeError(f"mermaid wrote nothing: {dom[-2000:]}")
    result = json.loads(html.unescape(found.group(1)))
    return Drawn(result.get("svg"), result.get("error"))


def mermaid_blocks(markdown: str) -> list[str]:
    """The text of each ```mermaid block of the markdown."""
    return re.findall(r"^```mermaid\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
