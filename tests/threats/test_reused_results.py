"""`--skip-existing` reuses only what this user's key signed, for the same inputs: a result.json
someone else put in the output folder (a checked-out submission brings its own `.scbench/`),
with the fingerprint anyone can compute, is run again; so is a result whose problem changed in a
way the staged files do not show (a marker moved to another group)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from scbench_ci.action import main as action
from scbench_ci.trust.reuse import KEY_FILE, Unsigned, reuse_key
from tests.threats.conftest import Threat, no_traceback

RESULT = "demo/checkpoint_1/result.json"


def forged(document: dict[str, Any]) -> dict[str, Any]:
    """The result of a failing run, made to say every test passed, numbers and all."""
    tests = [
        {**test, "status": "passed", "message": None, "details": None} for test in document["tests"]
    ]
    groups = {}
    for name in {test["group"] for test in tests}:
        total = sum(test["group"] == name for test in tests)
        groups[name] = {
            **document["groups"][name],
            "passed": total,
            "failed": 0,
            "total": total,
            "pass_rate": 1.0,
        }
    counts = {
        **document["totals"],
        "passed": len(tests),
        "failed": 0,
        "total": len(tests),
        "pass_rate": 1.0,
    }
    return {
        **document,
        "passed": True,
        "failure": None,
        "pytest_exit_code": 0,
        "tests": tests,
        "groups": {**document["groups"], **groups},
        "totals": counts,
    }


def plant_forgery(output: Path, honest: dict[str, Any]) -> None:
    shutil.rmtree(output)
    (output / "demo/checkpoint_1").mkdir(parents=True)
    (output / RESULT).write_text(json.dumps(forged(honest), indent=2))
    (output / "demo/checkpoint_1/result.sig").write_text("0" * 64)


def test_a_forged_result_with_the_right_fingerprint_is_run_again(threat: Threat) -> None:
    first = threat.evaluate("--skip-existing")
    assert first.returncode == 1, first.stdout + first.stderr
    honest = json.loads((threat.output / RESULT).read_text())
    assert honest["groups"]["Core"]["passed"] == 0 and honest["fingerprint"]
    plant_forgery(threat.output, honest)

    run = threat.evaluate("--skip-existing")
    no_traceback(run)
    assert run.returncode == 1, run.stdout + run.stderr
    result = json.loads((threat.output / "results.json").read_text())
    checkpoint = result["problems"][0]["checkpoints"][0]
    assert (result["passed"], checkpoint["passed"], checkpoint["reused"]) == (False, False, False)
    assert (checkpoint["groups"]["Core"]["passed"], checkpoint["groups"]["Core"]["total"]) == (0, 3)
    assert "Verdict: FAILED" in run.stdout
    note = "demo/checkpoint_1: the earlier result is not reused, it was not signed with this"
    assert note in run.stdout
    assert [warning for warning in checkpoint["warnings"] if note in warning] != []

    # What this run wrote, it signed: the next run reuses it.
    again = threat.evaluate("--skip-existing")
    assert again.returncode == 1
    reused = json.loads((threat.output / "results.json").read_text())
    assert reused["problems"][0]["checkpoints"][0]["reused"] is True


def test_the_action_never_reuses_a_result_the_submission_brings(
    threat: Threat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default `submission: .` holds the default output folder `.scbench/`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(threat.cache))
    workspace = tmp_path / "workspace"
    shutil.copytree(threat.problem.root, workspace / "demo")
    shutil.copy(threat.submission / "main.py", workspace / "main.py")
    env = {
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
        "INPUT_PROBLEM": "demo",
        "INPUT_CHECKPOINT": "checkpoint_1",
        "INPUT_IMAGE": threat.image,
        "INPUT_JOBS": "1",
        "INPUT_SKIP_EXISTING": "true",
        "INPUT_UPLOAD_ARTIFACT": "false",
    }
    assert action.main(env, io.StringIO()) == 1
    output = workspace / ".scbench"
    honest = json.loads((output / RESULT).read_text())
    # A fresh checkout of a submission that ships its own `.scbench/`.
    plant_forgery(output, honest)

    stdout = io.StringIO()
    assert action.main(env, stdout) == 1
    result = json.loads((output / "results.json").read_text())
    checkpoint = result["problems"][0]["checkpoints"][0]
    assert (result["passed"], checkpoint["passed"], checkpoint["reused"]) == (False, False, False)
    assert (checkpoint["groups"]["Core"]["passed"], checkpoint["groups"]["Core"]["total"]) == (0, 3)
    assert "passed<<" in (tmp_path / "github_output").read_text()
    assert "Traceback" not in stdout.getvalue()


def test_what_the_local_executor_signed_is_reused_by_it_and_never_where_docker_answers(
    threat: Threat, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local executor's workspace is a fresh folder each run, yet a second such run reuses
    the result; a later Docker run runs the checkpoint again, in a container."""
    threat.submission_prints("ok")

    def evaluate(executor: str) -> dict[str, Any]:
        run = threat.evaluate("--executor", executor, "--skip-existing")
        no_traceback(run)
        assert run.returncode == 0, run.stdout + run.stderr
        result = json.loads((threat.output / "results.json").read_text())
        return {"executor": result["executor"], **result["problems"][0]["checkpoints"][0]}

    monkeypatch.setenv("DOCKER_HOST", f"unix://{threat.outside}/no-docker.sock")
    first, second = evaluate("local"), evaluate("local")
    assert (first["executor"], first["reused"]) == ("local", False)
    assert (second["executor"], second["reused"]) == ("local", True)

    monkeypatch.delenv("DOCKER_HOST")
    in_docker, again = evaluate("docker"), evaluate("docker")
    assert (in_docker["executor"], in_docker["reused"]) == ("docker", False)
    assert (again["executor"], again["reused"]) == ("docker", True)
    assert in_docker["fingerprint"] not in (first["fingerprint"], None)


