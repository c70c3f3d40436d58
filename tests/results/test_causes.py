"""The cause of a failing test (results/causes.py): the exception a submission's stderr or a
compared output ends with, found inside pytest's message, else the message's first line."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from scbench_ci.job.reports import FAILING, Status
from scbench_ci.results.causes import (
    MAX_CAUSE_CHARS,
    Source,
    cause_of,
    exception_line,
    first_line,
)
from scbench_ci.results.file import load_results
from scbench_ci.results.model import TestResult
from testing.golden import GOLDEN
from testing.results import make_test

STDERR = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/greet.py", line 6, in <module>\n'
    "    import greeting_helpers\n"
    "ModuleNotFoundError: No module named 'greeting_helpers'\n"
)
"""What Python writes when a submission imports a module it does not ship."""


def failed(message: str | None, traceback: str | None = None) -> TestResult:
    return replace(make_test("test_x", Status.FAILED), message=message, traceback=traceback)


def test_the_stderr_of_a_completed_process_names_the_cause() -> None:
    message = (
        "assert 1 == 0\n +  where 1 = CompletedProcess(args=['uv', 'run', 'greet.py'], "
        f"returncode=1, stdout='', stderr={STDERR!r}).returncode"
    )
    cause = cause_of(failed(message))
    assert cause.text == "ModuleNotFoundError: No module named 'greeting_helpers'"
    assert cause.source is Source.STDERR
    assert cause.output == STDERR


def test_a_bytes_stderr_and_a_stderr_without_a_traceback() -> None:
    as_bytes = f"assert 2 == 0\n + where 2 = CompletedProcess(stderr={STDERR.encode()!r})"
    assert cause_of(failed(as_bytes)).text.startswith("ModuleNotFoundError")
    plain = "assert 2 == 0\n + where 2 = CompletedProcess(stderr='usage: greet NAME\\nbad flag\\n')"
    cause = cause_of(failed(plain))
    assert (cause.text, cause.source) == ("bad flag", Source.STDERR)


def test_an_empty_stderr_leaves_the_message() -> None:
    message = "assert 1 == 0\n + where 1 = CompletedProcess(args=[], stdout='', stderr='')"
    cause = cause_of(failed(message))
    assert (cause.text, cause.source, cause.output) == ("assert 1 == 0", Source.MESSAGE, None)


def test_a_compared_output_with_a_traceback_names_the_cause() -> None:
    message = f"assert (1, {STDERR!r}) == (2, 'usage: greet NAME...\\n')"
    cause = cause_of(failed(message))
    assert cause.text == "ModuleNotFoundError: No module named 'greeting_helpers'"
    assert cause.source is Source.OUTPUT


def test_the_cause_can_be_in_the_traceback_only() -> None:
    traceback = f"E   assert 1 == 0\nE    + where 1 = CompletedProcess(stderr={STDERR!r})"
    cause = cause_of(failed("assert 1 == 0", traceback))
    assert cause.source is Source.STDERR


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ("AssertionError: assert 3 == 4\n  more lines", "AssertionError: assert 3 == 4"),
        ("\n\n  FileNotFoundError: x.csv  \n", "FileNotFoundError: x.csv"),
        (None, "(no message)"),
        ("", "(no message)"),
        # No whole literal: left as the message says it.
        ("stderr='Traceback (most recent call last): cut", "stderr='Traceback"),
    ],
)
def test_otherwise_the_message_s_first_line(message: str | None, text: str) -> None:
    cause = cause_of(failed(message))
    assert cause.text.startswith(text) and cause.source is Source.MESSAGE


def test_the_first_line_is_the_first_of_splitlines_that_is_not_blank() -> None:
    # first_line does not split the whole message; it must agree with splitlines() on every
    # character that ends a line or is whitespace.
    breaks = [chr(code) for code in range(0x3000 + 1) if len(f"a{chr(code)}b".splitlines()) > 1]
    spaces = [chr(code) for code in range(0x3000 + 1) if chr(code).isspace()]
    pieces = ["x", "y z", "\r\n", *breaks, *spaces]
    for first in pieces:
        for second in pieces:
            for third in pieces:
                text = first + second + third
                lines = [line.strip() for line in text.splitlines() if line.strip()]
                assert first_line(text) == (lines[0] if lines else ""), repr(text)


def test_a_long_cause_is_one_capped_line() -> None:
    stderr = "Traceback (most recent call last):\nValueError: " + "v" * 5000 + "\n"
    cause = cause_of(failed(f"CompletedProcess(stderr={stderr!r})"))
    assert len(cause.text) == MAX_CAUSE_CHARS and cause.text.endswith("…")
    assert "\n" not in cause.text


def test_the_last_of_chained_tracebacks_is_the_cause() -> None:
    chained = (
        f"{STDERR}\nDuring handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "x", line 1\nSystemExit: 3\n'
    )
    assert exception_line(chained) == "SystemExit: 3"
    assert exception_line("no traceback here") is None


def test_the_missing_module_golden_has_one_cause_for_its_command_failures() -> None:
    """The golden run of a submission importing a module it does not ship (scripts/golden.py
    missing_module): every test whose message shows the submission's stderr or output has the
    ModuleNotFoundError as its cause."""
    run = load_results(GOLDEN / "missing_module" / "results.json")
    ((_, checkpoint),) = run.checkpoints()
    failing = [test for test in checkpoint.tests if test.status in FAILING]
    causes = [cause_of(test) for test in failing]
    shown = [cause for cause in causes if cause.source is not Source.MESSAGE]
    assert len(shown) >= 5
    assert {cause.text for cause in shown} == {
        "ModuleNotFoundError: No module named 'greeting_helpers'"
    }
    document = json.loads((GOLDEN / "missing_module" / "results.json").read_text())
    assert "greeting_helpers" in json.dumps(document)  # from the real run, not made here
