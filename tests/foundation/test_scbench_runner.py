"""scbench_runner.py: SCBench's two runners, their rules by name."""

from __future__ import annotations

import dataclasses

import pytest

from scbench_ci.foundation.scbench_runner import (
    DEFAULT_SCBENCH,
    FORMER_SCBENCH,
    PAPER,
    SCBENCH_NAMES,
    V1_0,
    rules_line,
    scbench_runner,
)


def test_each_runner_is_found_by_its_name_and_1_0_is_the_default() -> None:
    assert SCBENCH_NAMES == ("1.0", "paper")
    assert (scbench_runner("1.0"), scbench_runner("paper")) == (V1_0, PAPER)
    assert (DEFAULT_SCBENCH, FORMER_SCBENCH) == ("1.0", "paper")
    with pytest.raises(KeyError):
        scbench_runner("0.3")


def test_every_rule_differs_between_the_two_runners() -> None:
    """A field that both runners set alike is no difference between them."""
    for field in dataclasses.fields(V1_0):
        assert getattr(V1_0, field.name) != getattr(PAPER, field.name), field.name


def test_the_rules_line_names_the_runner_and_its_commit() -> None:
    assert rules_line("paper") == (
        "Judged by the rules of SCBench as the paper released it (January 2026) (--scbench "
        "paper: the runner of SprocketLab/slop-code-bench at feeab5a)"
    )
    assert "Dongximing/slop-code-bench at 0a2e7bec" in rules_line("1.0")
