"""results.json written and read back: the typed reader is the writer's inverse."""

from __future__ import annotations

import json
import tracemalloc
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scbench_ci.executors.base import ImageRecord, MissingProgram
from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.compare import compare
from scbench_ci.results.file import (
    ResultsError,
    StoredTests,
    load_results,
    read_checkpoint,
    write_checkpoint,
    write_results,
)
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import (
    CheckpointResult,
    Failure,
    FailureKind,
    NetworkFailures,
    ProblemResult,
    RepeatCount,
    RunResult,
    ScbenchRecord,
    TestResult,
)
from scbench_ci.results.policy import GroupCounts
from scbench_ci.results.quality import QualityMeasures, QualityOutcome, Unmeasured
from scbench_ci.results.schema import schema
from scbench_ci.results.verdict import count_groups, verdict
from testing.paths import REPO_ROOT
from testing.results import (
    checkpoint_documents,
    make_checkpoint,
    make_run,
    make_test,
    measured,
)

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())
SCHEMA_V1 = json.loads((REPO_ROOT / "scbench_ci/schema/results.v1.schema.json").read_text())
SCHEMA_V2 = json.loads((REPO_ROOT / "scbench_ci/schema/results.v2.schema.json").read_text())
SCHEMA_V3 = json.loads((REPO_ROOT / "scbench_ci/schema/results.v3.schema.json").read_text())
SCHEMA_V4 = json.loads((REPO_ROOT / "scbench_ci/schema/results.v4.schema.json").read_text())
SCHEMA_V5 = json.loads((REPO_ROOT / "scbench_ci/schema/results.v5.schema.json").read_text())


def checkpoint(name: str, tests: int = 3, *, message: str = "m") -> CheckpointResult:
    results = tuple(
        TestResult(
            id=f"tests/test_{name}.py::test_{i}",
            checkpoint=name,
            group=Group.CORE if i % 2 else Group.ERROR,
            status=Status.FAILED if i % 3 == 0 else Status.PASSED,
            duration_s=0.25,
            markers=("error",) if i % 2 == 0 else (),
            message=message if i % 3 == 0 else None,
            traceback="tb" if i % 3 == 0 else None,
            file=f"tests/test_{name}.py",
            line=i + 1,
        )
        for i in range(tests)
    )
    groups = {group: GroupCounts() for group in Group}
    for test in results:
        passed = test.status is Status.PASSED
        groups[test.group] += GroupCounts(passed=int(passed), failed=int(not passed), total=1)
    return CheckpointResult(
        name=name,
        include_prior_tests=True,
        passed=verdict("core-cases", None, groups),
        failure=None,
        pytest_exit_code=1,
        duration_s=1.5,
        groups=groups,
        tests=results,
        warnings=("w",),
        submission=f"/runs/{name}",
        artifacts=f"demo/{name}",
        started_at="2026-01-01T00:00:00+00:00",
        fingerprint="ab" * 32,
        phases={"stage": 0.01, "tests": 1.2},
    )


def test_write_then_load_is_the_same_run(tmp_path: Path) -> None:
    missing = replace(
        checkpoint("checkpoint_2", 0),
        passed=False,
        failure=Failure(FailureKind.MISSING, "the submission folder /x does not exist"),
        pytest_exit_code=None,
        fingerprint=None,
        phases={},
    )
    run = RunResult(
        policy="core-cases",
        executor="docker",
        jobs=2,
        started_at="2026-01-01T00:00:00+00:00",
        duration_s=3.0,
        problems=(
            ProblemResult("demo", "/p/demo", 1, (checkpoint("checkpoint_1"), missing)),
            ProblemResult("other", "/p/other", 3, (checkpoint("checkpoint_1", 7),)),
        ),
        tool_versions={"scbench-ci": "1"},
    )
    path = write_results(run, tmp_path)
    document = json.loads(path.read_text())
    jsonschema.validate(document, SCHEMA)
    assert document["totals"]["checkpoints"] == 3
    assert document["totals"]["all"]["total"] == 10
    assert load_results(path) == run


