import io
import re
from pathlib import Path

from scbench_ci.outputs.github.workflow import (
    append_summary,
    commands_stopped,
    escape_data,
    escape_property,
    group,
    workflow_command,
    write_outputs,
)


def test_escaping_rules() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("::set-output name=x::1") == "::set-output name=x::1"  # data may hold ::


def test_command_lines() -> None:
    line = workflow_command("error", "line1\nline2", file="tests/t.py", line=3, title="a, b: c")
    assert line == "::error file=tests/t.py,line=3,title=a%2C b%3A c::line1%0Aline2"
    assert workflow_command("endgroup") == "::endgroup::"
    assert workflow_command("error", "x", file=None) == "::error::x"


def test_group_and_stop_commands() -> None:
    stream = io.StringIO()
    with group("Evaluate", stream), commands_stopped(stream):
        stream.write("::error::injected by a test name")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "::group::Evaluate"
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[1])
    assert token is not None
    assert lines[2] == "::error::injected by a test name"
    assert lines[3] == f"::{token.group(1)}::"
    assert lines[4] == "::endgroup::"
    other = io.StringIO()
    with commands_stopped(other):
        pass
    assert other.getvalue().splitlines()[0] != lines[1]  # a fresh token every time


def test_outputs_use_random_delimiters(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=1\n")
    write_outputs(path, {"passed": "true", "results_path": "a\nb"})
    text = path.read_text()
    assert text.startswith("earlier=1\n")
    blocks = re.findall(r"(\w+)<<(ghadelimiter_[0-9a-f]{32})\n(.*?)\n\2\n", text, re.S)
    assert [(name, value) for name, _, value in blocks] == [
        ("passed", "true"),
        ("results_path", "a\nb"),
    ]
    assert blocks[0][1] != blocks[1][1]


def test_summary_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "summary"
    append_summary(path, "# one")
    append_summary(path, "two\n")
    assert path.read_text() == "# one\ntwo\n"
