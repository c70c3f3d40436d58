"""Every loader of untrusted bytes, fuzzed: nothing but the loader's own error ever escapes.

The results.json reader (`ResultsError`), pytest's two reports (a reason, never an exception),
`tests/known_failures.txt` (findings) and config.yaml (`ProblemError`). Each starts from a valid
document and mutates it: a value replaced by one of another type, a huge, negative or non-finite
number, a long string, deep nesting; a key dropped; bytes cut, inserted or not UTF-8.
Derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scbench_ci.check.known_failures import parse_known_failures, read_known_failures
from scbench_ci.foundation.errors import ProblemError
from scbench_ci.job.reports import Reports, read_reports
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.summary import render_summary
from scbench_ci.pipeline.merge import Shard, merge_runs
from scbench_ci.problem.load import check_problem, load_problem
from scbench_ci.results.compare import compare
from scbench_ci.results.documents import checkpoint_to_json
from scbench_ci.results.fail_on import FAIL_ON
from scbench_ci.results.file import ResultsError, load_results, read_checkpoint, write_results
from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
from scbench_ci.results.model import ProblemResult, RunResult
from scbench_ci.results.verdict import count_groups, verdict
from scbench_ci.trust.seal import ReportFiles
from testing.paths import EXAMPLES
from testing.results import make_run
from tests.results.test_file import checkpoint

pytestmark = pytest.mark.slow

FUZZ = settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        [
            "passed",
            "failed",
            "flaky",
            "Core",
            "core-cases",
            "interrupted",
            "2026-01-01T00:00:00+00:00",
            "2026-13-45",
            "\ud800",
            "x" * 5000,
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


def _paths(value: Any, where: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield where
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*where, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*where, index))


@st.composite
def changed(draw: st.DrawFn, document: Any) -> Any:
    """The document with a few values replaced, dropped, nested or negated."""
    document = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(_paths(document))[1:]
        if not paths:
            break
        *parent_path, last = draw(st.sampled_from(paths))
        parent = document
        for step in parent_path:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "drop", "nest", "negate"]))
        if action == "drop" and isinstance(parent, dict):
            del parent[last]
        elif action == "nest":
            depth = draw(st.sampled_from([2, 40, 5000]))
            parent[last] = "NESTED" if depth == 5000 else json.loads("[" * depth + "]" * depth)
        elif action == "negate" and isinstance(parent[last], int | float):
            parent[last] = -parent[last] - 1
        else:
            parent[last] = draw(VALUES)
    return document


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> bytes:
    """The document changed, then its bytes perhaps spoiled."""
    text = json.dumps(draw(changed(document)), allow_nan=True).replace(
        '"NESTED"', "[" * 5000 + "]" * 5000
    )
    data = text.encode("utf-8", errors="surrogatepass")
    spoil = draw(st.sampled_from(["none", "none", "cut", "insert", "token"]))
    at = draw(st.integers(min_value=0, max_value=len(data)))
    if spoil == "cut":
        return data[:at]
    if spoil == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if spoil == "token":
        token = draw(st.sampled_from([b"1e999", b"-1e999", b"NaN", b"3.0", b"true", b"\xff"]))
        return data.replace(b"1.5", token, 1)
    return data


def _base_run() -> RunResult:
    """An evaluated problem compared with a baseline, and a checked one."""
    run = make_run(checkpoint("checkpoint_1"), checkpoint("checkpoint_2", 5), duration_s=1.5)
    finding = Finding(Stage.ORACLE, Severity.ERROR, "demo/tests/t.py", 3, "fails", "c1", "t")
    report = CheckReport((finding,), skipped=frozenset({Stage.FLAKY}), infrastructure=("x",))
    checked = ProblemResult("checked", "/p/checked", 2, (checkpoint("checkpoint_1", 2),))
    run = replace(run, problems=(*run.problems, replace(checked, check=report)))
    baseline = make_run(checkpoint("checkpoint_1", 4))
    return replace(run, comparison=compare(run, baseline, "base/results.json"))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def results_document(scratch: Path) -> Any:
    return json.loads(write_results(_base_run(), scratch).read_text())


@FUZZ
@given(data=st.data())
def test_the_results_reader_raises_only_its_own_error(
    data: st.DataObject, results_document: Any, scratch: Path
) -> None:
    path = scratch / "fuzzed.json"
    path.write_bytes(data.draw(mutated(results_document)))
    try:
        run = load_results(path)
    except ResultsError as error:
        assert "\n" not in str(error)
        return
    # What it accepts is judged again from its tests, and every stage after it can use it.
    for _, result in run.checkpoints():
        groups = count_groups(result.tests, run.flaky_passes)
        assert result.groups == groups
        assert result.passed == verdict(run.policy, result.failure, groups)
    # merge refuses a `check` run's results (its own UsageError); the base run holds one.
    checked = any(problem.check is not None for problem in run.problems)
    merged = run if checked else merge_runs([Shard(str(path), run)])
    compared = replace(merged, comparison=compare(merged, run, str(path)))
    for fail_on in FAIL_ON:
        render_summary(compared, fail_on=fail_on)
        render_report(compared, path, fail_on=fail_on)
    again = scratch / "again"
    again.mkdir(exist_ok=True)
    assert load_results(write_results(run, again)) == run


@FUZZ
@given(data=st.data())
def test_the_checkpoint_reader_raises_only_its_own_error(
    data: st.DataObject, scratch: Path
) -> None:
    path = scratch / "result.json"
    path.write_bytes(data.draw(mutated(checkpoint_to_json(checkpoint("checkpoint_1", 4)))))
    try:
        read_checkpoint(path, "core-cases", False, "1.0")
    except ResultsError as error:
        assert "\n" not in str(error)


PYTEST_REPORT = {
    "exitcode": 1,
    "collectors": [{"nodeid": "tests/t.py", "outcome": "failed", "longrepr": "boom"}],
    "tests": [
        {
            "nodeid": "tests/t.py::ok",
            "lineno": 1,
            "outcome": "passed",
            "markers": ["functionality"],
            "setup": {"outcome": "passed", "duration": 1.5},
            "call": {"outcome": "passed", "duration": 0.5},
        },
        {
            "nodeid": "tests/t.py::bad",
            "lineno": 9,
            "outcome": "failed",
            "markers": [],
            "reruns": 1,
            "call": {
                "outcome": "failed",
                "duration": 1.5,
                "crash": {"message": "no", "lineno": 10},
                "traceback": [{"path": "tests/t.py", "lineno": 10}],
                "longrepr": "AssertionError",
            },
        },
        {
            "nodeid": "tests/t.py::skip",
            "outcome": "skipped",
            "setup": {"longrepr": "('a', 1, 'b')"},
        },
    ],
}
CTRF_REPORT = {
    "results": {
        "tests": [
            {"name": "tests/t.py::ok", "status": "passed", "tags": ["functionality"]},
            {"name": "tests/t.py::bad", "status": "failed", "message": "no"},
        ]
    }
}


@FUZZ
@given(data=st.data())
def test_the_report_parser_never_raises(data: st.DataObject) -> None:
    files = ReportFiles(
        ctrf=data.draw(st.none() | mutated(CTRF_REPORT)),
        pytest=data.draw(st.none() | mutated(PYTEST_REPORT)),
        problems=(),
    )
    assert isinstance(read_reports(files), Reports | str)


@pytest.fixture(scope="module")
def problem_copy(scratch: Path) -> Path:
    root = scratch / "wordstat"
    shutil.copytree(EXAMPLES / "wordstat", root, ignore=shutil.ignore_patterns("submissions"))
    return root


KNOWN_LINES = st.lists(
    st.one_of(
        st.text(max_size=40),
        st.just("tests/test_checkpoint_1.py::test_counts[error]  # a reason"),
        st.just("tests/test_checkpoint_9.py::test_x  # no such checkpoint"),
        st.just("tests/test_checkpoint_1.py::test_a"),
        st.just("# a comment"),
    ),
    max_size=6,
)


@FUZZ
@given(lines=KNOWN_LINES, junk=st.binary(max_size=12))
def test_known_failures_are_entries_or_findings(
    lines: list[str], junk: bytes, problem_copy: Path
) -> None:
    text = "\n".join(lines)
    parse_known_failures(text, "wordstat/tests/known_failures.txt", {"test_checkpoint_1.py": "c1"})
    path = problem_copy / "tests" / "known_failures.txt"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass") + junk)
    read_known_failures(load_problem(problem_copy))


CONFIG = yaml.safe_load((EXAMPLES / "wordstat" / "config.yaml").read_text())
HOSTILE_YAML = [
    b"a: &x [*x, *x]\nb: &y [*x, *x, *x]\nc: [*y, *y, *y, *y]",
    b"!!python/object/apply:os.system ['true']",
    b"name: [" * 2000,
    b": :",
    b"\tname: x",
    b"name: \xff",
    b"version: 1e999",
]


@FUZZ
@given(data=st.data())
def test_config_yaml_loads_or_is_a_problem_error(data: st.DataObject, problem_copy: Path) -> None:
    form = data.draw(st.sampled_from(["changed", "changed", "bytes", "hostile"]))
    if form == "changed":
        text = yaml.safe_dump(data.draw(changed(CONFIG)), allow_unicode=True).encode(
            "utf-8", errors="surrogatepass"
        )
    elif form == "bytes":
        text = data.draw(mutated(CONFIG))
    else:
        text = data.draw(st.sampled_from(HOSTILE_YAML))
    with tempfile.TemporaryDirectory(dir=problem_copy.parent) as folder:
        root = Path(folder) / "problem"
        shutil.copytree(problem_copy, root)
        (root / "config.yaml").write_bytes(text)
        try:
            load_problem(root)
        except ProblemError as error:
            assert "\n" not in str(error)
        check_problem(root)