def test_a_check_is_read_back(tmp_path: Path) -> None:
    oracle = Finding(
        Stage.ORACLE,
        Severity.ERROR,
        "demo/tests/test_checkpoint_1.py",
        3,
        "fails",
        checkpoint="checkpoint_1",
        test="tests/test_checkpoint_1.py::test_0",
    )
    slow = Finding(Stage.TIME, Severity.WARNING, "demo/tests/test_checkpoint_1.py", None, "slow")
    report = CheckReport(
        (oracle, slow), skipped=frozenset({Stage.FLAKY}), infrastructure=("demo: no daemon",)
    )
    static_only = CheckReport(
        (replace(slow, stage=Stage.STATIC, severity=Severity.ERROR),),
        skipped=frozenset(Stage) - {Stage.STATIC},
    )
    run = replace(
        make_run(checkpoint("checkpoint_1")),
        problems=(
            replace(make_run(checkpoint("checkpoint_1")).problems[0], check=report),
            ProblemResult("broken", "/p/broken", 0, (), check=static_only),
        ),
    )
    path = write_results(run, tmp_path)
    document = json.loads(path.read_text())
    jsonschema.validate(document, SCHEMA)
    demo, broken = document["problems"]
    assert demo["check"]["stages"] == {
        "static": {"errors": 0, "warnings": 0},
        "collection": {"errors": 0, "warnings": 0},
        "oracle": {"errors": 1, "warnings": 0},
        "empty": {"errors": 0, "warnings": 0},
        "flaky": None,
        "time": {"errors": 0, "warnings": 1},
    }
    assert (demo["passed"], demo["infrastructure_failure"]) == (False, True)
    assert (broken["checkpoints"], broken["passed"], broken["check"]["passed"]) == (
        [],
        False,
        False,
    )
    assert load_results(path) == run


def test_flaky_tests_repeats_and_a_comparison_are_read_back(tmp_path: Path) -> None:
    flaky = replace(
        checkpoint("checkpoint_1").tests[0],
        status=Status.FLAKY,
        reruns=2,
        repeat=RepeatCount(passed=2, runs=3),
    )
    first = replace(
        checkpoint("checkpoint_1"), tests=(flaky,), groups=count_groups([flaky], True), passed=True
    )
    baseline = make_run(replace(first, tests=(replace(flaky, status=Status.PASSED),)))
    run = replace(
        make_run(first),
        reruns=2,
        repeat=3,
        flaky_passes=True,
        problems=(replace(make_run(first).problems[0], checkpoint_order=("checkpoint_1", "x")),),
    )
    run = replace(run, comparison=compare(run, baseline, "base/results.json"))
    assert len(run.comparison.flaky) == 1  # type: ignore[union-attr]
    path = write_results(run, tmp_path)
    document = json.loads(path.read_text())
    jsonschema.validate(document, SCHEMA)
    assert document["comparison"]["totals"] == {
        "regressions": 0,
        "fixed": 0,
        "new": 0,
        "removed": 0,
        "flaky": 1,
        "verdict_changes": 0,
    }
    assert checkpoint_documents(document)[0]["groups"]["Error"]["flaky"] == 1
    assert load_results(path) == run


def test_a_version_3_document_is_read_with_its_notices_among_its_warnings(
    tmp_path: Path,
) -> None:
    warned = replace(checkpoint("checkpoint_1"), warnings=("the submission's tests was discarded",))
    run = replace(make_run(warned), scbench="paper")
    document = _version_4(json.loads(write_results(run, tmp_path).read_text()))
    document["schema_version"] = 3
    for problem in document["problems"]:
        for entry in problem["checkpoints"]:
            del entry["notices"]
    jsonschema.validate(document, SCHEMA_V3)
    path = tmp_path / "v3.json"
    path.write_text(json.dumps(document))
    assert load_results(path) == run


def test_a_checkpoint_result_of_version_3_is_read_without_notices(tmp_path: Path) -> None:
    result = checkpoint("checkpoint_1")
    path = tmp_path / "result.json"
    write_checkpoint(result, path)
    document = json.loads(path.read_text())
    del document["notices"]
    path.write_text(json.dumps(document))
    assert read_checkpoint(path, "core-cases", False, "1.0").notices == ()


def test_a_version_2_document_is_read_with_nothing_flaky_and_no_comparison(
    tmp_path: Path,
) -> None:
    run = replace(make_run(checkpoint("checkpoint_1"), checkpoint("checkpoint_2")), scbench="paper")
    document = _version_4(json.loads(write_results(run, tmp_path).read_text()))
    for key in ("reruns", "repeat", "flaky_passes", "comparison"):
        del document[key]
    document["schema_version"] = 2
    _drop_key(document, "flaky")
    for problem in document["problems"]:
        del problem["checkpoint_order"], problem["check"]
        for entry in problem["checkpoints"]:
            del entry["notices"]
            for test in entry["tests"]:
                del test["reruns"], test["repeat"]
    jsonschema.validate(document, SCHEMA_V2)
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(document))
    loaded = load_results(path)
    assert loaded == replace(
        run,
        problems=(replace(run.problems[0], checkpoint_order=("checkpoint_1", "checkpoint_2")),),
    )


