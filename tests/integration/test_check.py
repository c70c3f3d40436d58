"""`scbench-ci check` end to end, in Docker: the defective problems of tests/data/check_repo each
give exactly their findings (in one run of them all, two runs at a time), the bundled examples are
sound, `--changed-since` selects by git, and what the run leaves behind."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scbench_ci.results.file import load_results, write_results
from testing.cli import run_cli
from testing.paths import EXAMPLES, REPO_ROOT
from tests.check.test_changed import git

PROBLEMS = REPO_ROOT / "tests" / "data" / "check_repo" / "problems"
SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
STAGES = ("static", "collection", "oracle", "empty", "flaky", "time")

Found = tuple[str, str, str, int | None, str | None]
"""What a test compares of a finding: stage, severity, file, line, test."""

# fmt: off
EXPECTED: dict[str, list[Found]] = {
    "clean": [],
    "bad_config": [("static", "error", "bad_config/config.yaml", 4, None)],
    "missing_spec": [("static", "error", "missing_spec/config.yaml", 6, None)],
    "missing_test_file": [("static", "error", "missing_test_file/config.yaml", 10, None)],
    "unregistered_marker": [
        ("static", "error", "unregistered_marker/tests/test_checkpoint_1.py", 11, None)],
    "conftest_without_option": [
        ("static", "error", "conftest_without_option/tests/conftest.py", 10, None)],
    "duplicate_test_name": [
        ("static", "error", "duplicate_test_name/tests/test_checkpoint_1.py", 15, None)],
    "collection_error": [
        ("collection", "error", "collection_error/tests/test_checkpoint_1.py", 4, None)],
    "oracle_failure": [
        ("oracle", "error", "oracle_failure/tests/test_checkpoint_1.py", 12,
         "tests/test_checkpoint_1.py::test_each_word")],
    "known_failure_passes": [
        ("oracle", "warning", "known_failure_passes/tests/known_failures.txt", 3,
         "tests/test_checkpoint_1.py::test_one_word")],
    "no_solutions": [("oracle", "warning", "no_solutions/solutions", None, None)],
    "vacuous_test": [
        ("empty", "error", "vacuous_test/tests/test_checkpoint_1.py", 15,
         "tests/test_checkpoint_1.py::test_no_crash")],
    "slow_test": [
        ("time", "warning", "slow_test/tests/test_checkpoint_1.py", 17,
         "tests/test_checkpoint_1.py::test_slowly")],
    "network_test": [
        ("oracle", "warning", "network_test/tests/test_checkpoint_1.py", 30,
         "tests/test_checkpoint_1.py::test_the_index_answers")],
}
COIN = "tests/test_checkpoint_1.py::test_coin"
FLAKY: Found = ("flaky", "error", "flaky_test/tests/test_checkpoint_1.py", 23, COIN)
# Two runs of a fair coin: different outcomes (flaky), tails both times (an oracle failure), or
# heads both times (nothing). The flaky test's own run repeats until a miss is unlikely.
FLAKY_IN_TWO_RUNS: list[list[Found]] = [
    [FLAKY], [("oracle", "error", "flaky_test/tests/test_checkpoint_1.py", 23, COIN)], []]
# The run without the network flips the coin once more: when it disagrees with two that agreed,
# the coin is said to reach the network (or to be flaky, as the finding says), at the line of the
# tails whichever run they came in.
COIN_WITHOUT_NETWORK: Found = (
    "oracle", "warning", "flaky_test/tests/test_checkpoint_1.py", 23, COIN)
# fmt: on
STATIC_ONLY = {name for name, found in EXPECTED.items() if found and found[0][0] == "static"}


def scbench_check(
    image: str, *args: str | Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli("check", *args, *docker_flags(image), cwd=cwd, timeout=900)


def docker_flags(image: str) -> list[str]:
    return ["--executor", "docker", "--image", image, "--quiet"]


def findings(problem: dict[str, Any]) -> list[Found]:
    return [
        (f["stage"], f["severity"], f["file"], f["line"], f["test"])
        for f in problem["check"]["findings"]
    ]


# `check`'s time stage warns of a test that takes more than half its timeout: on a busy CPU the
# problems' quick tests do, and the findings differ. So the tests that read the findings of a
# run with the time stage run alone (`serial`).
@pytest.fixture(scope="module")
def repository_check(
    tmp_path_factory: pytest.TempPathFactory, test_image: str
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, dict[str, Any]]]:
    """Every problem of the repository, in one check two runs at a time."""
    output = tmp_path_factory.mktemp("check")
    run = scbench_check(test_image, PROBLEMS, "--jobs", "2", "--output", output)
    results = json.loads((output / "results.json").read_text())
    return run, output, {problem["name"]: problem for problem in results["problems"]}


@pytest.mark.serial
@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_defective_problem_gives_exactly_its_findings(
    repository_check: tuple, name: str
) -> None:
    _, _, problems = repository_check
    problem = problems[name]
    assert findings(problem) == EXPECTED[name]
    assert problem["passed"] is not any(f[1] == "error" for f in EXPECTED[name])
    stages = problem["check"]["stages"]
    if name in STATIC_ONLY:
        # The runs are skipped: nothing of them would be worth reading.
        assert [stage for stage in STAGES if stages[stage] is None] == list(STAGES[1:])
        assert problem["checkpoints"] == []
    elif name == "no_solutions":
        assert [stage for stage in STAGES if stages[stage] is None] == ["flaky", "time"]
        assert problem["checkpoints"] == []
    else:
        assert None not in stages.values()
        assert [c["artifacts"] for c in problem["checkpoints"]] == [
            f"{name}/{checkpoint}/oracle" for checkpoint in problem["checkpoint_order"]
        ]


@pytest.mark.serial
def test_the_flaky_problem_in_two_runs_is_flaky_failing_or_clean(repository_check: tuple) -> None:
    _, _, problems = repository_check
    found = findings(problems["flaky_test"])
    assert [f for f in found if f != COIN_WITHOUT_NETWORK] in FLAKY_IN_TWO_RUNS
    if COIN_WITHOUT_NETWORK in found:
        assert found[-1] == COIN_WITHOUT_NETWORK


@pytest.mark.serial
def test_a_flaky_test_is_caught_over_many_runs(test_image: str, tmp_path: Path) -> None:
    # 16 runs of a fair coin all agree with a chance of 1 in 32768.
    run = scbench_check(
        test_image, PROBLEMS / "flaky_test", "--repeat", "16", "--jobs", "4", "--output", tmp_path
    )
    assert run.returncode == 1, run.stdout + run.stderr
    (problem,) = json.loads((tmp_path / "results.json").read_text())["problems"]
    assert findings(problem) == [FLAKY]
    (test,) = [t for t in problem["checkpoints"][0]["tests"] if t["id"] == COIN]
    assert test["status"] == "flaky"
    assert 0 < test["repeat"]["passed"] < test["repeat"]["runs"] == 16


@pytest.mark.serial
def test_the_run_and_what_it_leaves_behind(repository_check: tuple, tmp_path: Path) -> None:
    run, output, problems = repository_check
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads((output / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    assert (document["policy"], document["repeat"], document["jobs"]) == ("all-cases", 2, 2)
    assert document["passed"] is False
    loaded = load_results(output / "results.json")
    assert load_results(write_results(loaded, tmp_path)) == loaded
    assert sorted(problems) == sorted(path.name for path in PROBLEMS.iterdir())
    clean = output / "clean" / "checkpoint_2"
    for folder in ("collect", "oracle/run-1", "oracle/run-2", "offline", "empty"):
        assert (clean / folder / "pytest-report.json").is_file(), folder
    assert (
        json.loads((clean / "oracle" / "result.json").read_text())
        == (problems["clean"]["checkpoints"][1])
    )


@pytest.mark.serial
def test_one_line_per_finding_then_each_problems_verdict(repository_check: tuple) -> None:
    run, _, problems = repository_check
    lines = run.stdout.splitlines()
    located = [line for line in lines if re.match(r"\S+?(:\d+)?: (error|warning): \[\w+\] ", line)]
    count = sum(len(problem["check"]["findings"]) for problem in problems.values())
    assert len(located) == count
    assert (
        "tests/data/check_repo/problems/oracle_failure/tests/test_checkpoint_1.py:12: error: "
        "[oracle] tests/test_checkpoint_1.py::test_each_word failed with the reference solution"
    ) in run.stdout
    verdicts = [line.split()[:2] for line in lines if line.split()[:1] == ["clean"]]
    assert verdicts == [["clean", "passed"]]
    assert "slow_test  " in run.stdout and "passed: time 1 warning" in run.stdout
    assert (
        "tests/data/check_repo/problems/network_test/tests/test_checkpoint_1.py:30: warning: "
        "[oracle] tests/test_checkpoint_1.py::test_the_index_answers passed with the network "
        "and failed without it: it reaches the network"
    ) in run.stdout


@pytest.mark.serial
def test_the_summary_has_one_row_per_problem(repository_check: tuple) -> None:
    _, output, problems = repository_check
    summary = (output / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ")][2:]
    assert len(rows) == len(problems)
    by_name = {row.split(" | ")[0][2:].replace("\\_", "_"): row for row in rows}
    assert by_name["clean"].endswith("| ✅ | ✅ | ✅ | ✅ | ✅ | ✅ |")
    assert by_name["vacuous_test"].endswith("| ✅ | ✅ | ✅ | ❌ 1 | ✅ | ✅ |")
    assert by_name["slow_test"].endswith("| ✅ | ⚠️ 1 |")
    assert by_name["bad_config"].endswith(f"| ❌ 1 |{' – |' * 5}")  # noqa: RUF001 (not run)
    assert "### oracle\\_failure: ❌ not sound" in summary


def test_the_examples_are_sound(test_image: str, tmp_path: Path) -> None:
    # The quality measure decides no finding (a check with it: `repository_check`).
    run = scbench_check(test_image, EXAMPLES, "--jobs", "2", "--no-quality", "--output", tmp_path)
    problems = json.loads((tmp_path / "results.json").read_text())["problems"]
    errors = [(p["name"], f) for p in problems for f in findings(p) if f[1] == "error"]
    assert errors == []
    assert run.returncode == 0, run.stdout + run.stderr


def test_only_the_problems_changed_since_a_ref(test_image: str, tmp_path: Path) -> None:
    # Problems with static errors: selecting them needs no container.
    repo = tmp_path / "repo"
    for name in ("missing_spec", "bad_config"):
        shutil.copytree(PROBLEMS / name, repo / "problems" / name)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "problems")
    output = tmp_path / "output"

    unchanged = scbench_check(
        test_image, "problems", "--changed-since", "main", "--output", output, cwd=repo
    )
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert "No problem to check" in unchanged.stdout
    assert not (output / "results.json").exists()
    assert "Nothing to check" in (output / "summary.md").read_text()

    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "problems/missing_spec/checkpoint_2.md").write_text("not a checkpoint's spec\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change missing_spec")
    changed = scbench_check(
        test_image, "problems", "--changed-since", "main", "--output", output, cwd=repo
    )
    assert changed.returncode == 1, changed.stdout + changed.stderr
    problems = json.loads((output / "results.json").read_text())["problems"]
    assert [(p["name"], findings(p)) for p in problems] == [
        ("missing_spec", EXPECTED["missing_spec"])
    ]
