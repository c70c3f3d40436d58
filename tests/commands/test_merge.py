"""The `merge` core: the shards' reports copied beside the merged results.json, never from
outside a shard; SCBench's checkpoint_results.jsonl beside them; a `check` run's results refused
by either front end."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.action import main as action
from scbench_ci.cli.main import main
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import write_results
from scbench_ci.results.findings import CheckReport
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
    assert copied == [
        "checkpoint_results.jsonl",
        "demo/checkpoint_1/pytest.log",
        "results.json",
        "summary.md",
    ]
    assert json.loads((output / "results.json").read_text())["totals"]["checkpoints"] == 3
    capsys.readouterr()


def test_the_rows_of_scbench_are_written_beside_the_merged_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard's checkpoints, in the problem's order, as SCBench's rows of one run."""
    order = ("checkpoint_1", "checkpoint_2")
    for name in order:
        run = make_run(make_checkpoint(name=name))
        problem = replace(run.problems[0], checkpoint_order=order)
        write_results(replace(run, problems=(problem,)), tmp_path / name)
    output = tmp_path / "out"
    shards = [str(tmp_path / name) for name in reversed(order)]
    assert main(["merge", *shards, "--output", str(output), "--fail-on", "never"]) == 0
    rows = [json.loads(line) for line in (output / "checkpoint_results.jsonl").open()]
    assert [
        (row["checkpoint"], row["idx"], row["is_first"], row["is_last"], row["path"])
        for row in rows
    ] == [
        ("checkpoint_1", 1, True, False, str(output.resolve() / "demo")),
        ("checkpoint_2", 2, False, True, str(output.resolve() / "demo")),
    ]
    capsys.readouterr()


def _check_results(folder: Path) -> Path:
    """The results.json a `check` run writes: its problem holds the check's findings."""
    run = make_run(make_checkpoint())
    problem = replace(run.problems[0], check=CheckReport(()))
    return write_results(replace(run, problems=(problem,)), folder)


def test_the_cli_refuses_to_merge_a_check_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checked = _check_results(tmp_path / "check")
    write_results(make_run(make_checkpoint(name="checkpoint_2")), tmp_path / "shard")
    output = tmp_path / "out"
    args = ["merge", str(tmp_path / "shard"), str(checked), "--output", str(output)]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert f"{checked} is a `check` run's results; merge merges evaluations" in error
    assert "Traceback" not in error
    assert not output.exists()


def test_the_action_refuses_to_merge_a_check_run(tmp_path: Path) -> None:
    checked = _check_results(tmp_path / "check")
    outputs = tmp_path / "outputs"
    outputs.touch()
    stdout = io.StringIO()
    env = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(outputs),
        "INPUT_COMMAND": "merge",
        "INPUT_RESULTS": "check",
        "INPUT_UPLOAD_ARTIFACT": "false",
    }
    assert action.main(env, stdout) == 2
    assert f"{checked} is a `check` run's results; merge merges evaluations" in stdout.getvalue()
    assert not (tmp_path / ".scbench" / "results.json").exists()


def test_merged_shards_keep_the_history_of_the_baseline_they_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard carries the baseline's history and its own record; the merge, the same
    history and its own record (of every checkpoint), with its baseline given or not."""
    baseline = with_history(
        make_run(make_checkpoint(), make_checkpoint(name="checkpoint_2")), 30, None, ()
    )
    for name in ("checkpoint_1", "checkpoint_2"):
        shard = make_run(make_checkpoint(name=name), started_at="2026-01-02T00:00:00+00:00")
        write_results(with_history(shard, 30, None, carried(baseline)), tmp_path / name)
    write_results(baseline, tmp_path / "baseline")
    for given in ([], ["--baseline", str(tmp_path / "baseline")]):
        output = tmp_path / f"merged{len(given)}"
        shards = [str(tmp_path / "checkpoint_1"), str(tmp_path / "checkpoint_2")]
        assert main(["merge", *shards, *given, "--output", str(output), "--fail-on", "never"]) == 0
        history = json.loads((output / "results.json").read_text())["history"]
        runs = history["runs"]
        assert [run["started_at"] for run in runs] == [
            "2026-01-01T00:00:00+00:00",
            "2026-01-02T00:00:00+00:00",
        ]
        assert list(runs[1]["checkpoints"]) == ["demo/checkpoint_1", "demo/checkpoint_2"]
    capsys.readouterr()