def _version_7(document: dict[str, Any]) -> dict[str, Any]:
    """A document this version wrote, as version 7 wrote it: no `scbench` (the paper's rules
    decided) and no failures of the network."""
    del document["scbench"]
    for problem in document["problems"]:
        for each in problem["checkpoints"]:
            del each["network"]
            each.pop("scbench", None)
    document["schema_version"] = 7
    jsonschema.validate(document, schema(7))
    return document


def test_a_version_7_document_was_judged_by_the_papers_rules(tmp_path: Path) -> None:
    run = replace(make_run(checkpoint("checkpoint_1")), scbench="paper")
    path = tmp_path / "v7.json"
    path.write_text(json.dumps(_version_7(json.loads(write_results(run, tmp_path).read_text()))))
    assert load_results(path) == run


def test_the_rules_that_decided_are_written_and_read_back(tmp_path: Path) -> None:
    for name in ("1.0", "paper"):
        run = replace(make_run(checkpoint("checkpoint_1")), scbench=name)
        assert json.loads(write_results(run, tmp_path).read_text())["scbench"] == name
        assert load_results(tmp_path / "results.json") == run


CARGO_STDERR = "warning: spurious network error: Could not resolve host: index.crates.io"


def test_failures_of_the_network_are_written_and_derived_again_when_read(tmp_path: Path) -> None:
    """Issue #52: results.json says which failing tests could not reach the network; a file's
    claim is not believed, and a version 7 file gets them from its tests."""
    unreached = replace(make_test("test_build", Status.FAILED), message=CARGO_STDERR)
    run = make_run(make_checkpoint(make_test("test_ok", Status.PASSED), unreached))
    run = replace(
        run,
        problems=(
            replace(
                run.problems[0],
                checkpoints=(
                    replace(
                        run.problems[0].checkpoints[0],
                        network=NetworkFailures(1, ("index.crates.io",)),
                    ),
                ),
            ),
        ),
    )
    written = write_results(run, tmp_path)
    document = json.loads(written.read_text())
    (entry,) = document["problems"][0]["checkpoints"]
    assert entry["network"] == {"tests": 1, "hosts": ["index.crates.io"]}
    assert load_results(written) == run
    entry["network"] = {"tests": 5, "hosts": ["claimed.example"]}
    claimed = tmp_path / "claimed.json"
    claimed.write_text(json.dumps(document))
    assert load_results(claimed) == run
    old = tmp_path / "v7.json"
    old.write_text(json.dumps(_version_7(json.loads(written.read_text()))))
    assert load_results(old) == replace(run, scbench="paper")


def _version_6(document: dict[str, Any]) -> dict[str, Any]:
    """A document this version wrote, as version 6 wrote it: no quality."""
    document = _version_7(document)
    for problem in document["problems"]:
        for each in problem["checkpoints"]:
            del each["quality"]
    document["schema_version"] = 6
    jsonschema.validate(document, schema(6))
    return document


def test_a_version_6_document_is_read_without_quality(tmp_path: Path) -> None:
    run = replace(make_run(checkpoint("checkpoint_1")), scbench="paper")
    path = tmp_path / "v6.json"
    path.write_text(json.dumps(_version_6(json.loads(write_results(run, tmp_path).read_text()))))
    assert load_results(path) == run


_MEASURES = QualityMeasures(0.07, 0.43, 0.73, 743, 46, 54, 4, 6, "0.2.0", 1.5)


def test_a_checkpoints_quality_is_written_and_read_back(tmp_path: Path) -> None:
    measured = replace(checkpoint("checkpoint_1"), quality=QualityOutcome(_MEASURES))
    unmeasured = replace(
        checkpoint("checkpoint_2"), quality=QualityOutcome(None, reason="scb-check timed out")
    )
    run = make_run(measured, unmeasured)
    written = json.loads(write_results(run, tmp_path).read_text())
    first, second = written["problems"][0]["checkpoints"]
    assert first["quality"]["measures"]["erosion"] == 0.43
    assert second["quality"] == {
        "measures": None,
        "reason": "scb-check timed out",
        "unmeasured": {"count": 0, "files": []},
    }
    assert load_results(tmp_path / "results.json") == run


