"""This machine's load as Linux reports it: the CPU's time counters and the memory available.

`--jobs auto` admits evaluations by these. They are the whole machine's, as the tests' containers
share it (a container's `/proc/stat` is the host's too, so the action sees the runner's). Where
they cannot be read (not Linux), nothing is measured and no job beyond the cores' count starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
PROC_MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class CpuTimes:
    """The aggregate `cpu` line of /proc/stat: time spent idle (idle and iowait), and in all."""

    idle: int
    total: int

    def idle_share_since(self, earlier: CpuTimes) -> float | None:
        """The share of the CPU's time that was idle between `earlier` and this; None when no
        time passed."""
        total = self.total - earlier.total
        return (self.idle - earlier.idle) / total if total > 0 else None


def cpu_times(stat: Path = PROC_STAT) -> CpuTimes | None:
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if len(first) < 6 or first[0] != "cpu" or not all(field.isdigit() for field in first[1:]):
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
    # counted in user and nice.
    counters = [int(field) for field in first[1:9]]
    return CpuTimes(idle=counters[3] + counters[4], total=sum(counters))


def memory_available(meminfo: Path = PROC_MEMINFO) -> int | None:
    """MemAvailable in bytes: what can be given to new processes without swapping."""
    try:
        lines = meminfo.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        fields = rest.split()
        if name == "MemAvailable" and fields and fields[0].isdigit():
            return int(fields[0]) * 1024
    return None


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
