import io
from pathlib import Path

from scbench_ci.executors.output import LogSink


def test_keeps_everything_under_the_cap(tmp_path: Path) -> None:
    echo = io.StringIO()
    with LogSink(tmp_path / "log", echo) as sink:
        sink.write(b"hello ")
        sink.note("a note")
        sink.write("wörld\n".encode()[:2])  # a character split across chunks
        sink.write("wörld\n".encode()[2:])
    assert (tmp_path / "log").read_text() == "hello \n[scbench-ci] a note\nwörld\n"
    assert echo.getvalue() == "hello \n[scbench-ci] a note\nwörld\n"


def test_a_flood_is_cut_and_says_so(tmp_path: Path) -> None:
    echo = io.StringIO()
    with LogSink(tmp_path / "log", echo, max_bytes=10) as sink:
        for _ in range(1000):
            sink.write(b"0123456")
    text = (tmp_path / "log").read_text()
    assert (
        text == "0123456012\n[scbench-ci] output truncated: 7000 bytes written, the first 10 kept\n"
    )
    assert echo.getvalue().startswith("0123456012\n")