def test_the_files_left_out_and_scbench_1_0_s_figures_are_written_and_derived_again(
    tmp_path: Path,
) -> None:
    measures = replace(_MEASURES, clone_loc=53)
    partial = QualityOutcome(measures, unmeasured=Unmeasured(2, ("build/a.py", "bad\\xff.py")))
    run = make_run(replace(checkpoint("checkpoint_1"), quality=partial))
    written = json.loads(write_results(run, tmp_path).read_text())
    quality = written["problems"][0]["checkpoints"][0]["quality"]
    assert quality["unmeasured"] == {"count": 2, "files": ["build/a.py", "bad\\xff.py"]}
    assert (quality["measures"]["cloned_pct"], quality["measures"]["verbosity_flagged_pct"]) == (
        53 / 743,
        54 / 743,
    )
    assert load_results(tmp_path / "results.json") == run

    # Derived figures are derived again, whatever the file says; without the files left out
    # (written before they were recorded), they are not known.
    quality["measures"]["cloned_pct"] = 0.0
    del quality["unmeasured"]
    (tmp_path / "results.json").write_text(json.dumps(written))
    read = load_results(tmp_path / "results.json").problems[0].checkpoints[0].quality
    assert read == QualityOutcome(measures, unmeasured=None)
    assert read.measures is not None and read.measures.cloned_pct == 53 / 743


@pytest.mark.parametrize(
    ("quality", "refused"),
    [
        ({"measures": None, "reason": None}, "quality: has neither"),
        (
            {"measures": {**asdict(_MEASURES), "verbosity": 1.5}, "reason": None},
            r"quality\.measures\.verbosity: 1\.5 is greater than the maximum of 1",
        ),
        ({"measures": asdict(_MEASURES), "reason": "timed out"}, "has measures and a reason"),
        (
            {
                "measures": asdict(_MEASURES),
                "reason": None,
                "unmeasured": {"count": 1, "files": ["a.py", "b.py"]},
            },
            "quality.unmeasured: lists more files than it counts",
        ),
        (
            {
                "measures": asdict(_MEASURES),
                "reason": None,
                "unmeasured": {"count": 1, "files": ["a.py\n::error::x"]},
            },
            r"quality\.unmeasured\.files\[0\]: is not one line of printable text",
        ),
    ],
)
def test_a_quality_that_cannot_be_is_refused(
    tmp_path: Path, quality: dict[str, Any], refused: str
) -> None:
    write_results(make_run(checkpoint("checkpoint_1")), tmp_path)
    document = json.loads((tmp_path / "results.json").read_text())
    document["problems"][0]["checkpoints"][0]["quality"] = quality
    (tmp_path / "results.json").write_text(json.dumps(document))
    with pytest.raises(ResultsError, match=refused):
        load_results(tmp_path / "results.json")


def _version_5(document: dict[str, Any]) -> dict[str, Any]:
    """A document this version wrote, as version 5 wrote it: no image, the host's Python as
    `python`."""
    document = _version_6(document)
    for problem in document["problems"]:
        for each in problem["checkpoints"]:
            del each["image"]
    if "host-python" in document["tool_versions"]:
        document["tool_versions"]["python"] = document["tool_versions"].pop("host-python")
    document["schema_version"] = 5
    jsonschema.validate(document, SCHEMA_V5)
    return document


def test_a_version_5_document_is_read_without_images(tmp_path: Path) -> None:
    run = replace(make_run(checkpoint("checkpoint_1")), scbench="paper")
    run = replace(run, tool_versions={**run.tool_versions, "host-python": "3.11.2"})
    path = tmp_path / "v5.json"
    path.write_text(json.dumps(_version_5(json.loads(write_results(run, tmp_path).read_text()))))
    assert load_results(path) == run


