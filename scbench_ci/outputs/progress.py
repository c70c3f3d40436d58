"""What the console shows while a run goes on.

One evaluation at a time streams its output as it comes (`Headers`: a header line per job).
Side by side, output would interleave, so each job's output goes to its own log file and the
console shows progress instead: on a terminal a status line rewritten in place (`LiveStatus`),
elsewhere (CI logs) one line per finished evaluation (`FinishedLines`), a failed one with why.
`check` shows progress even one run at a time: its runs' output is in their logs. Calls come from
the worker threads.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from scbench_ci.engines.admission import BACKED_OFF, Decision
from scbench_ci.outputs.console import headline, passed_of
from scbench_ci.plan import Job
from scbench_ci.problem.model import Group
from scbench_ci.results.model import CheckpointResult, why_failed
from scbench_ci.trust.terminal import inert


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


class FinishedLines:
    """One line per finished evaluation, with the counts so far."""

    def __init__(self, stream: TextIO, total: int, policy_name: str) -> None:
        """`policy_name`: the run's policy, which says why a checkpoint failed."""
        self.stream = stream
        self.total = total
        self.policy_name = policy_name
        self.done = 0
        self.passing = 0
        self.running = 0
        self.why_no_more = ""
        self.backed_off = False
        self.started_at = time.monotonic()
        self.lock = threading.Lock()

    def started(self, job: Job) -> None:
        with self.lock:
            self.running += 1
            self.show_status()

    def finished(self, job: Job, result: CheckpointResult) -> None:
        with self.lock:
            self.running -= 1
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

    def show_line(self, line: str) -> None:
        self.stream.write(inert(line, one_line=True) + "\n")
        self.stream.flush()

    def show_finished(self, job: Job, result: CheckpointResult) -> None:
        line = finished_line(job, result, self.policy_name) + self.load_note()
        self.stream.write(f"[{self.done}/{self.total}] {line}\n")
        self.stream.flush()

    def load_note(self) -> str:
        """After a finished line: how many run, and why no more while some wait (`auto`)."""
        if not self.why_no_more or self.total - self.done <= self.running:
            return ""
        return inert(
            f" \N{MIDDLE DOT} {self.running} running, no more: {self.why_no_more}", one_line=True
        )

    def show_status(self) -> None:
        pass

    def status(self) -> str:
        elapsed = time.monotonic() - self.started_at
        left = self.total - self.done
        eta = f"ETA {_clock(elapsed / self.done * left)}" if self.done and left else "ETA -"
        waiting = left - self.running
        why = f" (no more: {self.why_no_more})" if waiting and self.why_no_more else ""
        return inert(
            f"{self.done}/{self.total} done: {self.passing} passing, "
            f"{self.done - self.passing} failing, {self.running} running{why}; "
            f"{_clock(elapsed)} elapsed, {eta}"
        )


class LiveStatus(FinishedLines):
    """On a terminal: finished lines scroll above a status line that is rewritten in place."""

    def show_line(self, line: str) -> None:
        self.stream.write("\r\x1b[K")
        super().show_line(line)

    def show_finished(self, job: Job, result: CheckpointResult) -> None:
        self.stream.write("\r\x1b[K")
        super().show_finished(job, result)

    def load_note(self) -> str:
        return ""  # the status line under it says so

    def show_status(self) -> None:
        self.stream.write(f"\r\x1b[K{self.status()}")
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
