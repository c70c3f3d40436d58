"""Ctrl-C and SIGTERM (a cancelled workflow, `docker stop`, `timeout`) as exceptions, so every
cleanup still runs, and runs to its end: the first signal raises in the main thread; any that
follow while the run stops (a second Ctrl-C, `timeout -s INT` signalling the process and its
group) are taken as the same request and change nothing, so none cuts a cleanup short.

A handler raises wherever the main thread is, finalizers included (an HTTP response's `close`
as the Docker client drops it, a `__del__`), and Python drops what a finalizer raises: such a
stop is given again from outside the finalizer, or the run would go on with every later signal
ignored."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


STOPS = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
"""Each signal that stops a run, and what the first of them raises."""
_REDELIVERY_DELAY_S = 0.01
"""How long after a finalizer dropped a stop it is given again: time for the finalizer to end."""


class _Stop:
    """The stop of one `raise_on_signals`: the signal that raised, once one has."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.in_hook = False
        """Whether the main thread is in `_unraisable`, where a raised stop is dropped for good
        (what the hook raises goes nowhere)."""

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.in_hook:
            _send_later(signum)
            return
        if self.signum is not None:
            return  # the run is already stopping: its cleanup must not be cut short
        self.signum = signum
        raise STOPS[signal.Signals(signum)]

    def dropped(self, unraisable: Any) -> bool:
        """Whether `unraisable` (what Python could not raise) is this stop, dropped by a
        finalizer; if so, the signal is sent again, to be raised where the run is."""
        signum = self.signum
        if signum is None or not isinstance(unraisable.exc_value, STOPS[signal.Signals(signum)]):
            return False
        self.signum = None
        _send_later(signum)
        return True


_current = _Stop()
_previous_hook = sys.unraisablehook


def raise_on_signals() -> None:
    """From now on, the first SIGINT or SIGTERM raises its exception (STOPS); later ones are
    ignored. Only the main thread can install handlers (elsewhere this does nothing)."""
    global _current, _previous_hook
    if threading.current_thread() is not threading.main_thread():
        return
    _current = _Stop()
    for signum in STOPS:
        signal.signal(signum, _current.handle)
    if sys.unraisablehook is not _unraisable:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable


def _unraisable(unraisable: Any) -> None:
    """What Python could not raise: a dropped stop is sent again, the rest goes to the hook
    there was before."""
    stop = _current
    stop.in_hook = True
    try:
        if not stop.dropped(unraisable):
            _previous_hook(unraisable)
    finally:
        stop.in_hook = False


def _send_later(signum: int) -> None:
    """`signum` sent to this process again from another thread, a moment from now: once the
    main thread has left the finalizer or the hook it is in (else it is sent again then)."""

    def send() -> None:
        time.sleep(_REDELIVERY_DELAY_S)
        os.kill(os.getpid(), signum)

    threading.Thread(target=send, daemon=True).start()