def test_the_image_a_checkpoint_ran_in_is_read_back(tmp_path: Path) -> None:
    image = ImageRecord(
        name="ghcr.io/scbench/evaluate-env:python3.12",
        id="sha256:" + "0" * 64,
        built_from="ghcr.io/astral-sh/uv:python3.12-trixie-slim",
        toolchains="registries",
        note="built here",
        versions={"python": "Python 3.12.1", "node": "v22.21.1"},
        missing=(MissingProgram("minio", "a test that starts a MinIO server cannot"),),
    )
    run = make_run(replace(checkpoint("checkpoint_1"), image=image))
    written = json.loads(write_results(run, tmp_path).read_text())
    recorded = written["problems"][0]["checkpoints"][0]["image"]
    assert recorded["versions"]["node"] == "v22.21.1"
    assert recorded["missing"] == [
        {"program": "minio", "without": "a test that starts a MinIO server cannot"}
    ]
    assert load_results(tmp_path / "results.json") == run
    # Written before the image's missing programs were recorded: none is named.
    del written["problems"][0]["checkpoints"][0]["image"]["missing"]
    (tmp_path / "results.json").write_text(json.dumps(written))
    read = load_results(tmp_path / "results.json").problems[0].checkpoints[0].image
    assert read == replace(image, missing=())


def _version_4(document: dict[str, Any]) -> dict[str, Any]:
    """A document this version wrote, as version 4 wrote it: without a history."""
    document = _version_5(document)
    del document["history"], document["trends"]
    document["schema_version"] = 4
    jsonschema.validate(document, SCHEMA_V4)
    return document


def test_a_version_4_document_is_read_without_a_history(tmp_path: Path) -> None:
    run = replace(make_run(checkpoint("checkpoint_1")), scbench="paper")
    path = tmp_path / "v4.json"
    path.write_text(json.dumps(_version_4(json.loads(write_results(run, tmp_path).read_text()))))
    assert load_results(path) == run


def _drop_key(document: object, key: str) -> None:
    if isinstance(document, dict):
        document.pop(key, None)
        for value in document.values():
            _drop_key(value, key)
    elif isinstance(document, list):
        for value in document:
            _drop_key(value, key)


def test_a_checkpoints_tests_are_read_from_its_file_each_time(tmp_path: Path) -> None:
    result = checkpoint("checkpoint_1", 5)
    stored = write_checkpoint(result, tmp_path / "result.json")
    assert isinstance(stored.tests, StoredTests)
    assert len(stored.tests) == 5
    assert tuple(stored.tests) == result.tests
    assert stored.tests[2] == result.tests[2]
    loaded = read_checkpoint(tmp_path / "result.json", "core-cases", False, "1.0")
    assert replace(loaded, tests=stored.tests) == stored


def _peak_writing(folder: Path, checkpoints: int) -> int:
    """The memory peak of writing the results.json of a run of `checkpoints` checkpoints of 500
    tests each (with 2 KB messages), whose tests were written to their own files first."""
    folder.mkdir()
    stored = []
    for index in range(checkpoints):
        result = checkpoint(f"c{index}", 500, message="x" * 2000)
        stored.append(write_checkpoint(result, folder / f"c{index}.json"))
    run = make_run(*stored)
    tracemalloc.start()
    path = write_results(run, folder)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert load_results(path).problems[0].checkpoints[-1].tests == tuple(stored[-1].tests)
    return peak


@pytest.mark.slow
def test_writing_results_json_holds_one_checkpoint_at_a_time(tmp_path: Path) -> None:
    few, many = _peak_writing(tmp_path / "few", 2), _peak_writing(tmp_path / "many", 8)
    assert many < few * 1.25, (few, many)


