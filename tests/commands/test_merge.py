"""The `merge` core: the shards' reports copied beside the merged results.json, never from
outside a shard."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.cli.main import main
from scbench_ci.results.file import write_results
from testing.results import make_checkpoint, make_run


def test_an_artifacts_folder_outside_its_shard_is_not_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results.json from a downloaded artifact names the folders to copy: never one that
    leaves the shard's folder, or the output's."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key").write_text("private")
    shard = tmp_path / "shard"
    (shard / "demo" / "checkpoint_1").mkdir(parents=True)
    (shard / "demo" / "checkpoint_1" / "pytest.log").write_text("log")
    (shard / "demo" / "link").symlink_to(secret)
    run = make_run(
        replace(make_checkpoint(), artifacts="demo/checkpoint_1"),
        replace(make_checkpoint(name="checkpoint_2"), artifacts="../secret"),
        replace(make_checkpoint(name="checkpoint_3"), artifacts="demo/link"),
    )
    write_results(run, shard)
    output = tmp_path / "out"
    assert main(["merge", str(shard), "--output", str(output), "--fail-on", "never"]) == 0
    copied = sorted(str(p.relative_to(output)) for p in output.rglob("*") if p.is_file())
    assert copied == ["demo/checkpoint_1/pytest.log", "results.json", "summary.md"]
    assert json.loads((output / "results.json").read_text())["totals"]["checkpoints"] == 3
    capsys.readouterr()
