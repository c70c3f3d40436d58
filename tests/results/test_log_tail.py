from pathlib import Path

from scbench_ci.results.log_tail import LOG_TAIL_CHARS, LOG_TAIL_LINES, log_tail


def test_the_last_lines_of_a_log(logs: Path) -> None:
    tail = log_tail(logs / "pytest.log")
    assert tail is not None
    assert tail.splitlines() == [f"line {i}" for i in range(100 - LOG_TAIL_LINES, 100)]


def test_a_long_line_is_cut_to_its_end(tmp_path: Path) -> None:
    log = tmp_path / "pytest.log"
    log.write_text("first\n" + "x" * (LOG_TAIL_CHARS * 10) + "end\n")
    tail = log_tail(log)
    assert tail is not None and len(tail) == LOG_TAIL_CHARS and tail.endswith("xend")


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    log = tmp_path / "pytest.log"
    log.write_bytes(b"ok\n\xff\xfe broken\n")
    assert log_tail(log) == "ok\n\ufffd\ufffd broken"


def test_no_log_no_tail(tmp_path: Path) -> None:
    assert log_tail(tmp_path / "pytest.log") is None
