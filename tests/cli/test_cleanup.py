"""`scbench-ci cleanup`'s flags."""

from __future__ import annotations

import pytest

from scbench_ci.cli.main import parse_arguments


@pytest.mark.parametrize("value", ["", "host", "/12", "host/", "host/x", "host/-1"])
def test_an_owner_is_host_and_pid(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(["cleanup", "--owner", value])
    assert f"argument --owner: expected HOST/PID, got {value!r}" in capsys.readouterr().err
