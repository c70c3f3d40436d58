"""Ctrl-C and SIGTERM (a cancelled workflow, `docker stop`, `timeout`) as exceptions, so every
cleanup still runs, and runs to its end: the first signal raises in the main thread; any that
follow while the run stops (a second Ctrl-C, `timeout -s INT` signalling the process and its
group) are taken as the same request and change nothing, so none cuts a cleanup short."""

from __future__ import annotations

import signal
import threading
from types import FrameType


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


STOPS = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
"""Each signal that stops a run, and what the first of them raises."""


def raise_on_signals() -> None:
    """From now on, the first SIGINT or SIGTERM raises its exception (STOPS); later ones are
    ignored. Only the main thread can install handlers (elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        return
    first: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        if first:
            return  # the run is already stopping: its cleanup must not be cut short
        first.append(signum)
        raise STOPS[signal.Signals(signum)]

    for signum in STOPS:
        signal.signal(signum, stop)
