"""`--jobs auto`'s admission: the cores' count whatever the load, one more only after the CPU
stayed idle for the window since the last start and memory holds another job at its limit, never
beyond the cap, never once backed off or while a checkpoint runs again; `--jobs N` a fixed count.
`--shards auto`: the cores no evaluation holds."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from scbench_ci.engines.admission import (
    AUTO,
    GIB,
    ByLoad,
    FixedCount,
    IdleCores,
    Thresholds,
    make_admission,
)
from scbench_ci.engines.load import CpuTimes


class Machine:
    """A clock and a CPU whose idle share over each second is set by the test."""

    def __init__(self, idle_share: float = 0.9, memory: int = 20 * GIB) -> None:
        self.now = 0.0
        self.idle_share = idle_share
        self.memory_free: int | None = memory
        self.times = CpuTimes(idle=0, total=0)

    def clock(self) -> float:
        return self.now

    def cpu(self) -> CpuTimes:
        return self.times

    def memory(self) -> int | None:
        return self.memory_free

    def advance(self, seconds: int, idle_share: float | None = None) -> None:
        """`seconds` pass, each at `idle_share` idle (2 cores: 200 ticks a second)."""
        share = self.idle_share if idle_share is None else idle_share
        for _ in range(seconds):
            self.now += 1
            self.times = CpuTimes(self.times.idle + round(200 * share), self.times.total + 200)

    def by_load(self, cores: int = 2, memory_per_job: int = 4 * GIB) -> ByLoad:
        return ByLoad(
            cores, memory_per_job, probe=self, thresholds=Thresholds(idle_for_s=5), clock=self.clock
        )


def _watch(admission: ByLoad, machine: Machine, running: int, seconds: int) -> list[bool]:
    """Whether one more may start beside `running`, asked each second."""
    answers = []
    for _ in range(seconds):
        answers.append(admission.decide(running, holding=False).admit)
        machine.advance(1)
    return answers


def test_the_cores_count_starts_whatever_the_load() -> None:
    machine = Machine(idle_share=0.0)
    auto = machine.by_load(cores=2)
    assert auto.decide(0, holding=False).admit
    assert auto.decide(1, holding=False).admit
    decision = auto.decide(2, holding=False)
    assert not decision.admit
    assert decision.reason == "measuring the CPU for 5 s after the last start"


def test_one_more_after_the_cpu_stayed_idle_for_the_window_since_the_last_start() -> None:
    machine = Machine(idle_share=0.9)
    auto = machine.by_load()
    auto.started()
    answers = _watch(auto, machine, running=2, seconds=6)
    assert answers == [False] * 5 + [True]  # samples at 0..5 s: the window is whole at 5 s
    decision = auto.decide(3, holding=False)  # the third has not started yet
    assert decision.reason == "the CPU was 90% idle for 5 s, 20.0 GiB free"
    auto.started()  # the new one's start-up is CPU work: measure anew
    assert _watch(auto, machine, running=4, seconds=6) == [False] * 5 + [True]


def test_never_while_the_cpu_is_busy_even_for_a_second() -> None:
    machine = Machine(idle_share=0.9)
    auto = machine.by_load()
    auto.started()
    machine.advance(3)
    auto.decide(2, holding=False)
    machine.advance(1, idle_share=0.2)  # one busy second inside the window
    answers = _watch(auto, machine, running=2, seconds=4)
    assert not any(answers)
    decision = auto.decide(2, holding=False)
    assert decision.reason == "CPU busy (20% idle, 50% needed)"
    # The busy second leaves the window 5 s after it ended.
    assert _watch(auto, machine, running=2, seconds=3) == [False, True, True]


def test_busy_seconds_right_after_a_start_do_not_stop_the_next_admission() -> None:
    """A new container's start-up keeps the CPU busy; once that has passed, five idle seconds
    are enough."""
    machine = Machine(idle_share=0.9)
    auto = machine.by_load()
    auto.started()
    auto.decide(2, holding=False)
    machine.advance(3, idle_share=0.1)
    assert _watch(auto, machine, running=2, seconds=7) == [False] * 5 + [True] * 2


def test_memory_must_hold_another_job_at_its_limit() -> None:
    machine = Machine(idle_share=0.95, memory=4 * GIB)
    auto = machine.by_load(memory_per_job=4 * GIB)
    auto.started()
    assert not any(_watch(auto, machine, running=2, seconds=8))
    assert auto.decide(2, holding=False).reason == (
        "memory: 4.0 GiB free, one more job needs 4.5 GiB with its reserve"
    )
    machine.memory_free = 5 * GIB
    assert auto.decide(2, holding=False).admit


def test_the_cap_is_four_per_core() -> None:
    machine = Machine(idle_share=1.0)
    auto = machine.by_load(cores=2)
    _watch(auto, machine, running=7, seconds=6)
    assert auto.decide(7, holding=False).admit
    decision = auto.decide(8, holding=False)
    assert (decision.admit, decision.reason) == (False, "at the cap of 8 (4 per core)")
    assert auto.most == 8


def test_backing_off_or_holding_stops_the_extras_not_the_cores_count() -> None:
    machine = Machine(idle_share=1.0)
    auto = machine.by_load()
    _watch(auto, machine, running=2, seconds=6)
    held = auto.decide(2, holding=True)
    assert (held.admit, held.reason) == (
        False,
        "a timed-out checkpoint runs again without extra jobs",
    )
    auto.back_off("a test of a / checkpoint_1 used 60% of its 10 s timeout beside extra jobs")
    auto.back_off("a later reason is not the one shown")
    decision = auto.decide(2, holding=False)
    assert decision.reason == (
        "backed off: a test of a / checkpoint_1 used 60% of its 10 s timeout beside extra jobs"
    )
    assert auto.decide(1, holding=False).admit


def test_an_unreadable_cpu_admits_only_the_cores_count() -> None:
    class Unreadable(Machine):
        def cpu(self) -> None:  # type: ignore[override]
            return None

    machine = Unreadable()
    auto = ByLoad(2, GIB, probe=machine, clock=machine.clock)
    machine.advance(10)
    assert auto.decide(1, holding=False).admit
    assert not auto.decide(2, holding=False).admit


def test_a_fixed_count_never_more_than_there_are_jobs() -> None:
    assert make_admission(3, 10, GIB).most == 3
    assert make_admission(3, 2, GIB).most == 2
    assert make_admission(3, 0, GIB).most == 1
    assert make_admission(AUTO, 1, GIB).most == 1  # one job streams its output
    fixed = FixedCount(2)
    assert [fixed.decide(n, holding=False).admit for n in range(4)] == [True, True, False, False]
    assert isinstance(make_admission(AUTO, 5, None), ByLoad)


def test_a_place_left_at_the_level_reached_is_filled_at_once_while_the_cpu_is_idle() -> None:
    """Three ran (one extra); one ends: the next starts without a new wait. When the CPU is
    busy, the level falls to what runs."""
    machine = Machine(idle_share=0.9)
    auto = machine.by_load()
    auto.started()
    assert _watch(auto, machine, running=2, seconds=6)[-1]
    auto.started()  # the third
    machine.advance(1)
    decision = auto.decide(2, holding=False)  # one of the three ended
    assert (decision.admit, decision.reason) == (True, "")
    auto.started()
    machine.advance(1, idle_share=0.1)
    assert not auto.decide(2, holding=False).admit  # busy: the level falls to 2
    machine.advance(1)
    assert not auto.decide(2, holding=False).admit  # and rises again only after the window
    assert _watch(auto, machine, running=2, seconds=6)[-1]


def test_auto_waits_three_seconds_by_default() -> None:
    assert Thresholds().idle_for_s == 3


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.floats(min_value=0.0, max_value=1.0),  # the CPU's idle share that second
            st.one_of(st.none(), st.integers(min_value=0, max_value=64 * GIB)),  # memory free
            st.integers(min_value=0, max_value=12),  # running beside
            st.booleans(),  # a checkpoint runs again at the base count
            st.booleans(),  # a worker backs off now
        ),
        min_size=1,
        max_size=60,
    )
)
def test_no_load_a_submission_can_make_forces_or_starves_the_pool(
    steps: list[tuple[float, int | None, int, bool, bool]],
) -> None:
    """Whatever the submissions do to the CPU and to memory (idle to pull extras in, then busy;
    memory taken or given back), the pool keeps the cores' count, never admits past the cap, an
    extra without memory for it at its limit, nor any extra once backed off or while a
    checkpoint runs again."""
    machine = Machine()
    auto = machine.by_load(cores=2, memory_per_job=4 * GIB)
    needed = 4 * GIB + auto.thresholds.memory_reserve
    backed_off = False
    for idle, memory, running, holding, back_off in steps:
        machine.memory_free = memory
        machine.advance(1, idle)
        if back_off:
            auto.back_off("a test used much of its timeout")
            backed_off = True
        decision = auto.decide(running, holding)
        if running < auto.base:
            assert decision.admit
            continue
        if decision.admit:
            auto.started()
            assert running < auto.most == 8
            assert memory is not None and memory >= needed
            assert not backed_off and not holding


def test_a_lone_checkpoint_takes_every_idle_core() -> None:
    cores = IdleCores(cores=4, side_by_side=1, count=1)
    with cores.lease(9) as granted:
        assert granted == 4
    with IdleCores(cores=4, side_by_side=1, count=1).lease(2) as granted:
        assert granted == 2  # no more than its units


def test_a_full_batch_takes_one_core_each() -> None:
    cores = IdleCores(cores=4, side_by_side=4, count=10)
    with contextlib.ExitStack() as held:
        grants = [held.enter_context(cores.lease(8)) for _ in range(6)]
    assert grants == [1] * 6


def test_the_cores_are_shared_with_the_evaluations_still_to_start() -> None:
    cores = IdleCores(cores=4, side_by_side=4, count=2)
    with cores.lease(8) as first, cores.lease(8) as second:
        assert (first, second) == (2, 2)
    # Once given back, the next one alone takes them all.
    later = IdleCores(cores=4, side_by_side=1, count=3)
    for _ in range(3):
        with later.lease(8) as granted:
            assert granted == 4