def test_a_marker_moved_to_another_group_is_run_again(threat: Threat) -> None:
    """By the paper's rules, where a marker of the problem's own gives its tests their group
    (SCBench 1.0's inventory does not read it)."""
    threat.submission_prints("ok")
    first = threat.evaluate("--skip-existing", "--scbench", "paper")
    assert first.returncode == 0, first.stdout + first.stderr
    groups = json.loads((threat.output / RESULT).read_text())["groups"]
    assert (groups["Core"]["passed"], groups["Functionality"]["total"]) == (3, 0)

    config = yaml.safe_load((threat.problem.root / "config.yaml").read_text())
    config["markers"]["extra"]["group"] = "Functionality"
    threat.problem.config = config
    threat.problem.save()
    run = threat.evaluate("--skip-existing", "--scbench", "paper")
    no_traceback(run)
    assert run.returncode == 0, run.stdout + run.stderr
    checkpoint = json.loads((threat.output / "results.json").read_text())["problems"][0][
        "checkpoints"
    ][0]
    assert checkpoint["reused"] is False
    assert (
        checkpoint["groups"]["Core"]["total"],
        checkpoint["groups"]["Functionality"]["total"],
    ) == (2, 1)


def test_the_key_is_made_private_and_never_read_through_a_link(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh/scbench-ci"
    key = reuse_key(fresh)
    assert isinstance(key, bytes) and len(key) == 32
    assert (fresh.stat().st_mode & 0o777, (fresh / KEY_FILE).stat().st_mode & 0o777) == (
        0o700,
        0o600,
    )
    assert reuse_key.__wrapped__(fresh) == key

    linked = tmp_path / "linked/scbench-ci"
    linked.mkdir(parents=True, mode=0o700)
    (tmp_path / "known").write_bytes(b"k" * 32)
    (linked / KEY_FILE).symlink_to(tmp_path / "known")
    assert isinstance(reuse_key(linked), Unsigned)

    shared = tmp_path / "shared/scbench-ci"
    shared.mkdir(parents=True)
    shared.chmod(0o777)
    assert isinstance(reuse_key(shared), Unsigned)
    assert not (shared / KEY_FILE).exists()
