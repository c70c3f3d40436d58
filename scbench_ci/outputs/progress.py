"""What the console shows while a run goes on.

One evaluation at a time streams its output as it comes (`Headers`: a header line per job).
Side by side, output would interleave, so each job's output goes to its own log file and the
console shows progress instead: on a terminal a status line rewritten in place at least once a
second (`LiveStatus`), elsewhere (CI logs) one line per finished evaluation, a failed one with
why, and a status line after every HEARTBEAT_S without one (`FinishedLines`). The status says what
runs now and for how long, and, where a baseline knows every unfinished job's duration, when the
run should end. `check` shows progress even one run at a time: its runs' output is in their
logs, and its status counts runs, not verdicts (the check judges them at the end). Calls come
from the worker threads and from the clock's (`ticking`).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TextIO

from scbench_ci.engines.admission import BACKED_OFF, Decision
from scbench_ci.job.plan import Job
from scbench_ci.outputs.console import headline, passed_of
from scbench_ci.problem.model import Group
from scbench_ci.results.model import CheckpointResult, why_failed
from scbench_ci.trust.terminal import inert

TICK_S = 1.0
"""How often the clock ticks: a terminal's status line is drawn again each time."""
HEARTBEAT_S = 30.0
"""Elsewhere, the longest the console stays silent: then the status gets a line of its own."""
RUNNING_LISTED = 3
"""How many running jobs the status names, the longest running first."""
FALLBACK_COLUMNS = 80


class Headers:
    """For a run whose jobs stream their output: a header before each job's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def started(self, job: Job) -> None:
        self.stream.write(
            "\n" + inert(f"=== {job.label} ({job.submission}) ===", one_line=True) + "\n"
        )
        self.stream.flush()

    def finished(self, job: Job, result: CheckpointResult) -> None:
        pass

    def load(self, running: int, decision: Decision) -> None:
        pass

    @contextlib.contextmanager
    def ticking(self) -> Iterator[None]:
        """No clock: the tests' output is the progress, and a clock would cut its lines."""
        yield


class FinishedLines:
    """One line per finished evaluation, with the counts so far; the status when silent for
    HEARTBEAT_S."""

    def __init__(
        self,
        stream: TextIO,
        total: int,
        policy_name: str,
        *,
        durations: Mapping[str, float] | None = None,
        judged: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`policy_name`: the run's policy, which says why a checkpoint failed; `durations`: what
        a baseline knows of each checkpoint's duration (`Job.key`), for the ETA; `judged`:
        whether each run's verdict is its own (not for `check`'s runs, judged together at the
        end)."""
        self.stream = stream
        self.total = total
        self.policy_name = policy_name
        self.durations = dict(durations or {})
        self.judged = judged
        self.clock = clock
        self.done = 0
        self.passing = 0
        self.running: dict[int, tuple[Job, float]] = {}
        """By the job's identity: the job and when it started."""
        self.waiting_keys: list[str] = []
        """The keys of the jobs not started yet, for the ETA (`expect`)."""
        self.why_no_more = ""
        self.backed_off = False
        self.started_at = clock()
        self.last_line_at = self.started_at
        self.lock = threading.Lock()

    def expect(self, jobs: list[Job]) -> None:
        """The jobs the run will start, for the ETA."""
        with self.lock:
            self.waiting_keys = [job.key for job in jobs]

    def started(self, job: Job) -> None:
        with self.lock:
            self.running[id(job)] = (job, self.clock())
            if job.key in self.waiting_keys:
                self.waiting_keys.remove(job.key)
            self.show_status()

    def finished(self, job: Job, result: CheckpointResult) -> None:
        with self.lock:
            self.running.pop(id(job), None)
            self.done += 1
            self.passing += result.passed
            self.show_finished(job, result)
            self.show_status()

    def load(self, running: int, decision: Decision) -> None:
        """What `--jobs auto` decided: a line for each extra job started and for backing off,
        and the status line says why no more start."""
        with self.lock:
            if decision.admit:
                self.why_no_more = ""
                if decision.reason:
                    self.show_line(f"{running} side by side: one more started, {decision.reason}")
                return
            self.why_no_more = decision.reason
            if decision.reason.startswith(BACKED_OFF) and not self.backed_off:
                self.backed_off = True
                self.show_line(f"no more extra jobs: {decision.reason}")
            self.show_status()

    @contextlib.contextmanager
    def ticking(self) -> Iterator[None]:
        """A clock that ticks every TICK_S while the run goes on."""
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(TICK_S):
                with self.lock:
                    self.tick()

        clock = threading.Thread(target=tick, name="scbench-ci progress clock", daemon=True)
        clock.start()
        try:
            yield
        finally:
            stop.set()
            clock.join()

    def tick(self) -> None:
        """The clock's tick (under the lock): the status, when nothing was said for
        HEARTBEAT_S."""
        if self.done < self.total and self.clock() - self.last_line_at >= HEARTBEAT_S:
            self.show_line(self.status())

    def show_line(self, line: str) -> None:
        self.stream.write(inert(line, one_line=True) + "\n")
        self.stream.flush()
        self.last_line_at = self.clock()

    def show_finished(self, job: Job, result: CheckpointResult) -> None:
        line = finished_line(job, result, self.policy_name) + self.load_note()
        self.stream.write(f"[{self.done}/{self.total}] {line}\n")
        self.stream.flush()
        self.last_line_at = self.clock()

    def load_note(self) -> str:
        """After a finished line: how many run, and why no more while some wait (`auto`)."""
        if not self.why_no_more or self.total - self.done <= len(self.running):
            return ""
        return inert(
            f" \N{MIDDLE DOT} {len(self.running)} running, no more: {self.why_no_more}",
            one_line=True,
        )

    def show_status(self) -> None:
        pass

    def status(self) -> str:
        """`0:45 elapsed, ETA 1:10; 2/8 done: 1 passing, 1 failing; running: a (0:12), b (0:03)`,
        the clock first (a terminal too narrow cuts the end); the verdicts left out for runs
        judged later (`check`: `2/8 runs done`)."""
        now = self.clock()
        if self.judged:
            failing = self.done - self.passing
            done = f"{self.done}/{self.total} done: {self.passing} passing, {failing} failing"
        else:
            done = f"{self.done}/{self.total} runs done"
        running = sorted(self.running.values(), key=lambda pair: pair[1])
        shown = running[:RUNNING_LISTED]
        named = ", ".join(f"{job.label} ({_clock(now - since)})" for job, since in shown)
        if len(running) > len(shown):
            named += f" and {len(running) - len(shown)} more"
        waiting = self.total - self.done - len(running)
        why = f" (no more: {self.why_no_more})" if waiting and self.why_no_more else ""
        doing = f"running: {named}{why}" if running else f"none running{why}"
        eta = self.eta(now)
        clock = f"{_clock(now - self.started_at)} elapsed{f', {eta}' if eta else ''}"
        return inert(f"{clock}; {done}; {doing}")

    def eta(self, now: float) -> str:
        """`ETA 1:10` from the baseline's durations of every job not finished; '' when one of
        them is not known (a guess from the jobs done so far would be no better than none)."""
        left = [*self.waiting_keys, *(job.key for job, _ in self.running.values())]
        if not left or not all(key in self.durations for key in left):
            return ""
        work = sum(self.durations[key] for key in self.waiting_keys)
        work += sum(
            max(self.durations[job.key] - (now - since), 0.0)
            for job, since in self.running.values()
        )
        if work <= 0:
            return "past the baseline's durations"
        return f"ETA {_clock(work / max(1, len(self.running)))} (the baseline's durations)"


