"""A problem under review (`scbench-ci check`, a pull request's files) whose files lead out of it
or nest without end: each link is an error finding that names it and is never read or copied
(the fake token it leads to appears nowhere), a deep tree is a finding, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.trust.files import remove_tree
from testing.problems import ProblemFolder
from testing.trees import (
    assert_no_crash,
    assert_no_secret,
    nest,
    plant_secret,
    scbench,
)


def _problem(root: Path) -> ProblemFolder:
    problem = ProblemFolder(root, {"name": "demo", "entry_file": "main", "checkpoints": {}})
    problem.config["checkpoints"] = {"checkpoint_1": {}}
    problem.save()
    problem.write("tests/test_checkpoint_1.py", "def test_ok():\n    pass\n")
    problem.write("checkpoint_1.md", "# checkpoint 1\n")
    problem.write("solutions/checkpoint_1/main.py", "print('hello')\n")
    return problem


def _check(image: str, problem: Path, output: Path) -> tuple[Any, dict[str, Any]]:
    run = scbench(image, "check", problem, "--output", output, "--quiet", "--repeat", "1")
    results = json.loads((output / "results.json").read_text())
    return run, results["problems"][0]


def _errors(problem: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["stage"], f["file"], f["message"])
        for f in problem["check"]["findings"]
        if f["severity"] == "error"
    ]


LINKS = {
    "known_failures": "tests/known_failures.txt",
    "solution": "solutions/checkpoint_1",
    "helper": "tests/helpers.py",
    "asset_in_folder": "assets/corpus/words.txt",
}


@pytest.mark.parametrize("attack", list(LINKS))
def test_a_link_out_of_the_problem_is_a_finding_and_is_never_read(
    test_image: str, tmp_path: Path, attack: str
) -> None:
    secret = plant_secret(tmp_path / "outside")
    problem = _problem(tmp_path / "repo" / "demo")
    if attack == "asset_in_folder":
        problem.write("assets/corpus/a.txt", "alpha\n")
        problem.config["static_assets"] = {"corpus": {"path": "assets/corpus"}}
        problem.save()
    link = problem.root / LINKS[attack]
    if link.is_dir():
        remove_tree(link)
    target = secret.parent if attack == "solution" else secret
    link.symlink_to(target)
    output = tmp_path / "out"

    run, result = _check(test_image, problem.root, output)

    assert_no_crash(run)
    assert run.returncode == 1
    leads_out = "is a symlink that leads out of the problem: it is neither read nor copied"
    assert ("static", f"demo/{LINKS[attack]}", leads_out) in _errors(result)
    assert result["passed"] is False
    assert result["checkpoints"] == []  # no run of a problem with static errors
    assert f"demo/{LINKS[attack]}" in run.stdout
    assert_no_secret(run, output)
    assert secret.read_text().startswith("GITHUB_TOKEN=")  # nothing changed outside


def test_an_asset_that_is_a_link_out_is_refused_by_name(test_image: str, tmp_path: Path) -> None:
    secret = plant_secret(tmp_path / "outside")
    problem = _problem(tmp_path / "repo" / "demo")
    (problem.root / "words.txt").symlink_to(secret)
    problem.config["static_assets"] = {"words": {"path": "words.txt"}}
    problem.save()
    output = tmp_path / "out"

    run, result = _check(test_image, problem.root, output)

    assert_no_crash(run)
    assert run.returncode == 1
    assert [(stage, file) for stage, file, _ in _errors(result)] == [("static", "demo/config.yaml")]
    assert "static_assets.words.path: 'words.txt' leaves the problem folder" in run.stdout
    assert_no_secret(run, output)


def test_a_problem_with_a_5000_deep_tree_is_a_finding_not_a_crash(
    test_image: str, tmp_path: Path
) -> None:
    problem = _problem(tmp_path / "repo" / "demo")
    (problem.root / "tests" / "data").mkdir()
    nest(problem.root / "tests" / "data", 5000)
    output = tmp_path / "out"
    try:
        run, result = _check(test_image, problem.root, output)
    finally:
        remove_tree(problem.root / "tests" / "data")

    assert_no_crash(run)
    assert run.returncode == 1
    deep = "demo/tests/data/" + "/".join(["d"] * 100)
    assert _errors(result) == [("static", deep, "lies deeper than 100 folders: it is not read")]
    assert result["checkpoints"] == []
