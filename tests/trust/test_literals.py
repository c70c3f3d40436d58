"""String literals read out of untrusted text: every one `repr` writes, and nothing else, without
a warning from Python's parser."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scbench_ci.trust.literals import literal_value


@given(st.text())
def test_every_str_repr_writes_is_read_back(text: str) -> None:
    assert literal_value(repr(text)) == text


@given(st.binary())
def test_every_bytes_repr_writes_is_read_back(data: bytes) -> None:
    assert literal_value(repr(data)) == data


@pytest.mark.parametrize(
    "literal",
    [
        # Escapes repr never writes: Python's parser warns of the first two.
        "'a\\ b'",
        "'\\d'",
        "b'\\u00e9'",
        "'\\N{BULLET}'",
        "'\\0'",
        "'\\a'",
        "'\\X41'",
        "'\\x4'",
        "'\\u12'",
        # Not a literal, or not a string.
        "'unclosed",
        "'a' + 'b'",
        "f'{x}'",
        "b'\u00e9'",
        "",
    ],
)
def test_anything_else_is_none_and_warns_of_nothing(literal: str) -> None:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        value = literal_value(literal)
    assert (value, warned) == (None, [])
