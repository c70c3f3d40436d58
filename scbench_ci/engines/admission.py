"""How many evaluations may run side by side now: a fixed count (`--jobs N`), or by measured
load (`--jobs auto`).

`auto` starts one evaluation per core, as a fixed count the cores hold would, and admits one more
only when the CPU has stayed idle for a while since the last one started (evaluations whose tests
start a server and wait on it leave the cores idle), memory holds another container at its limit,
and the cap is not reached; the place an evaluation leaves at that level is filled again at once
while the CPU is idle, and the level falls when it is not. It never admits while the CPU is busy.
Extra evaluations are the only thing `auto` adds over the fixed count, and they must not move a
verdict: a test that used much of its timeout while extras ran beside it stops all further extras
(`back_off`), and a checkpoint that timed out while extras ran is run again at the cores' count
(`engines/pool.py` `Slot`).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from scbench_ci.engines import load
from scbench_ci.engines.load import CpuTimes

AUTO: Literal["auto"] = "auto"
JobCount = int | Literal["auto"]
"""`--jobs`: a fixed count, or `auto`."""

GIB = 1024**3
BACKED_OFF = "backed off"
NEAR_TIMEOUT = 0.5
"""A test that used this share of its timeout while extras ran beside it stops all further
extras."""
TIMED_OUT = 0.9
"""A failing test that used this share of its timeout ran into it."""
UNLIMITED_JOB_MEMORY = GIB
"""What an evaluation with no memory limit (the local executor) is taken to need."""


@dataclass(frozen=True)
class Thresholds:
    idle_share: float = 0.5
    """The share of the CPU's time that must stay idle to admit one more evaluation."""
    idle_for_s: float = 3.0
    """For how long, measured after the last evaluation started (its start-up is CPU work)."""
    sample_every_s: float = 1.0
    per_core: int = 4
    """The cap: this many evaluations per core."""
    memory_reserve: int = GIB // 2
    """Memory left to everything else, on top of the new evaluation's limit."""


@dataclass(frozen=True)
class Decision:
    admit: bool
    reason: str = ""
    """Why no more are admitted (empty: a fixed count says so); when `admit`, what made the
    room for an extra one (empty for one the base count holds)."""


class Admission(Protocol):
    base: int
    """Evaluations admitted whatever the load: the fixed count, or the cores' under `auto`."""
    most: int
    """The most ever admitted side by side."""
    tick_s: float | None
    """How often to ask again while nothing ends (None: only when an evaluation ends)."""

    def decide(self, running: int, holding: bool) -> Decision:
        """Whether one more may start beside `running`; `holding`: a checkpoint is being run
        again at the base count, so no extra may start."""
        ...

    def started(self) -> None: ...

    def back_off(self, reason: str) -> None:
        """No extra evaluation from now on."""
        ...


class FixedCount:
    tick_s: float | None = None

    def __init__(self, count: int) -> None:
        self.base = self.most = count

    def decide(self, running: int, holding: bool) -> Decision:
        return Decision(running < self.base)

    def started(self) -> None:
        pass

    def back_off(self, reason: str) -> None:
        pass


class Probe(Protocol):
    """Where the load is read from (this machine's /proc)."""

    def cpu(self) -> CpuTimes | None: ...
    def memory(self) -> int | None: ...


class MachineProbe:
    def cpu(self) -> CpuTimes | None:
        return load.cpu_times()

    def memory(self) -> int | None:
        return load.memory_available()


