"""results.json files nobody vouches for: merge's shards, `--baseline`, `scbench-ci summary`.

Through the real CLI: a forged verdict is judged again from the tests (FAILED, exit 1); an
impossible value is one line naming the file and the field (exit 2), with no traceback, before
anything runs and with nothing written.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.file import write_results
from scbench_ci.results.model import CheckpointResult, TestResult
from scbench_ci.results.verdict import count_groups, verdict
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.results import make_run, make_test

pytestmark = pytest.mark.slow

Document = dict[str, Any]
INFINITE = 123456.789
"""Written as 1e999 (which JSON parses to infinity)."""
DEEP = "written as lists nested 10,000 deep"


def make_checkpoint(name: str, *tests: TestResult) -> CheckpointResult:
    groups = count_groups(tests, flaky_passes=False)
    return CheckpointResult(
        name=name,
        include_prior_tests=True,
        passed=verdict("core-cases", None, groups),
        failure=None,
        pytest_exit_code=0 if all(t.status is Status.PASSED for t in tests) else 1,
        duration_s=1.0,
        groups=groups,
        tests=tests,
        warnings=(),
        started_at="2026-01-01T00:00:00+00:00",
    )


def _shard(folder: Path, checkpoint: CheckpointResult) -> Document:
    folder.mkdir(parents=True)
    path = write_results(make_run(checkpoint, problem="wordstat"), folder)
    document: Document = json.loads(path.read_text())
    return document


def _write(path: Path, document: Document) -> Path:
    text = json.dumps(document).replace(str(INFINITE), "1e999")
    text = text.replace(json.dumps(DEEP), "[" * 10_000 + "]" * 10_000)
    path.write_text(text)
    return path


@pytest.fixture
def shards(tmp_path: Path) -> tuple[Document, Document]:
    """Two shards: checkpoint_1 passes, checkpoint_2 fails a Core test."""
    good = _shard(tmp_path / "one", make_checkpoint("checkpoint_1", make_test("a", Status.PASSED)))
    broken = make_checkpoint(
        "checkpoint_2", make_test("b", Status.PASSED), make_test("c", Status.FAILED, Group.CORE)
    )
    return good, _shard(tmp_path / "two", broken)


def _forge_pass(document: Document) -> None:
    """What a forger writes: every verdict passed, every count left honest."""
    document["passed"] = True
    document["totals"]["checkpoints_passed"] = document["totals"]["checkpoints"]
    for problem in document["problems"]:
        problem["passed"] = True
        for checkpoint in problem["checkpoints"]:
            checkpoint["passed"] = True


def test_a_forged_pass_in_a_shard_is_merged_as_failed(
    tmp_path: Path, shards: tuple[Document, Document]
) -> None:
    _, forged = shards
    _forge_pass(forged)
    _write(tmp_path / "two" / "results.json", forged)

    run = run_cli("merge", tmp_path / "one", tmp_path / "two", "--output", "merged", cwd=tmp_path)

    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert "Verdict: FAILED" in run.stdout
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert merged["passed"] is False
    assert [c["passed"] for c in merged["problems"][0]["checkpoints"]] == [True, False]
    assert merged["totals"]["checkpoints_passed"] == 1
    assert merged["totals"]["groups"]["Core"]["failed"] == 1


def test_a_forged_pass_is_failed_in_its_summary(
    tmp_path: Path, shards: tuple[Document, Document]
) -> None:
    _, forged = shards
    _forge_pass(forged)
    path = _write(tmp_path / "two" / "results.json", forged)

    run = run_cli("summary", path, cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    assert "FAILED" in run.stdout and "PASSED" not in run.stdout


def _checkpoint_of(document: Document) -> Document:
    checkpoint: Document = document["problems"][0]["checkpoints"][0]
    return checkpoint


def _set_first_test(field: str, value: Any) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        _checkpoint_of(document)["tests"][0][field] = value

    return change


def _nest(document: Document) -> None:
    document["tool_versions"] = {"deep": DEEP}


def _change(field: str, value: Any) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        _checkpoint_of(document)[field] = value

    return change


def _more_passed_than_total(document: Document) -> None:
    _checkpoint_of(document)["groups"]["Core"]["passed"] = 5


def _negative(document: Document) -> None:
    _checkpoint_of(document)["groups"]["Core"]["failed"] = -1


def _disagreeing_counts(document: Document) -> None:
    """Self-consistent counts that are not those of the tests listed."""
    core = _checkpoint_of(document)["groups"]["Core"]
    core.update(passed=2, failed=0, total=2, pass_rate=1.0)
    _checkpoint_of(document)["totals"].update(passed=2, failed=0, total=2, pass_rate=1.0)


def _duplicate_test(document: Document) -> None:
    tests = _checkpoint_of(document)["tests"]
    tests[1]["id"] = tests[0]["id"]


def _policy(document: Document) -> None:
    document["policy"] = "anything-goes"


IMPOSSIBLE: dict[str, tuple[Callable[[Document], None], str]] = {
    "passed > total": (
        _more_passed_than_total,
        "problems[0].checkpoints[0].groups.Core.total",
    ),
    "negative count": (_negative, "problems[0].checkpoints[0].groups.Core.failed"),
    "counts not the tests'": (_disagreeing_counts, "problems[0].checkpoints[0].groups.Core"),
    "duration 1e999": (
        _set_first_test("duration_s", INFINITE),
        "problems[0].checkpoints[0].tests[0].duration_s",
    ),
    "absurd duration": (
        _change("duration_s", 1e12),
        "problems[0].checkpoints[0].duration_s",
    ),
    "date that does not parse": (
        _change("started_at", "yesterday at noon"),
        "problems[0].checkpoints[0].started_at",
    ),
    "3.0 as a line": (
        _set_first_test("line", 3.0),
        "problems[0].checkpoints[0].tests[0].line",
    ),
    "true as a line": (
        _set_first_test("line", True),
        "problems[0].checkpoints[0].tests[0].line",
    ),
    "unknown status": (
        _set_first_test("status", "passed-ish"),
        "problems[0].checkpoints[0].tests[0].status",
    ),
    "unknown group": (
        _set_first_test("group", "Bonus"),
        "problems[0].checkpoints[0].tests[0].group",
    ),
    "unknown policy": (_policy, "policy"),
    "duplicate test id": (_duplicate_test, "problems[0].checkpoints[0].tests[1].id"),
    "50 MB string": (
        _set_first_test("message", "x" * 50_000_000),
        "problems[0].checkpoints[0].tests[0].message",
    ),
    "10,000-deep nesting": (_nest, "nested too deeply"),
}


def _assert_one_clear_line(run: subprocess.CompletedProcess[str], path: Path, where: str) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"scbench-ci: error: {path}: ")
    assert where in line
    assert len(line) < 1000


@pytest.fixture
def bad_shard(
    request: pytest.FixtureRequest, tmp_path: Path, shards: tuple[Document, Document]
) -> tuple[Path, str]:
    spoil, where = IMPOSSIBLE[request.param]
    _, document = shards
    spoil(document)
    return _write(tmp_path / "two" / "results.json", document), where


@pytest.mark.parametrize("bad_shard", list(IMPOSSIBLE), indirect=True)
def test_an_impossible_shard_stops_merge(tmp_path: Path, bad_shard: tuple[Path, str]) -> None:
    path, where = bad_shard

    run = run_cli("merge", tmp_path / "one", path, "--output", "merged", cwd=tmp_path)

    _assert_one_clear_line(run, path, where)
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize("bad_shard", list(IMPOSSIBLE), indirect=True)
def test_an_impossible_results_file_has_no_summary(
    tmp_path: Path, bad_shard: tuple[Path, str]
) -> None:
    path, where = bad_shard

    run = run_cli("summary", path, cwd=tmp_path)

    _assert_one_clear_line(run, path, where)
    assert run.stdout == ""


@pytest.mark.parametrize(
    "bad_shard", ["passed > total", "duration 1e999", "3.0 as a line"], indirect=True
)
def test_an_impossible_baseline_stops_evaluate_before_it_runs(
    tmp_path: Path, bad_shard: tuple[Path, str]
) -> None:
    path, where = bad_shard
    wordstat = EXAMPLES / "wordstat"

    run = run_cli(
        "evaluate",
        "--problem",
        wordstat,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        wordstat / "solutions/checkpoint_1",
        "--output",
        "out",
        "--baseline",
        path.parent,
        cwd=tmp_path,
    )

    _assert_one_clear_line(run, path, where)
    assert not (tmp_path / "out").exists()


def test_bytes_that_are_not_utf8_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b'{"schema_version": 3, "policy": "\xff\xfe"}')

    run = run_cli("summary", path, cwd=tmp_path)

    _assert_one_clear_line(run, path, "not UTF-8 text")
