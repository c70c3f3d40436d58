"""The one escaper of GitHub markdown: text is escaped unless it is Markdown, which only the
escaper's module makes; a template cannot print a plain string raw."""

from __future__ import annotations

import ast

import jinja2
import pytest

from scbench_ci.outputs.markdown_templates import load_template
from scbench_ci.trust.markdown import (
    Markdown,
    code_span,
    cut,
    ended,
    fenced,
    formatted,
    html_text,
    joined,
    link,
    literal,
    markdown,
    render,
    template_value,
    text,
)
from testing.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "scbench_ci"


def test_text_is_escaped_and_markdown_is_kept() -> None:
    assert text("[x](https://e.example) @me") == "\\[x\\](https\\://e.example) @\u200bme"
    assert text("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert text("a\n\n# b") == "a \\# b"
    assert text("- item") == "\\- item" and text("1. item") == "1\\. item"
    assert text("12.5% of 3") == "12.5% of 3"  # a number is no list
    assert text("===") == "\\===" and text("a | b") == "a \\| b"
    assert text("\x1b[31mred\u202e") == "\\\\x1b\\[31mred\\\\u202e"
    kept = literal("**ours**")
    assert markdown(kept) is kept and text(kept) is kept
    assert markdown(3) == "3" and markdown(2.5) == "2.5"


def test_a_str_method_on_markdown_gives_text_again() -> None:
    ours = literal("**a**")
    assert type(ours + "b") is str and type(ours.replace("a", "b")) is str
    assert markdown(ours + "<b>") == "\\*\\*a\\*\\*&lt;b&gt;"


def test_each_context_has_its_escape() -> None:
    assert html_text("</summary><b>@x</b>") == "&lt;/summary&gt;&lt;b&gt;@\u200bx&lt;/b&gt;"
    assert code_span("a `b` c") == "``a `b` c``"
    assert fenced("```\nx") == "````text\n```\nx\n````"
    assert formatted("**{}**: {}", "a_b", literal("`c`")) == "**a\\_b**: `c`"
    assert joined(", ", ["*", literal("*")]) == "\\*, *"
    assert link("[x]", "https://e.example/a b") == "[\\[x\\]](https://e.example/a%20b)"
    with pytest.raises(ValueError, match="not an http"):
        link("x", "javascript:alert(1)")


def test_cut_and_ended_keep_whole_lines_and_close_a_fence() -> None:
    long = fenced("line\n" * 1000)
    shortened = cut(long, 2048)
    assert isinstance(shortened, Markdown) and len(shortened.encode()) <= 2048
    fences = [line for line in shortened.split("\n") if line.startswith("```")]
    assert len(fences) == 2 and "The summary is cut here" in shortened
    tag = literal("<!-- t -->")
    body = ended(long, tag, 1000, literal("cut"))
    assert len(body) <= 1000 and body.endswith("\n\ncut\n\n<!-- t -->")


def test_every_template_value_is_escaped() -> None:
    template = jinja2.Environment(finalize=template_value).from_string("{{ a }} {{ b }} {{ n }}")
    shown = render(template, {"a": "<i>x</i>", "b": literal("<i>y</i>"), "n": 2})
    assert shown == "&lt;i&gt;x&lt;/i&gt; <i>y</i> 2" and isinstance(shown, Markdown)


def test_a_template_that_does_not_escape_does_not_render() -> None:
    with pytest.raises(TypeError, match="does not escape"):
        render(jinja2.Environment().from_string("{{ a }}"), {"a": "<i>"})


@pytest.mark.parametrize("name", ["summary.md.j2", "check.md.j2"])
def test_the_templates_have_no_raw_filter_and_no_macro(name: str) -> None:
    """A macro returns a plain string (escaped again), `safe` would print one raw."""
    source = (PACKAGE / "outputs/templates" / name).read_text()
    assert load_template(name).environment.finalize is template_value
    for word in ("{% macro", "|safe", "|md", "Markup"):
        assert word not in source


def test_only_the_escaper_makes_markdown() -> None:
    """`Markdown(...)` is called in trust/markdown.py only: everything else builds it through
    the escaper's functions, whose markdown of our own (`literal`'s words, `formatted`'s and
    `joined`'s template) is written in the source, never a value."""
    callers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "trust/markdown.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None)
            ours = name in ("literal", "formatted", "joined") and _written(node.args[0])
            if name == "Markdown" or (name in ("literal", "formatted", "joined") and not ours):
                callers.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert callers == []


def _written(node: ast.expr) -> bool:
    """A string in the source: a literal, or literals joined."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.BinOp) and _written(node.left) and _written(node.right)