class ByLoad:
    """`--jobs auto`. Calls come from the pool's thread, but for `back_off` (a worker's)."""

    def __init__(
        self,
        cores: int,
        memory_per_job: int,
        probe: Probe | None = None,
        thresholds: Thresholds | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`memory_per_job`: the most one evaluation may take (its container's limit)."""
        self.thresholds = thresholds or Thresholds()
        self.base = max(1, cores)
        self.most = self.base * self.thresholds.per_core
        self.tick_s: float | None = self.thresholds.sample_every_s
        self.memory_per_job = memory_per_job
        self.probe = probe or MachineProbe()
        self.clock = clock
        self._samples: deque[tuple[float, CpuTimes]] = deque()
        self._last_start = clock()
        self._level = self.base
        """How many the load has shown room for: a place one of them leaves is filled again
        without a new wait, while the CPU stays idle."""
        self._backed_off: str | None = None
        self._lock = threading.Lock()

    def started(self) -> None:
        self._last_start = self.clock()

    def back_off(self, reason: str) -> None:
        with self._lock:
            if self._backed_off is None:
                self._backed_off = reason

    def decide(self, running: int, holding: bool) -> Decision:
        self._sample()
        if running < self.base:
            return Decision(True)
        with self._lock:
            backed_off = self._backed_off
        if backed_off is not None:
            return Decision(False, f"{BACKED_OFF}: {backed_off}")
        if holding:
            return Decision(False, "a timed-out checkpoint runs again without extra jobs")
        if running >= self.most:
            return Decision(
                False, f"at the cap of {self.most} ({self.thresholds.per_core} per core)"
            )
        available = self.probe.memory()
        needed = self.memory_per_job + self.thresholds.memory_reserve
        if available is None or available < needed:
            free = "unknown" if available is None else _gib(available)
            return Decision(
                False, f"memory: {free} free, one more job needs {_gib(needed)} with its reserve"
            )
        if running < self._level:
            latest = self._latest_idle()
            if latest is not None and latest >= self.thresholds.idle_share:
                return Decision(True)
            self._level = running
        idle = self._idle()
        if isinstance(idle, str):
            return Decision(False, idle)
        self._level = running + 1
        return Decision(
            True, f"the CPU was {idle:.0%} idle for {self._window_s()}, {_gib(available)} free"
        )

    def _sample(self) -> None:
        now = self.clock()
        if self._samples and now - self._samples[-1][0] < self.thresholds.sample_every_s:
            return
        times = self.probe.cpu()
        if times is None:
            return
        self._samples.append((now, times))
        keep_from = now - 2 * self.thresholds.idle_for_s
        while len(self._samples) > 2 and self._samples[1][0] <= keep_from:
            self._samples.popleft()

    def _latest_idle(self) -> float | None:
        """The idle share over the last interval measured."""
        if len(self._samples) < 2:
            return None
        return self._samples[-1][1].idle_share_since(self._samples[-2][1])

    def _idle(self) -> float | str:
        """The least idle share of the intervals measured over the last `idle_for_s`, all after
        the last start; or why not enough is known or idle."""
        since = self.clock() - self.thresholds.idle_for_s
        measured = [(at, times) for at, times in self._samples if at >= self._last_start]
        before = [index for index, (at, _) in enumerate(measured) if at <= since]
        if not before:
            return f"measuring the CPU for {self._window_s()} after the last start"
        window = measured[before[-1] :]
        shares = [
            later.idle_share_since(earlier)
            for (_, earlier), (_, later) in itertools.pairwise(window)
        ]
        least = min((share for share in shares if share is not None), default=None)
        if least is None:
            return "the CPU's load cannot be read"
        if least < self.thresholds.idle_share:
            return f"CPU busy ({least:.0%} idle, {self.thresholds.idle_share:.0%} needed)"
        return least

    def _window_s(self) -> str:
        return f"{self.thresholds.idle_for_s:g} s"


def make_admission(jobs: JobCount, count: int, memory_per_job: int | None) -> Admission:
    """For `count` evaluations, each taking up to `memory_per_job` (None: not limited): never
    more than there are."""
    if jobs == AUTO:
        if count <= 1:
            return FixedCount(1)
        return ByLoad(load.cores(), memory_per_job or UNLIMITED_JOB_MEMORY)
    return FixedCount(max(1, min(jobs, count)))


def _gib(size: int) -> str:
    return f"{size / GIB:.1f} GiB"


class IdleCores:
    """`--shards auto`: how many runs a checkpoint's tests are split over, when its evaluation
    starts: its share of the cores that no running evaluation holds, shared with the evaluations
    the admission will start beside it (a lone checkpoint takes every core, a full batch one
    each). Called from the workers' threads."""

    def __init__(self, cores: int, side_by_side: int, count: int) -> None:
        """`cores`: the runs the place holds at once; `side_by_side`: the evaluations the
        admission starts whatever the load (its base); `count`: how many there are."""
        self.cores = max(1, cores)
        self.side_by_side = max(1, side_by_side)
        self.count = count
        self._held = 0
        self._running = 0
        self._started = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def lease(self, wanted: int) -> Iterator[int]:
        """At least one run and at most `wanted`, held until the evaluation ends."""
        with self._lock:
            self._started += 1
            self._running += 1
            coming = min(self.count - self._started, max(0, self.side_by_side - self._running))
            free = self.cores - self._held
            granted = max(1, min(wanted, free // (1 + coming)))
            self._held += granted
        try:
            yield granted
        finally:
            with self._lock:
                self._held -= granted
                self._running -= 1
