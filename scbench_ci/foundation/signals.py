"""Ctrl-C and SIGTERM (a cancelled workflow, `docker stop`, `timeout`) as exceptions, so every
cleanup still runs, and runs to its end: the first signal raises in the main thread; any that
follow while the run stops (a second Ctrl-C, `timeout -s INT` signalling the process and its
group) are taken as the same request and change nothing, so none cuts a cleanup short.

A handler raises wherever the main thread is, and some places drop what is raised there: a
finalizer (a `__del__`, whose error goes to `sys.unraisablehook`) and, with no word at all, the
`close` Python calls as it finalizes a file-like object (an HTTP response as the Docker client
drops it: CPython clears that error unless in development mode). A stop that is gone before it
left the block (`stops_raised`) was dropped: it is given again from outside, or the run would go
on with every later signal ignored."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import Any


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when SIGINT arrives (a KeyboardInterrupt of its own: a raised
    stop is watched until it is taken, and Python's own cannot be)."""


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


STOPS = {signal.SIGINT: Interrupted, signal.SIGTERM: Terminated}
"""Each signal that stops a run, and what the first of them raises."""
_REDELIVERY_DELAY_S = 0.01
"""How long after a stop was dropped it is given again: time for what dropped it to end."""


class _Stop:
    """The stop of one `stops_raised` block: the signal that raised, once one has, and the stop
    it raised, watched until the block has taken it."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.raised: weakref.ref[BaseException] | None = None
        self.taken = False
        """The block has ended: what it raised reached it, or no longer matters."""
        self.deferring = False
        """The main thread is in this module's code that Python runs as it drops what was
        raised (the unraisable hook, a raised stop's end): what a signal raised there would be
        dropped for good, so it is sent again instead."""

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.deferring:
            _send_later(signum)
            return
        if self.signum is not None:
            return  # the run is already stopping: its cleanup must not be cut short
        self.signum = signum
        raise self._watched(signum)

    def _watched(self, signum: int) -> BaseException:
        """The stop to raise, watched for its end (made here: a name for it in `handle`'s frame,
        which its traceback holds, would keep it alive past a drop)."""
        stop = STOPS[signal.Signals(signum)]()
        self.raised = weakref.ref(stop, self._ended)
        return stop

    def _ended(self, raised: weakref.ref[BaseException]) -> None:
        """The stop raised is gone: before the block took it, it was dropped."""
        if raised is self.raised:
            with self.deferred():
                self.given_again()

    def ours(self, error: BaseException | None) -> bool:
        return self.raised is not None and error is not None and error is self.raised()

    def given_again(self) -> None:
        """The stop in flight was dropped: its signal is sent again, to be raised where the run
        is (once: the stop dropped is no longer watched)."""
        signum = self.signum
        if self.taken or signum is None:
            return
        self.signum = None
        self.raised = None
        _send_later(signum)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Within, a signal is sent again instead of raised (`deferring`)."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False


_current = _Stop()
_previous_hook = sys.unraisablehook


@contextlib.contextmanager
def stops_raised() -> Iterator[None]:
    """Within the block, the first SIGINT or SIGTERM raises its exception (STOPS) and later ones
    are ignored, and a stop dropped on its way out of the block is given again. Only the main
    thread can install handlers (elsewhere the block changes nothing)."""
    global _current, _previous_hook
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stop = _current = _Stop()
    for signum in STOPS:
        signal.signal(signum, stop.handle)
    if sys.unraisablehook is not _unraisable:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable
    try:
        yield
    finally:
        stop.taken = True


def _unraisable(unraisable: Any) -> None:
    """What Python could not raise: a dropped stop is given again, silently; the rest goes to
    the hook there was before."""
    stop = _current
    with stop.deferred():
        if stop.ours(unraisable.exc_value):
            stop.given_again()
        else:
            _previous_hook(unraisable)


def _send_later(signum: int) -> None:
    """`signum` sent to this process again from another thread, a moment from now: once the
    main thread has left what dropped it (else it is sent again then)."""

    def send() -> None:
        time.sleep(_REDELIVERY_DELAY_S)
        os.kill(os.getpid(), signum)

    threading.Thread(target=send, daemon=True).start()
