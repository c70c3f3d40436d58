"""The markdown reader the docs' tests use: GitHub's anchors, links outside code, list entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.markdown import anchors, entries, entry_names, links, section, slug


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("What is released, and what is not yet", "what-is-released-and-what-is-not-yet"),
        ("The package's map", "the-packages-map"),
        ("results.json", "resultsjson"),
        ("`scbench-ci` evaluate", "scbench-ci-evaluate"),
        ("What the tests see, against SCBench", "what-the-tests-see-against-scbench"),
        ("Check Runs and [forks](x.md)", "check-runs-and-forks"),
        ("✅ Done", "-done"),
        ("snake_case inputs", "snake_case-inputs"),
    ],
)
def test_slug_is_githubs_anchor(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_repeated_headings_are_numbered_and_fenced_ones_are_not_headings() -> None:
    text = "# Usage\n\n## Usage\n\n```sh\n# a comment\n```\n\n### Usage\n"
    assert anchors(text) == {"usage", "usage-1", "usage-2"}


def test_links_span_lines_and_code_holds_none(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "one [two\nthree](a.md#b)\n\n```md\n[no](c.md)\n```\n`[no](d.md)` [yes](e.md)\n"
    )
    assert [(link.line, link.target) for link in links(page)] == [(1, "a.md#b"), (7, "e.md")]


def test_entries_and_their_names() -> None:
    text = (
        "## Flags\n\n- `-j`, `--jobs N` (default 1): side\n  by side.\n- `--a` / `--b`: x\n"
        "\n# Next\n- `--c`"
    )
    items = entries(section(text, "## Flags"))
    assert items == ["- `-j`, `--jobs N` (default 1): side by side.", "- `--a` / `--b`: x"]
    assert [entry_names(item) for item in items] == [["-j", "--jobs"], ["--a", "--b"]]
    assert entry_names("- a `--flag` in prose") == []
