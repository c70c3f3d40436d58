"""A nightly regression job against a baseline, on the wordstat example in Docker.

Night 1 evaluates a run directory; by night 2 one submission broke, one was repaired and one
flakes on purpose (it fails its first call, then works). Night 2 against night 1 must list exactly
the tests that regressed, were fixed, and the one flaky test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scbench_ci.job.reports import FAILING, PASSING
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.results import checkpoint_documents

WORDSTAT = EXAMPLES / "wordstat"
FLAKY_ENTRY = '''"""Fails its first call in this workspace, then runs the real wordstat."""
import pathlib
import runpy
import sys

flag = pathlib.Path(__file__).with_name(".failed-once")
if not flag.exists():
    flag.write_text("")
    sys.exit("failing once on purpose")
runpy.run_path(str(pathlib.Path(__file__).with_name("wordstat_impl.py")), run_name="__main__")
'''


def scbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=900)


def night(runs: Path, submissions: dict[str, str]) -> None:
    """`runs/wordstat/<checkpoint>/`: a copy of each named example folder, or the flaky one."""
    if runs.exists():
        shutil.rmtree(runs)
    for checkpoint, source in submissions.items():
        target = runs / "wordstat" / checkpoint
        if source == "flaky":
            shutil.copytree(WORDSTAT / "solutions" / checkpoint, target)
            (target / "wordstat.py").rename(target / "wordstat_impl.py")
            (target / "wordstat.py").write_text(FLAKY_ENTRY)
        else:
            shutil.copytree(WORDSTAT / source, target)


def statuses(results: Path) -> dict[tuple[str, str], str]:
    document = json.loads(results.read_text())
    return {
        (checkpoint["name"], test["id"]): test["status"]
        for checkpoint in checkpoint_documents(document)
        for test in checkpoint["tests"]
    }


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory, test_image: str) -> tuple:
    root = tmp_path_factory.mktemp("nightly")
    runs = root / "runs"
    common = (
        *("--problem", WORDSTAT, "--checkpoint", "all", "--jobs", "2"),
        *("--submission", runs / "{problem}/{checkpoint}"),
        *("--executor", "docker", "--image", test_image, "--reruns", "2"),
    )
    night(
        runs,
        {
            "checkpoint_1": "solutions/checkpoint_1",
            "checkpoint_2": "solutions/checkpoint_2",
            "checkpoint_3": "submissions/broken",
        },
    )
    first = scbench("evaluate", *common, "--output", root / "night-1")
    night(
        runs,
        {
            "checkpoint_1": "submissions/broken",
            "checkpoint_2": "flaky",
            "checkpoint_3": "solutions/checkpoint_3",
        },
    )
    second = scbench(
        "evaluate",
        *common,
        "--output",
        root / "night-2",
        "--baseline",
        root / "night-1",
        "--fail-on",
        "regressions",
    )
    return root, first, second


def test_night_2_lists_exactly_the_regressions_fixes_and_flaky_tests(nights: tuple) -> None:
    root, first, second = nights
    assert first.returncode == 1, first.stderr  # checkpoint_3 was broken
    assert second.returncode == 1, second.stdout + second.stderr  # tests regressed
    before = statuses(root / "night-1" / "results.json")
    after = statuses(root / "night-2" / "results.json")
    comparison = json.loads((root / "night-2" / "results.json").read_text())["comparison"]

    def listed(kind: str) -> set[tuple[str, str]]:
        return {(change["checkpoint"], change["test"]) for change in comparison[kind]}

    regressed = {k for k, s in after.items() if s in FAILING and before.get(k) in PASSING}
    fixed = {k for k, s in after.items() if s in PASSING and before.get(k) in FAILING}
    assert listed("regressions") == regressed
    assert listed("fixed") == fixed
    # Every regression is checkpoint_1's (broken now), every fix checkpoint_3's (repaired).
    assert {c for c, _ in regressed} == {"checkpoint_1"} and len(regressed) == 9
    assert {c for c, _ in fixed} == {"checkpoint_3"} and len(fixed) == 11
    # Only the flaky submission's first test failed, once: it passed on its rerun. The first to
    # run is checkpoint_1's file's first test (results.json lists tests by node id, as SCBench
    # 1.0's inventory has them, not in the order they ran).
    flaky = [k for k, s in after.items() if s == "flaky"]
    assert listed("flaky") == set(flaky)
    assert flaky == [("checkpoint_2", "tests/test_checkpoint_1.py::test_counts_simple_file")]
    night_2 = json.loads((root / "night-2" / "results.json").read_text())
    (checkpoint_2,) = (c for c in checkpoint_documents(night_2) if c["name"] == "checkpoint_2")
    (flaky_test,) = (test for test in checkpoint_2["tests"] if test["id"] == flaky[0][1])
    assert (flaky_test["status"], flaky_test["reruns"]) == ("flaky", 1)
    assert "failing once on purpose" in (flaky_test["details"] or "") + (
        flaky_test["message"] or ""
    )
    assert comparison["new"] == [] and comparison["removed"] == []
    assert comparison["selection_notes"] == []
    # checkpoint_1 and checkpoint_3 changed verdicts; checkpoint_2's flaky test is a Regression
    # test (checkpoint_1's file runs first), so core-cases still passes it.
    assert comparison["totals"]["verdict_changes"] == 2
    # The console leads with the changes; the summary has them after its overview, one row per
    # changed checkpoint, and marks each regression once, in its checkpoint's section.
    assert "Compared with" in second.stdout
    summary = (root / "night-2" / "summary.md").read_text()
    changes = summary.index("### Changes since the baseline")
    assert summary.index("| Checkpoint | Verdict | Core passed |") < changes
    rows = [line for line in summary[changes:].splitlines() if line.startswith("| checkpoint")]
    assert [row.split(" | ")[0] for row in rows[:2]] == ["| checkpoint\\_1", "| checkpoint\\_3"]
    assert rows[0].endswith("| 9 | 0 | 0 | 0 |") and rows[1].endswith("| 0 | 11 | 0 | 0 |")
    assert summary.count("(newly failing)") == 9


def test_fail_on_regressions_passes_a_failing_run_without_regressions(nights: tuple) -> None:
    """Night 2 against itself: checkpoint_1 still fails its policy, but nothing regressed."""
    root, _, _ = nights
    again = scbench(
        "merge",
        root / "night-2",
        "--baseline",
        root / "night-2",
        "--fail-on",
        "regressions",
        "--output",
        root / "again",
    )
    assert again.returncode == 0, again.stdout + again.stderr
    document = json.loads((root / "again" / "results.json").read_text())
    assert document["passed"] is False
    assert document["comparison"]["totals"]["regressions"] == 0
    assert scbench("merge", root / "night-2", "--output", root / "policy").returncode == 1
