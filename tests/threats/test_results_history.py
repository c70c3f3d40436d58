"""The history a results.json carries, from a file nobody vouches for (a baseline, an artifact,
a shard): read by the same strict reader as the rest of the file.

Each attack (wrong types, too many runs, too large, nested too deep, ids with control or bidi
characters, outcomes that do not match their ids, counts that do not add up, trends that do not
follow from the history) is one line naming the file and the field, exit 2, no traceback, the
file's text never shown raw; as a `--baseline`, before anything runs and with nothing written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.job.reports import Status
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import write_results
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.results import make_checkpoint, make_run, make_test

pytestmark = pytest.mark.slow

Document = dict[str, Any]
KEY = "demo/checkpoint_1"
DEEP = "written as lists nested 10,000 deep"
QUALITY = {"verbosity": 0.1, "erosion": 0.3}
NESTED: Any = []
for _ in range(40):
    NESTED = [NESTED]


@pytest.fixture
def document(tmp_path: Path) -> Document:
    """A results.json whose history holds two runs."""
    first = make_run(make_checkpoint(make_test("a", Status.PASSED)))
    second = make_run(
        make_checkpoint(make_test("a", Status.FAILED)), started_at="2026-01-02T00:00:00+00:00"
    )
    run = with_history(second, 30, "abcdef1", carried(with_history(first, 30, None, ())))
    folder = tmp_path / "made"
    folder.mkdir()
    loaded: Document = json.loads(write_results(run, folder).read_text())
    return loaded


def _history(document: Document) -> Document:
    history: Document = document["history"]
    return history


def _record(document: Document) -> Document:
    record: Document = _history(document)["runs"][0]["checkpoints"][KEY]
    return record


def _set(*path: str | int, value: Any) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        target = document
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return change


def _rename_key(document: Document) -> None:
    history = _history(document)
    history["tests"] = {"no-slash": history["tests"][KEY]}
    for run in history["runs"]:
        run["checkpoints"] = {"no-slash": run["checkpoints"][KEY]}


def _too_many_runs(document: Document) -> None:
    history = _history(document)
    history["window"] = 100
    history["runs"] = history["runs"] * 51


def _too_large(document: Document) -> None:
    ids = [f"tests/test_x.py::{'t' * 440}_{number}" for number in range(5000)]
    _history(document)["tests"].update({"big/one": ids, "big/two": ids})


def _too_many_ids(document: Document) -> None:
    _history(document)["tests"][KEY] = [f"tests/t.py::t{n}" for n in range(5001)]


ATTACKS: list[tuple[str, Callable[[Document], None], str]] = [
    ("window as text", _set("history", "window", value="30"), "history.window: '30' is not"),
    ("more runs than the window", _set("history", "window", value=1), "history.runs: 2 runs"),
    ("more than 100 runs", _too_many_runs, "history.runs: "),
    ("over the byte cap", _too_large, "bytes of history, more than the 4194304 allowed"),
    ("more than 5000 ids", _too_many_ids, "history.tests"),
    (
        "an escape sequence in an id",
        _set("history", "tests", KEY, 0, value="tests/t.py::a\x1b[2J\x1b[31mPASSED"),
        "history.tests",
    ),
    (
        "a bidi override in an id",
        _set("history", "tests", KEY, 0, value="tests/t.py::a\u202eDESSAP"),
        # The schema's name pattern refuses it, before the reader's own check.
        'history.tests["demo/checkpoint_1"][0]: holds \\u202e, a character that is not printable',
    ),
    ("a key that names no checkpoint", _rename_key, "not a `problem/checkpoint` key"),
    (
        "an unknown outcome letter",
        _set("history", "runs", 0, "checkpoints", KEY, "outcomes", value="Z"),
        ".outcomes: 'Z' does not match",
    ),
    (
        "outcomes longer than the ids",
        _set("history", "runs", 0, "checkpoints", KEY, "outcomes", value="PP"),
        "outcomes: 2 outcomes for 1 test ids",
    ),
    (
        "an id given twice",
        _set("history", "tests", KEY, value=["tests/t.py::a", "tests/t.py::a"]),
        "[1]: given twice",
    ),
    (
        "counts that do not add up",
        _set("history", "runs", 0, "checkpoints", KEY, "groups", "Core", "total", value=7),
        "groups.Core.total: 7, but passed + failed + skipped = 1",
    ),
    (
        "a date that is none",
        _set("history", "runs", 1, "started_at", value="yesterday"),
        "history.runs[1].started_at: not a date",
    ),
    ("a commit that is none", _set("history", "runs", 1, "commit", value="HEAD~1"), "commit"),
    ("a field of its own", _set("history", "runs", 0, "extra", value=1), "history.runs[0]"),
    ("nested 10,000 deep", _set("history", "runs", 0, "commit", value=DEEP), "nested too deeply"),
    (
        "nested past the cap",
        _set("history", "runs", 0, "commit", value=NESTED),
        "history.runs[0].commit[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]",
    ),
    ("trends that do not follow", _set("trends", "runs", value=99), "trends: not what its"),
    (
        "a verbosity over 1",
        _set(
            "history", "runs", 0, "checkpoints", KEY, "quality", value=QUALITY | {"verbosity": 1.5}
        ),
        f'history.runs[0].checkpoints["{KEY}"].quality.verbosity: 1.5 is greater than',
    ),
    (
        "an erosion as text",
        _set(
            "history", "runs", 0, "checkpoints", KEY, "quality", value=QUALITY | {"erosion": "0.3"}
        ),
        f"history.runs[0].checkpoints[\"{KEY}\"].quality.erosion: '0.3' is not",
    ),
    (
        "a quality without its erosion",
        _set("history", "runs", 0, "checkpoints", KEY, "quality", value={"verbosity": 0.1}),
        "'erosion' is a required property",
    ),
    (
        "a quality the trends do not follow",
        _set("history", "runs", 0, "checkpoints", KEY, "quality", value=QUALITY),
        "trends: not what its",
    ),
]


def _write(path: Path, document: Document) -> Path:
    text = json.dumps(document).replace(json.dumps(DEEP), "[" * 10_000 + "]" * 10_000)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("change", "error"), [attack[1:] for attack in ATTACKS], ids=[a[0] for a in ATTACKS]
)
def test_a_bad_history_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, document: Document, change: Callable[[Document], None], error: str
) -> None:
    change(document)
    path = _write(tmp_path / "results.json", document)

    done = run_cli("history", path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"scbench-ci: error: {path}: ")
    assert error in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
    assert len(done.stderr) < 1000


def test_a_bad_history_in_a_baseline_stops_the_run_before_it_starts(
    tmp_path: Path, document: Document
) -> None:
    _set("history", "runs", 0, "checkpoints", KEY, "outcomes", value="PP")(document)
    baseline = _write(tmp_path / "baseline.json", document)
    wordstat = EXAMPLES / "wordstat"

    done = run_cli(
        "evaluate",
        "--problem",
        wordstat,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        wordstat / "solutions" / "checkpoint_1",
        "--executor",
        "local",
        "--baseline",
        baseline,
        "--output",
        tmp_path / "out",
    )

    assert done.returncode == 2, done.stdout + done.stderr
    # The local executor's warning may come first; the error is the last line, and nothing ran.
    assert done.stderr.splitlines()[-1] == (
        f'scbench-ci: error: {baseline}: history.runs[0].checkpoints["{KEY}"].outcomes: '
        "2 outcomes for 1 test ids"
    )
    assert not (tmp_path / "out").exists()
