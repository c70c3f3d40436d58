"""Text made inert for a terminal and for GitHub's runner reading it."""

import pytest

from scbench_ci.trust.terminal import inert, quoted, shown_name


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("::error::x", "\\::error::x"),
        ("a\n    ::set-output name=x::1", "a\n    \\::set-output name=x::1"),
        ("E   ::error::mid-line", "E   ::error::mid-line"),  # read only at a line's start
        ("ok\r::error::x", "ok\\r::error::x"),  # the runner ends a line at \r
        ("\t::warning::x", "\\t::warning::x"),
        ("\u00a0::error::x", "\\xa0::error::x"),  # white space the runner strips
        ("\u2028::error::x", "\\u2028::error::x"),
        ("text ##[error]x", "text ##\\[error]x"),  # the old form, read anywhere
        ("\x1b[31mred\x1b]8;;https://x\x07", "\\x1b[31mred\\x1b]8;;https://x\\x07"),
        ("plain: é ✓ | `a` ## b [c]", "plain: é ✓ | `a` ## b [c]"),
    ],
)
def test_inert_text(text: str, shown: str) -> None:
    assert inert(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\n::error::x", "a\\n::error::x"),
        ("  ::warning::x\nb", "  \\::warning::x\\nb"),
        ("a\r\n::error::x", "a\\n::error::x"),
        ("x ##[error]y\u2029z", "x ##\\[error]y\\u2029z"),
    ],
)
def test_one_line_inert_text(text: str, shown: str) -> None:
    """An error, a warning or a refusal: one line, whatever it quotes."""
    assert inert(text, one_line=True) == shown
    assert "\n" not in shown


def test_names_are_quoted_escaped() -> None:
    assert quoted("prob\n::add-mask::x") == "'prob\\n::add-mask::x'"
    assert shown_name("plain name.txt") == "plain name.txt"
    assert shown_name("link\n::warning::x") == "'link\\n::warning::x'"
