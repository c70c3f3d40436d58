import io
import threading
import time
from pathlib import Path

from scbench_ci.executors.output import EveryLine, LogSink


def test_keeps_everything_under_the_cap(tmp_path: Path) -> None:
    echo = io.StringIO()
    with LogSink(tmp_path / "log", echo) as sink:
        sink.write(b"hello ")
        sink.note("a note")
        sink.write("wörld\n".encode()[:2])  # a character split across chunks
        sink.write("wörld\n".encode()[2:])
    assert (tmp_path / "log").read_text() == "hello \n[scbench-ci] a note\nwörld\n"
    assert echo.getvalue() == "hello \n[scbench-ci] a note\nwörld\n"


def test_a_flood_keeps_its_head_and_tail_and_says_so(tmp_path: Path) -> None:
    echo = io.StringIO()
    with LogSink(tmp_path / "log", echo, max_bytes=16, tail_bytes=6) as sink:
        for _ in range(1000):
            sink.write(b"0123456")
        sink.write(b"END\n")
        sink.note("killed 1 process(es)")
    expected = (
        "0123456012\n[scbench-ci] output truncated: 7004 bytes written, the first 10 and the "
        "last 40 kept\n56END\n[scbench-ci] killed 1 process(es)\n"
    )
    assert (tmp_path / "log").read_text() == expected
    assert echo.getvalue() == expected


def test_the_runner_s_own_lines_stay_in_the_log(tmp_path: Path) -> None:
    """Its start and seal lines, in whatever pieces they come; a line that only begins as one
    does is shown, and the rest goes on at once."""
    echo = io.StringIO()
    output = (
        "collecting ...\n[scbench-ci] runner started 0a1b\n....\n[scbench-ci] see\n"
        "\n[scbench-ci] seal exit=0 killed=0 9f8e\n[scbench-ci"
    )
    with LogSink(tmp_path / "log", echo) as sink:
        for size in (1, 3, 7):
            data = output.encode()
            for start in range(0, len(data), size):
                sink.write(data[start : start + size])
            sink.write(b"\n")
        sink.write(b"pytest's dots .")
        assert echo.getvalue().endswith("pytest's dots .")
    assert (tmp_path / "log").read_text() == f"{output}\n" * 3 + "pytest's dots ."
    shown = "collecting ...\n....\n[scbench-ci] see\n\n[scbench-ci\n"
    assert echo.getvalue() == shown * 3 + "pytest's dots ."


UV_FINISHING = (
    "   Building workspace @ file:///workspace\n"
    "      Built workspace @ file:///workspace\n"
    "Uninstalled 1 package in 0.20ms\n"
    "warning: Failed to hardlink files; falling back to full copy. This may lead to degraded "
    "performance.\n"
    "         If the cache and target directories are on different filesystems, hardlinking "
    "may not be supported.\n"
    "         If this is intentional, set `export UV_LINK_MODE=copy` or use `--link-mode=copy` "
    "to suppress this warning.\n"
    "Installed 1 package in 1ms\n"
)
"""What uv printed, finishing a cached environment in this machine's evaluation image."""


def test_set_up_lines_that_mean_nothing_went_wrong_stay_in_its_log(tmp_path: Path) -> None:
    """Issue #52: shown on every run, they meant nothing; a failure is still shown."""
    failing = "error: No solution found when resolving dependencies\n"
    output = f"[scbench-ci] image x: built here without nvm's and rustup's hosts\n{UV_FINISHING}"
    for echo, setup, shown in [
        (io.StringIO(), True, failing),
        (EveryLine(io.StringIO()), True, output * 2 + failing),
        (io.StringIO(), False, output * 2 + failing),  # pytest's log: every line
    ]:
        with LogSink(tmp_path / "log", echo, setup=setup) as sink:  # type: ignore[arg-type]
            for size in (5, 1000):
                data = output.encode()
                for start in range(0, len(data), size):
                    sink.write(data[start : start + size])
            sink.write(failing.encode())
        stream = echo.stream if isinstance(echo, EveryLine) else echo
        assert stream.getvalue() == shown
        assert (tmp_path / "log").read_text() == output * 2 + failing


def test_what_a_reader_writes_after_the_close_is_dropped(tmp_path: Path) -> None:
    """A stopped run closes its logs while the thread that reads a command's output may still
    write (Ctrl-C): no `write to closed file` from that thread, and the log ends at the close."""
    log = tmp_path / "pytest.log"
    sink = LogSink(log, None)
    sink.write(b"before\n")
    sink.close()
    sink.write(b"after\n")
    sink.note("after too")
    sink.close()
    assert log.read_bytes() == b"before\n"


def test_a_close_while_a_thread_writes_loses_no_byte_before_it(tmp_path: Path) -> None:
    log = tmp_path / "pytest.log"
    sink = LogSink(log, None, max_bytes=1 << 30)
    errors: list[BaseException] = []

    def flood() -> None:
        try:
            for _ in range(20_000):
                sink.write(b"x" * 64 + b"\n")
        except BaseException as error:
            errors.append(error)

    writer = threading.Thread(target=flood)
    writer.start()
    while sink.total_bytes < 65 * 100:
        time.sleep(0.001)
    sink.close()
    writer.join()
    assert errors == []
    kept = log.read_bytes()
    assert kept and set(kept.splitlines()) == {b"x" * 64} and kept.endswith(b"\n")
