"""Every parser and scanner of untrusted text is linear or bounded: fed input built to make it
backtrack (long runs of the characters each pattern loops on, many lines, nesting), at the
largest size its readers accept, it takes at most ALLOWED_RATIO times as long as on ordinary
input of the same size (testing/cost_ratio.py: a ratio of the fastest of interleaved rounds,
never an absolute time, so a loaded machine slows both sides alike).

Today's figures for the code these tests were written against are in the CHANGELOG; each of the
quadratic scanners was thousands of times slower (minutes) at these sizes. The renderers as a
whole, on a results.json holding such text in every field, are test_render_cost.py's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from scbench_ci.check import stages
from scbench_ci.check.known_failures import parse_known_failures
from scbench_ci.executors.docker.cache import MAX_REQUIREMENTS_BYTES, requirement_names
from scbench_ci.job.reports import (
    MAX_SKIP_REPR_CHARS,
    MAX_TRACEBACK_CHARS,
    Status,
    read_reports,
)
from scbench_ci.outputs.console import headline
from scbench_ci.outputs.github.workflow import workflow_command
from scbench_ci.problem.yaml_loader import MAX_CONFIG_BYTES
from scbench_ci.results.causes import MAX_SCANNED_CHARS, cause_of, first_line
from scbench_ci.results.file import LIMITS
from scbench_ci.results.log_tail import log_tail
from scbench_ci.trust import markdown
from scbench_ci.trust.names import MAX_TEST_ID_CHARS, shown_test_id
from scbench_ci.trust.seal import ReportFiles
from scbench_ci.trust.strict_json import JsonError, parse
from scbench_ci.trust.terminal import inert, terminal_text
from testing.cost_ratio import ALLOWED_RATIO, cost_ratio
from testing.results import make_test

pytestmark = pytest.mark.slow

STRING_CHARS = LIMITS.max_string_chars
"""The longest string the strict reader takes in a results.json (a message, a log tail, ...)."""

ORDINARY_LINES = (
    "E       AssertionError: assert 'the output of the command' == 'what the spec says'\n",
    "E         - what the spec says\n",
    "E         + the output of the command\n",
    "tests/test_checkpoint_1.py:42: in test_reads_the_file[case-7]\n",
    '    result = subprocess.run(entrypoint_argv + ["--input", str(path)], text=True)\n',
    "\x1b[31mFAILED\x1b[0m tests/test_checkpoint_1.py::test_reads_the_file - Assertion\n",
)
"""What a failing test's message and log hold: words, quotes, a traceback's lines, colours."""


def sized(text: str, size: int) -> str:
    """`text` repeated, cut to `size` characters."""
    return (text * (size // len(text) + 1))[:size]


def ordinary(size: int) -> str:
    return sized("".join(ORDINARY_LINES), size)


def hostile_texts(size: int) -> dict[str, str]:
    """Text built to make a scanner of messages, logs, names or markdown backtrack or loop."""
    return {
        "escaped quotes after a traceback": sized(
            "Traceback (most recent call last):\n" + sized("'\\", size), size
        ),
        "escaped quotes after stderr=": sized("stderr=" + sized("\"\\'\\", size), size),
        "many stderr= in one literal": sized("stderr='\\" + sized(' stderr="\\', size), size),
        "spaces without a line break": "x" + " " * (size - 2) + "x",
        "tabs without a line break": "x" + "\t" * (size - 2) + "x",
        "white space around line breaks": sized(" \t\n", size),
        "line breaks": "\n" * size,
        "carriage returns": "\r" * size,
        "backticks": "`" * size,
        "code fences": sized("```\n", size),
        "escape sequences": sized("\x1b[", size),
        "bidi overrides": "\u202e" * size,
        "workflow commands": sized("  ::x::\n##[x]", size),
        "markdown specials": sized("[](*_#|~<&@", size),
        "links": sized("www.://", size),
        "list starts": sized("1.", size),
        "pytest error lines": sized("E " + " " * 60 + "\n", size),
    }


def hostile_text(size: int) -> str:
    """Every hostile text one after the other, each an equal share of `size` characters: a
    scanner that is quadratic in one of them takes (size / 17)² steps on it."""
    share = size // len(hostile_texts(1))
    return "".join(hostile_texts(share).values())


COMPARED_OUTPUTS = (
    "assert 1 == 0\n +  where 1 = CompletedProcess(args=['uv', 'run', 'main.py'], returncode=1, "
    "stdout='Traceback (most recent call last): is what it printed\\n', stderr='').returncode\n"
)
"""A message whose every literal the cause is looked for in, and found in none: what makes the
search for a cause read a message whole."""
ONE_LINE = "assert ['the first line', 'the second line', 'and so on'] == ['the first line'] "
"""pytest's message comparing two long lists: one line, read whole by what wants the first."""
ESCAPERS: dict[str, Callable[[str], object]] = {
    "markdown.text": markdown.text,
    "markdown.html_text": markdown.html_text,
    "markdown.code_span": markdown.code_span,
    "markdown.fenced": markdown.fenced,
    "markdown.cut": lambda t: markdown.cut(markdown.fenced(t), STRING_CHARS // 2),
    "markdown.ended": lambda t: markdown.ended(
        markdown.fenced(t), markdown.literal("end"), STRING_CHARS // 2, markdown.literal("cut")
    ),
    "terminal.terminal_text": terminal_text,
    "terminal.inert": inert,
    "workflow.command": lambda t: workflow_command("error", t, title=t[:1000], file=t[:1000]),
}
"""What renders free text, any string of a results.json among it (up to 1 MiB)."""


@pytest.mark.parametrize("scanner", list(ESCAPERS))
def test_escapers_are_linear(scanner: str) -> None:
    """Against the lines of a failure's report, of the same size."""
    measured = cost_ratio(ESCAPERS[scanner], ordinary(STRING_CHARS), hostile_text(STRING_CHARS))
    assert measured.ratio <= ALLOWED_RATIO, f"{scanner}: {measured}"


CAUSES: dict[str, tuple[Callable[[str], object], int, str]] = {
    "cause_of(message)": (
        lambda t: cause_of(replace(make_test("t", Status.FAILED), message=t)),
        MAX_SCANNED_CHARS,
        COMPARED_OUTPUTS,
    ),
    "cause_of(details)": (
        lambda t: cause_of(
            replace(make_test("t", Status.FAILED), message="assert 1 == 0", traceback=t)
        ),
        MAX_SCANNED_CHARS,
        COMPARED_OUTPUTS,
    ),
    "first_line": (first_line, STRING_CHARS, ONE_LINE),
    "headline": (headline, STRING_CHARS, ONE_LINE),
}
"""What looks for a failure's cause or first line: how much of a text each reads (all of what
the reader keeps of a test's message or details; any string for a first line), and the ordinary
text that makes it read all of that."""


@pytest.mark.parametrize("kind", list(hostile_texts(1)))
@pytest.mark.parametrize("scanner", list(CAUSES))
def test_the_search_for_a_cause_is_linear(scanner: str, kind: str) -> None:
    """Each hostile text alone: these stop at what they look for."""
    work, size, ordinary_text = CAUSES[scanner]
    measured = cost_ratio(work, sized(ordinary_text, size), hostile_texts(size)[kind])
    assert measured.ratio <= ALLOWED_RATIO, f"{scanner}: {measured}"


def _known_failures(text: str) -> object:
    return parse_known_failures(text, "tests/known_failures.txt", {"test_checkpoint_1.py": "c"})


def _collection_error(text: str) -> object:
    return stages._located(text), stages._error_line(text)


def _strict_json(data: bytes) -> object:
    try:
        return parse(data, LIMITS)
    except JsonError as error:
        return error


def _requirements(text: str) -> object:
    return requirement_names(text.encode())


FILE_READERS: dict[str, tuple[Callable[[str], object], int, str]] = {
    "known_failures.txt": (
        _known_failures,
        MAX_CONFIG_BYTES,
        "tests/test_checkpoint_1.py::test_x[case 1]  # spec leaves it open\n",
    ),
    "requirements.txt": (
        _requirements,
        MAX_REQUIREMENTS_BYTES,
        "requests[socks]>=2.31,<3 ; python_version >= '3.8'\n",
    ),
    "collection error": (
        _collection_error,
        MAX_TRACEBACK_CHARS,
        '  File "/workspace/.evaluation_tests/test_checkpoint_1.py", line 3\n'
        "E   SyntaxError: invalid syntax\n",
    ),
}
"""Readers of whole files a submission or a problem under review writes: each at its cap, and the
ordinary text of such a file."""
HOSTILE_FILES: dict[str, tuple[str, Callable[[int], str]]] = {
    "known_failures.txt: spaces and no `#`": (
        "known_failures.txt",
        lambda size: "t" + " " * (size - 2) + "x",
    ),
    "known_failures.txt: ` #` without a reason, many": (
        "known_failures.txt",
        lambda size: "t" + sized(" x", size - 3) + " #",
    ),
    "requirements.txt: spaces before a bad character": (
        "requirements.txt",
        lambda size: "a" + " " * (size - 2) + "^",
    ),
    "requirements.txt: a marker's spaces": (
        "requirements.txt",
        lambda size: "a;" + " " * (size - 3) + "^",
    ),
    "requirements.txt: a version's spaces": (
        "requirements.txt",
        lambda size: "a==1" + " " * (size - 5) + "^",
    ),
    "requirements.txt: extras": (
        "requirements.txt",
        lambda size: "a[" + sized("b , ", size - 3) + "^",
    ),
    "collection error: a File line of test folders": (
        "collection error",
        lambda size: 'File "' + sized("/tests/", size - 6),
    ),
    "collection error: many File lines": (
        "collection error",
        lambda size: sized('File "/tests/a.py', size),
    ),
    "collection error: E and white space": (
        "collection error",
        lambda size: "E" + sized(" \n", size - 1),
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE_FILES))
def test_file_readers_are_linear(name: str) -> None:
    reader, hostile = HOSTILE_FILES[name]
    work, size, ordinary_line = FILE_READERS[reader]
    measured = cost_ratio(work, sized(ordinary_line, size), hostile(size))
    assert measured.ratio <= ALLOWED_RATIO, f"{reader}: {measured}"


JSON_BYTES = 2 * 1024**2
"""Of the 128 MiB the reader takes: a linear reader's cost per byte is the same at any size, and
what the adversarial document varies is the cost of each value (its depth, its keys)."""


def _nested_json(size: int) -> bytes:
    """Lists of numbers 31 levels down, under keys the reader must escape to name: the longest
    paths the limits allow, to every value."""
    key = "\x00" * 40
    head = "".join(json.dumps({f"{key}{level}": 0})[:-4] for level in range(31))
    row = "[" + ",".join(["0"] * 1000) + "]"
    body = ",".join([row] * (size // (len(row) + 1)))
    return (head + "[" + body + "]" + "}" * 31).encode()


def _flat_json(size: int) -> bytes:
    row = "[" + ",".join(["0"] * 1000) + "]"
    return ("[" + ",".join([row] * (size // (len(row) + 1))) + "]").encode()


def test_the_strict_json_reader_is_linear() -> None:
    adversarial = _nested_json(JSON_BYTES)
    assert len(adversarial) >= len(_flat_json(JSON_BYTES))
    measured = cost_ratio(_strict_json, _flat_json(JSON_BYTES), adversarial)
    assert measured.ratio <= ALLOWED_RATIO, f"strict JSON: {measured}"


def _pytest_report(longrepr: str, count: int) -> ReportFiles:
    tests = [
        {
            "nodeid": f".evaluation_tests/test_checkpoint_1.py::test_{n}",
            "outcome": "skipped",
            "keywords": [],
            "setup": {"outcome": "skipped", "longrepr": longrepr},
        }
        for n in range(count)
    ]
    report = {"exitcode": 0, "tests": tests, "collectors": []}
    return ReportFiles(None, json.dumps(report).encode(), ())


def test_pytest_s_report_is_read_in_linear_time() -> None:
    """A skipped test's longrepr is read as the repr of a tuple, its reason as a Python literal:
    against skip reports of the longest length whose reason is read, each hostile shape (nesting,
    strings left open, strings of escapes)."""
    path_and_line = repr(("/workspace/tests/test_x.py", 3, ""))
    reason = sized("Skipped: a reason. ", MAX_SKIP_REPR_CHARS - len(path_and_line))
    ordinary_repr = repr(("/workspace/tests/test_x.py", 3, reason))
    assert len(ordinary_repr) == MAX_SKIP_REPR_CHARS
    escapes = sized("\\'", MAX_SKIP_REPR_CHARS)
    hostile_reprs = {
        "nesting": sized("((((((((((" + "'\\" * 10, MAX_SKIP_REPR_CHARS),
        "a path left open": sized("('" + escapes, MAX_SKIP_REPR_CHARS),
        "a reason left open": sized("('p', 3, '" + escapes, MAX_SKIP_REPR_CHARS),
        "a reason of escapes": "('p', 3, '" + escapes[: MAX_SKIP_REPR_CHARS - 12] + "')",
    }
    for shape, hostile_repr in hostile_reprs.items():
        assert len(hostile_repr) == MAX_SKIP_REPR_CHARS
        measured = cost_ratio(
            read_reports, _pytest_report(ordinary_repr, 64), _pytest_report(hostile_repr, 64)
        )
        assert measured.ratio <= ALLOWED_RATIO, f"pytest's report, {shape}: {measured}"


def test_names_and_log_tails_are_linear(tmp_path: Path) -> None:
    ordinary_id = sized("tests/test_checkpoint_1.py::test_x[case-1] ", MAX_TEST_ID_CHARS * 8)
    measured = cost_ratio(shown_test_id, ordinary_id, "\x1b" * (MAX_TEST_ID_CHARS * 8))
    assert measured.ratio <= ALLOWED_RATIO, f"test ids: {measured}"
    lines, one_line = tmp_path / "lines.log", tmp_path / "one.log"
    lines.write_text(sized("ok\n", 16 * 1024**2))  # what the threat problem's tests print
    one_line.write_text("\r" * (16 * 1024**2))
    measured = cost_ratio(log_tail, lines, one_line)
    assert measured.ratio <= ALLOWED_RATIO, f"log tails: {measured}"
