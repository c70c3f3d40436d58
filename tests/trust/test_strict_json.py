"""JSON nobody vouches for: within the caps, or one JsonError naming where."""

from __future__ import annotations

import pytest

from scbench_ci.trust.strict_json import JsonError, JsonLimits, parse, path_of

SMALL = JsonLimits(
    max_bytes=1000,
    max_containers=20,
    max_depth=3,
    max_string_chars=10,
    max_items=5,
    max_integer=1000,
    max_float=1e6,
)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (b'{"a": "' + b"x" * 11 + b'"}', "a", "a string of 11 characters"),
        (b'{"a": [1, 2, 3, 4, 5, 6]}', "a", "6 items"),
        (b'{"a": [[[["deep"]]]]}', "a[0][0][0]", "nested more than 3 deep"),
        (b'{"a": {"b": 1001}}', "a.b", "the integer is larger than 1000"),
        (b'{"a": [1e999]}', "a[0]", "inf is not a finite number"),
        (b'{"a": NaN}', "a", "nan is not a finite number"),
        (b'{"a": -Infinity}', "a", "-inf is not a finite number"),
        (b'{"a": 2e6}', "a", "not a finite number up to 1e+06"),
        (b'{"a": "\\ud800"}', "a", "lone surrogate"),
        (b'{"\\u001b[2J": "\\ud800"}', '["\\u001b[2J"]', "lone surrogate"),
        (b'{"a": 1, "a": 2}', "", 'the key "a" is given twice'),
        (b"[" * 21 + b"]" * 21, "", "more than 20 objects and lists"),
        (b'"\xff"', "", "not UTF-8 text"),
        (b" " * 1001, "", "larger than the 1000 bytes allowed"),
    ],
)
def test_what_is_past_a_limit_is_named_by_its_path(text: bytes, where: str, what: str) -> None:
    with pytest.raises(JsonError) as caught:
        parse(text, SMALL)
    assert caught.value.where == where
    assert what in caught.value.what


def test_deep_nesting_within_the_container_cap_is_refused_without_recursion() -> None:
    with pytest.raises(JsonError, match="nested too deeply"):
        parse(b"[" * 100_000 + b"]" * 100_000)


def test_an_integer_of_5000_digits_is_not_parsed() -> None:
    with pytest.raises(JsonError, match="not JSON: Exceeds the limit"):
        parse(b"1" * 5000)


def test_what_is_within_the_limits_is_the_json_value() -> None:
    text = b'{"a": [1, 2.5, true, null, "\xc3\xa9"], "b": {"c": -3}}'
    assert parse(text, SMALL) == {"a": [1, 2.5, True, None, "é"], "b": {"c": -3}}


def test_paths_escape_the_keys_they_name() -> None:
    assert path_of(["problems", 0, "name"]) == "problems[0].name"
    assert path_of(["tool_versions", "\x1b[2J evil"]) == 'tool_versions["\\u001b[2J evil"]'
