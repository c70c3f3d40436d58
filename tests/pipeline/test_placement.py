"""Where the runs take place: a Ray cluster joined without token authentication is said, since
whatever reaches its head (an evaluation's setup has the network) can run code on its nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.options import EvaluationOptions
from scbench_ci.pipeline.placement import UNAUTHENTICATED_RAY, OnRayCluster, make_placement

RAY = EvaluationOptions(
    problems=(), checkpoint="all", submission="s", output_dir=Path("o"), engine="ray"
)


@pytest.mark.parametrize("mode", [None, "", "none"])
def test_a_cluster_without_token_authentication_is_said(
    mode: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode is None:
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    else:
        monkeypatch.setenv("RAY_AUTH_MODE", mode)
    said: list[str] = []
    placement = make_placement(RAY, said.append, "evaluation")
    assert isinstance(placement, OnRayCluster)
    assert said == [UNAUTHENTICATED_RAY]


def test_with_token_authentication_nothing_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    said: list[str] = []
    make_placement(RAY, said.append, "evaluation")
    assert said == []
