"""Text made inert for a terminal and for GitHub's runner reading it."""

import pytest

from scbench_ci.trust.terminal import inert


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
