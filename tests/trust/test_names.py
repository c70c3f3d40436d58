"""What may name a problem, a checkpoint or a test: printable and bounded."""

from __future__ import annotations

import json
import re

import pytest

from scbench_ci.results.schema import SCHEMA_VERSION, schema
from scbench_ci.trust.names import (
    MAX_CHECKPOINT_NAME_CHARS,
    MAX_TEST_ID_CHARS,
    NAME_PATTERN,
    name_problem,
    shown_test_id,
)

REFUSED = ["a\nb", "a\rb", "a\x1b[2Jb", "a\x9bb", "a\u202eb", "a\u2066b", "a\u200bb", "a\u2028b"]


@pytest.mark.parametrize("name", REFUSED)
def test_a_character_that_is_not_printable_is_refused_by_the_rule_and_the_pattern(
    name: str,
) -> None:
    problem = name_problem(name, MAX_CHECKPOINT_NAME_CHARS)
    assert problem is not None and problem.startswith("holds \\")
    assert re.search(NAME_PATTERN, name) is None


def test_printable_names_of_any_script_and_markdown_are_names() -> None:
    for name in ("checkpoint_1", "ünïcödé 名前", "`#[x](y)@z <b>|"):
        assert name_problem(name, MAX_CHECKPOINT_NAME_CHARS) is None
        assert re.search(NAME_PATTERN, name)


def test_a_name_is_bounded() -> None:
    assert name_problem("", 10) == "is empty"
    assert name_problem("x" * 11, 10) == "is 11 characters long, more than the 10 a name may have"


def test_the_schema_holds_the_pattern_and_the_bounds() -> None:
    defs = schema(SCHEMA_VERSION)["$defs"]
    assert defs["checkpoint_name"]["pattern"] == NAME_PATTERN
    assert defs["checkpoint_name"]["maxLength"] == MAX_CHECKPOINT_NAME_CHARS
    assert defs["test_id"]["maxLength"] == MAX_TEST_ID_CHARS
    assert json.dumps(schema(SCHEMA_VERSION)).count(json.dumps(NAME_PATTERN)) >= 9


def test_a_node_id_that_is_no_name_is_kept_escaped_and_cut_apart() -> None:
    assert shown_test_id("tests/t.py::test[a]") == "tests/t.py::test[a]"
    assert shown_test_id("tests/t.py::test[\x1b]") == "tests/t.py::test[\\x1b]"
    long_a, long_b = "t" * 3000 + "a", "t" * 3000 + "b"
    shown_a, shown_b = shown_test_id(long_a), shown_test_id(long_b)
    assert shown_a != shown_b and len(shown_a) == len(shown_b) == MAX_TEST_ID_CHARS
    assert name_problem(shown_a, MAX_TEST_ID_CHARS) is None
