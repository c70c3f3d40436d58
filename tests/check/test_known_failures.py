from __future__ import annotations

import shutil
from pathlib import Path

from scbench_ci.check.known_failures import (
    KnownFailure,
    known_failure_findings,
    parse_known_failures,
    read_known_failures,
)
from scbench_ci.problem.load import load_problem
from scbench_ci.results.findings import Finding, Severity, Stage
from testing.paths import CHECK_REPO_PROBLEMS

FILE = "demo/tests/known_failures.txt"
CHECKPOINTS = {"test_checkpoint_1.py": "checkpoint_1", "test_checkpoint_2.py": "checkpoint_2"}


def static_error(line: int | None, message: str) -> Finding:
    return Finding(Stage.STATIC, Severity.ERROR, FILE, line, message)


def test_entries_with_their_lines_and_reasons() -> None:
    text = (
        "# Known failures of the reference solutions.\n"
        "\n"
        "tests/test_checkpoint_1.py::test_a  # the spec is ambiguous\n"
        "   # an indented comment\n"
        "tests/test_checkpoint_2.py::TestB::test_b[two words-#1]\t#\tsee issue #27  \n"
    )
    assert parse_known_failures(text, FILE, CHECKPOINTS) == (
        [
            KnownFailure(
                "tests/test_checkpoint_1.py::test_a",
                "the spec is ambiguous",
                "checkpoint_1",
                FILE,
                3,
            ),
            KnownFailure(
                "tests/test_checkpoint_2.py::TestB::test_b[two words-#1]",
                "see issue #27",
                "checkpoint_2",
                FILE,
                5,
            ),
        ],
        [],
    )


def test_malformed_lines_are_errors_and_repeats_warnings() -> None:
    text = (
        "tests/test_checkpoint_1.py::test_a\n"
        "tests/test_checkpoint_1.py::test_b  #   \n"
        "tests/test_checkpoint_1.py::test_c#no whitespace before the mark\n"
        "test_checkpoint_1.py::test_d  # not from the workspace root\n"
        "tests/test_checkpoint_1.py  # a file, not a test\n"
        "tests/test_checkpoint_3.py::test_e  # no such checkpoint\n"
        "tests/test_checkpoint_1.py::test_f  # fine\n"
        "tests/test_checkpoint_1.py::test_f  # again\n"
    )
    entries, findings = parse_known_failures(text, FILE, CHECKPOINTS)
    assert [known.node_id for known in entries] == ["tests/test_checkpoint_1.py::test_f"]
    fix = "write '<test id>  # <reason>'"
    assert findings == [
        static_error(1, f"'tests/test_checkpoint_1.py::test_a' gives no reason: {fix}"),
        static_error(2, f"'tests/test_checkpoint_1.py::test_b  #' gives no reason: {fix}"),
        static_error(
            3,
            "'tests/test_checkpoint_1.py::test_c#no whitespace before the mark' gives no "
            f"reason: {fix}",
        ),
        static_error(
            4, "'test_checkpoint_1.py::test_d' is not a test id like tests/<file>::<name>"
        ),
        static_error(5, "'tests/test_checkpoint_1.py' is not a test id like tests/<file>::<name>"),
        static_error(
            6,
            "'tests/test_checkpoint_3.py::test_e' is in tests/test_checkpoint_3.py, no "
            "checkpoint's test file",
        ),
        Finding(
            Stage.STATIC,
            Severity.WARNING,
            FILE,
            8,
            "'tests/test_checkpoint_1.py::test_f' is listed already, at line 7",
            checkpoint="checkpoint_1",
            test="tests/test_checkpoint_1.py::test_f",
        ),
    ]


def test_read_from_the_problem(tmp_path: Path) -> None:
    root = Path(shutil.copytree(CHECK_REPO_PROBLEMS / "known_failure_passes", tmp_path / "demo"))
    problem = load_problem(root)
    entries, findings = read_known_failures(problem)
    assert findings == []
    assert [(known.node_id, known.line, known.file) for known in entries] == [
        ("tests/test_checkpoint_1.py::test_each_word", 2, FILE),
        ("tests/test_checkpoint_1.py::test_one_word", 3, FILE),
    ]
    entries, _ = read_known_failures(problem, relative_to=tmp_path.parent)
    assert entries[0].file == f"{tmp_path.name}/{FILE}"

    (root / "tests/known_failures.txt").write_bytes(b"tests/test_checkpoint_1.py::x  # caf\xe9\n")
    assert read_known_failures(problem) == ([], [static_error(None, "not UTF-8 text (byte 36)")])

    (root / "tests/known_failures.txt").unlink()
    assert read_known_failures(problem) == ([], [])


def test_what_the_oracle_runs_say_of_the_list() -> None:
    listed = [
        KnownFailure("tests/test_checkpoint_1.py::still_fails", "r", "checkpoint_1", FILE, 1),
        KnownFailure("tests/test_checkpoint_1.py::passes_now", "r", "checkpoint_1", FILE, 2),
        KnownFailure("tests/test_checkpoint_2.py::renamed", "r", "checkpoint_2", FILE, 3),
    ]
    outcomes = {
        "tests/test_checkpoint_1.py::still_fails": False,
        "tests/test_checkpoint_1.py::passes_now": True,
        "tests/test_checkpoint_1.py::fails_unlisted": False,
    }
    assert known_failure_findings(listed, outcomes) == [
        Finding(
            Stage.ORACLE,
            Severity.WARNING,
            FILE,
            2,
            "tests/test_checkpoint_1.py::passes_now passes now: remove it from "
            "tests/known_failures.txt",
            checkpoint="checkpoint_1",
            test="tests/test_checkpoint_1.py::passes_now",
        ),
        Finding(
            Stage.ORACLE,
            Severity.WARNING,
            FILE,
            3,
            "tests/test_checkpoint_2.py::renamed is listed as a known failure, but no oracle run "
            "has such a test",
            checkpoint="checkpoint_2",
            test="tests/test_checkpoint_2.py::renamed",
        ),
    ]
