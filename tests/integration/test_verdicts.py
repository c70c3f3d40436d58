"""What a run's end says, on examples/marks under `any-core-cases` by the paper's rules (its
checkpoint_2 has no Core test there, so that policy fails it; SCBench 1.0's inventory makes its
tests Core): each failed checkpoint says why, in the console and the summary,
and the headline follows `--fail-on` as the exit code does, for `evaluate` and `merge`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.paths import EXAMPLES

MARKS = EXAMPLES / "marks"
NO_CORE = "no Core test passed (policy any-core-cases needs at least one)"
POLICY = (
    "1 of 2 checkpoints pass the policy any-core-cases, which asks that at least one Core test "
    "passes"
)
CHECKPOINTS = "marks v1, checkpoint\\_1, checkpoint\\_2"
# fail_on -> (exit code, the console's Verdict line, the summary's heading), against a baseline
# that is the same run: no regression, one of the two checkpoints failing its policy.
HEADLINES = {
    "policy": (1, f"Verdict: FAILED ({POLICY})", f"## ❌ FAILED: {CHECKPOINTS}\n"),
    "regressions": (
        0,
        "Verdict: no regressions (1 of 2 checkpoints pass the policy)",
        f"## ✅ no regressions (1 of 2 checkpoints pass the policy): {CHECKPOINTS}\n",
    ),
    "never": (
        0,
        "Verdict: 1 of 2 checkpoints pass the policy (not failing the run: --fail-on never)",
        "## 1 of 2 checkpoints pass the policy (not failing the run: --fail-on never): "
        f"{CHECKPOINTS}\n",
    ),
}


def scbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=900)


def evaluate(output: Path, *extra: str | Path) -> subprocess.CompletedProcess[str]:
    return scbench(
        "evaluate",
        *("--problem", MARKS, "--checkpoint", "all", "--executor", "local", "--quiet"),
        *("--policy", "any-core-cases", "--scbench", "paper"),
        *("--submission", MARKS / "solutions/{checkpoint}", "--output", output, *extra),
    )


@pytest.fixture(scope="module")
def first_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    output = tmp_path_factory.mktemp("marks")
    return evaluate(output), output


def test_a_checkpoint_without_core_tests_says_why_it_failed(
    first_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    run, output = first_run
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.count("why it failed") == 1
    assert (
        "marks / checkpoint_2: failed in" in run.stdout
        and f"  all                     4/4   100.0%\n  why it failed: {NO_CORE}\n" in run.stdout
    )
    summary = (output / "summary.md").read_text()
    # At the top, the run's failing checkpoints with why; then in the checkpoint's section.
    assert summary.count("**Why it failed**") == 2
    assert f"\n- **checkpoint\\_2**: {NO_CORE}.\n" in summary
    section = summary[summary.index("### checkpoint\\_2: ❌ failed") :]
    assert section.split("\n\n")[1] == f"**Why it failed**: {NO_CORE}."


def test_a_failure_kind_is_why_it_failed(tmp_path: Path) -> None:
    run = evaluate(tmp_path / "out", "--submission", tmp_path / "absent/{checkpoint}")
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.count("  why it failed: missing: the submission folder") == 2
    summary = (tmp_path / "out/summary.md").read_text()
    assert summary.count("**Why it failed**: missing: the submission folder") == 2


@pytest.mark.parametrize("fail_on", list(HEADLINES))
def test_evaluate_headlines_follow_the_exit_code(
    fail_on: str, first_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    _, baseline = first_run
    run = evaluate(tmp_path, "--fail-on", fail_on, "--baseline", baseline / "results.json")
    code, verdict, heading = HEADLINES[fail_on]
    assert run.returncode == code, run.stdout + run.stderr
    assert run.stdout.splitlines()[-2] == verdict
    assert (tmp_path / "summary.md").read_text().startswith(heading)


@pytest.mark.parametrize("fail_on", list(HEADLINES))
def test_merge_headlines_follow_the_exit_code(
    fail_on: str, first_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    _, shard = first_run
    merged = scbench(
        "merge", shard, *("--output", tmp_path, "--fail-on", fail_on, "--baseline", shard)
    )
    code, verdict, heading = HEADLINES[fail_on]
    assert merged.returncode == code, merged.stdout + merged.stderr
    assert merged.stdout.splitlines()[-2] == verdict
    assert (tmp_path / "summary.md").read_text().startswith(heading)


def test_regressions_without_a_baseline_pass_and_say_so(
    first_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    _, shard = first_run
    merged = scbench("merge", shard, "--output", tmp_path, "--fail-on", "regressions")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert merged.stdout.splitlines()[-2] == (
        "Verdict: no regressions (no baseline to compare with; 1 of 2 checkpoints pass the policy)"
    )
