"""This machine's load from /proc: the CPU's idle share between two readings, and MemAvailable."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.engines.load import CpuTimes, cpu_times, memory_available


def test_the_aggregate_cpu_line_idle_and_iowait_over_all_but_guest_time(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 50 800 40 3 2 0 7 1\ncpu0 50 2 25 400 20 1 1 0 3 0\n")
    assert cpu_times(stat) == CpuTimes(idle=840, total=1000)
    later = CpuTimes(idle=840 + 150, total=1000 + 200)
    assert later.idle_share_since(CpuTimes(idle=840, total=1000)) == 0.75
    assert later.idle_share_since(later) is None


def test_what_cannot_be_read_is_none(tmp_path: Path) -> None:
    assert cpu_times(tmp_path / "missing") is None
    for text in ("", "intr 1 2 3\n", "cpu 1 2 x 4 5 6\n", "cpu 1 2\n"):
        (tmp_path / "stat").write_text(text)
        assert cpu_times(tmp_path / "stat") is None, text
    assert memory_available(tmp_path / "missing") is None
    (tmp_path / "meminfo").write_text("MemTotal: 100 kB\nMemFree: 10 kB\n")
    assert memory_available(tmp_path / "meminfo") is None


def test_mem_available_in_bytes(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    assert memory_available(meminfo) == 20000000 * 1024


def test_this_machine_s_load_reads() -> None:
    first = cpu_times()
    assert first is not None and 0 <= first.idle <= first.total
    available = memory_available()
    assert available is not None and available > 0