class LiveStatus(FinishedLines):
    """On a terminal: finished lines scroll above a status line that is drawn again in place at
    every change and every tick, cut to the terminal's width (a wrapped line would not be
    drawn over)."""

    def show_line(self, line: str) -> None:
        self.stream.write("\r\x1b[K")
        super().show_line(line)

    def show_finished(self, job: Job, result: CheckpointResult) -> None:
        self.stream.write("\r\x1b[K")
        super().show_finished(job, result)

    def load_note(self) -> str:
        return ""  # the status line under it says so

    def tick(self) -> None:
        if self.done < self.total:
            self.show_status()

    def show_status(self) -> None:
        columns = shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns
        self.stream.write(f"\r\x1b[K{_fitted(self.status(), columns - 1)}")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def finished_line(job: Job, result: CheckpointResult, policy_name: str) -> str:
    """`wordstat / checkpoint_1: failed, Core 2/8, all 5/15, 1.2 s — 5 Core tests failed`; for
    a run of `check`, what the run gave, as the check judges it later (an empty submission is
    meant to fail)."""
    reused = " (earlier result, unchanged)" if result.reused else ""
    duration = f"{result.duration_s:.1f} s"
    if job.role:
        outcome = _counts(result) if result.counts.total else "done"
        if result.failure is not None:
            outcome = headline(f"{result.failure.kind.value}: {result.failure.message}")
        return inert(f"{job.label}: {outcome}{reused}, {duration}", one_line=True)
    verdict = "passed" if result.passed else "failed"
    why = why_failed(result, policy_name)
    because = f" \N{EM DASH} {headline(why)}" if why is not None else ""
    return inert(
        f"{job.label}: {verdict}{reused}, {_counts(result)}, {duration}{because}", one_line=True
    )


def _counts(result: CheckpointResult) -> str:
    return f"Core {passed_of(result.groups[Group.CORE])}, all {passed_of(result.counts)}"


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{rest:02}" if hours else f"{minutes}:{rest:02}"


def _fitted(line: str, columns: int) -> str:
    """The line within `columns` characters (it is inert already: one character a column)."""
    return line if len(line) <= columns else line[: max(columns - 1, 0)] + "…"