def test_a_version_1_document_is_read_as_one_problem(tmp_path: Path) -> None:
    document = {
        "schema_version": 1,
        "problem": {"name": "wordstat", "version": 2},
        "policy": "core-cases",
        "policy_description": "every Core test passes",
        "passed": True,
        "infrastructure_failure": False,
        "executor": "docker",
        "started_at": "2026-01-01T00:00:00+00:00",
        "duration_s": 2.0,
        "tool_versions": {},
        "checkpoints": [
            {
                "name": "checkpoint_1",
                "include_prior_tests": True,
                "passed": True,
                "failure": None,
                "pytest_exit_code": 0,
                "duration_s": 1.0,
                "totals": {"passed": 1, "failed": 0, "skipped": 0, "total": 1, "pass_rate": 1.0},
                "groups": {
                    group.value: {
                        "passed": int(group is Group.CORE),
                        "failed": 0,
                        "skipped": 0,
                        "total": int(group is Group.CORE),
                        "pass_rate": 1.0 if group is Group.CORE else None,
                    }
                    for group in Group
                },
                "warnings": [],
                "tests": [
                    {
                        "id": "tests/test_checkpoint_1.py::test_a",
                        "checkpoint": "checkpoint_1",
                        "group": "Core",
                        "status": "passed",
                        "duration_s": 0.1,
                        "markers": [],
                        "message": None,
                        "details": None,
                        "file": "tests/test_checkpoint_1.py",
                        "line": 3,
                    }
                ],
            }
        ],
    }
    jsonschema.validate(document, SCHEMA_V1)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    run = load_results(path)
    assert (run.passed, run.jobs, [p.name for p in run.problems]) == (True, 1, ["wordstat"])
    assert run.problems[0].version == 2
    assert run.problems[0].checkpoints[0].tests[0].status is Status.PASSED


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"\xff", "not UTF-8 text"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"schema_version": true}', "schema_version true is not supported"),
        (b'{"schema_version": 3, "problems": []}', "not a scbench-ci results file: the document"),
    ],
)
def test_what_is_not_a_results_file_is_one_error(
    tmp_path: Path, content: bytes, error: str
) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(content)
    with pytest.raises(ResultsError, match=error):
        load_results(path)


def test_a_folder_is_not_a_results_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="a folder, not a results file"):
        load_results(tmp_path)


def test_a_checkpoints_result_is_judged_again_by_the_policy_it_is_read_for(tmp_path: Path) -> None:
    """`--skip-existing`'s earlier result.json: its `passed` is never read."""
    result = checkpoint("checkpoint_1", 3)  # Core: 1 passed; Error: 1 passed, 1 failed
    path = tmp_path / "result.json"
    write_checkpoint(result, path)
    document = json.loads(path.read_text())
    document["passed"] = False
    path.write_text(json.dumps(document))
    assert read_checkpoint(path, "core-cases", False, "1.0").passed is True
    document["passed"] = True
    path.write_text(json.dumps(document))
    assert read_checkpoint(path, "all-cases", False, "1.0").passed is False


def test_a_key_in_an_error_is_shown_escaped(tmp_path: Path) -> None:
    document = json.loads(write_results(make_run(checkpoint("checkpoint_1")), tmp_path).read_text())
    document["tool_versions"] = {"\x1b[2J\x1b[H": 5}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ResultsError) as caught:
        load_results(path)
    assert '["\\u001b[2J\\u001b[H"]' in str(caught.value)
    assert "\x1b" not in str(caught.value)


def test_the_baseline_s_code_quality_in_a_comparison_is_read_back(tmp_path: Path) -> None:
    measured_before = measured(checkpoint("checkpoint_1"), 0.0661, 0.22)
    unmeasured = checkpoint("checkpoint_2")
    run = make_run(checkpoint("checkpoint_1"), unmeasured)
    run = replace(run, comparison=compare(run, make_run(measured_before, unmeasured), "base"))
    path = write_results(run, tmp_path)
    document = json.loads(path.read_text())
    jsonschema.validate(document, SCHEMA)
    deltas = document["comparison"]["checkpoints"]
    assert deltas[0]["quality_before"] == {"verbosity": 0.0661, "erosion": 0.22}
    assert "quality_before" not in deltas[1]
    assert load_results(path).comparison == run.comparison


def test_skipped_tests_out_of_the_totals_by_1_0_without_an_inventory_are_read_back(
    tmp_path: Path,
) -> None:
    """SCBench 1.0 leaves skipped tests out of the totals when a `-k` turned its inventory off;
    the file written so is read back, and a file whose totals leave them out otherwise is not."""
    tests = (make_test("test_ok", Status.PASSED), make_test("test_later", Status.SKIPPED))
    groups = count_groups(tests, flaky_passes=False, skipped_in_totals=False)
    record = ScbenchRecord(False, 2, None, inventory=False)
    one = replace(make_checkpoint(*tests), groups=groups, passed=True, scbench=record)
    run = make_run(one)
    written = write_results(run, tmp_path)
    assert json.loads(written.read_text())["problems"][0]["checkpoints"][0]["totals"]["total"] == 1
    assert load_results(written) == run
    document = json.loads(written.read_text())
    document["problems"][0]["checkpoints"][0]["scbench"]["inventory"] = True
    claimed = tmp_path / "claimed.json"
    claimed.write_text(json.dumps(document))
    with pytest.raises(ResultsError, match=r"totals.total: 1, but passed 1 \+ failed 0"):
        load_results(claimed)
