"""The first Ctrl-C or SIGTERM raises; those that follow while the run stops change nothing, so
a cleanup that a second signal would have cut short runs to its end."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from scbench_ci.foundation import signals
from scbench_ci.foundation.signals import Interrupted, Terminated, stops_raised
from testing.paths import REPO_ROOT


def stopped_by(*signals: signal.Signals) -> tuple[type[BaseException], list[str]]:
    """What the signals, sent to this process one after another, raise; and how far a cleanup
    that the later ones arrive in got."""
    steps: list[str] = []
    try:
        with stops_raised():
            try:
                os.kill(os.getpid(), signals[0])
                time.sleep(5)
            finally:
                steps.append("cleanup started")
                for later in signals[1:]:
                    os.kill(os.getpid(), later)
                    time.sleep(0.05)  # a handler runs between bytecodes: give it the chance
                steps.append("cleanup ended")
    except BaseException as error:
        return type(error), steps
    raise AssertionError("no signal raised")


@pytest.mark.parametrize(
    ("signals", "raised"),
    [
        ((signal.SIGINT,), Interrupted),
        ((signal.SIGTERM,), Terminated),
        ((signal.SIGINT, signal.SIGINT), Interrupted),
        ((signal.SIGTERM, signal.SIGINT, signal.SIGTERM), Terminated),
        ((signal.SIGINT,) * 10, Interrupted),
    ],
)
def test_the_first_signal_raises_and_the_others_cut_no_cleanup_short(
    signals: tuple[signal.Signals, ...], raised: type[BaseException]
) -> None:
    assert stopped_by(*signals) == (raised, ["cleanup started", "cleanup ended"])


def test_each_call_starts_afresh() -> None:
    assert stopped_by(signal.SIGINT)[0] is Interrupted
    assert stopped_by(signal.SIGTERM)[0] is Terminated


def test_a_ctrl_c_is_a_keyboard_interrupt() -> None:
    assert issubclass(Interrupted, KeyboardInterrupt)


def test_outside_the_main_thread_nothing_changes() -> None:
    before = signal.getsignal(signal.SIGINT)

    def in_a_block() -> None:
        with stops_raised():
            pass

    worker = threading.Thread(target=in_a_block)
    worker.start()
    worker.join()
    assert signal.getsignal(signal.SIGINT) is before


class _SignalledInDel:
    """Gets `signum` while Python finalizes it: the handler raises in `__del__`, where Python
    drops what is raised (to `sys.unraisablehook`)."""

    def __init__(self, signum: signal.Signals) -> None:
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        time.sleep(0.05)  # the handler runs here


class _SignalledInClose(io.RawIOBase):
    """Gets `signum` in the `close` Python calls as it finalizes a file-like object (an HTTP
    response the Docker client drops): CPython clears what is raised there, with no word."""

    def __init__(self, signum: signal.Signals) -> None:
        super().__init__()
        self.signum = signum

    def close(self) -> None:
        if not self.closed:
            os.kill(os.getpid(), self.signum)
            time.sleep(0.05)
        super().close()


FINALIZED = [_SignalledInDel, _SignalledInClose]


@pytest.mark.parametrize("finalized", FINALIZED)
@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGINT, Interrupted), (signal.SIGTERM, Terminated)]
)
def test_a_stop_raised_in_a_finalizer_still_stops_the_run(
    signum: signal.Signals,
    raised: type[BaseException],
    finalized: type[_SignalledInDel | _SignalledInClose],
    capfd: pytest.CaptureFixture[str],
) -> None:
    steps: list[str] = []
    with pytest.raises(raised), stops_raised():
        try:
            finalized(signum)
            steps.append("finalized")
            time.sleep(5)
            steps.append("went on")
        finally:
            steps.append("cleanup started")
            os.kill(os.getpid(), signum)
            time.sleep(0.05)
            steps.append("cleanup ended")
    assert steps == ["finalized", "cleanup started", "cleanup ended"]
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.parametrize("finalized", FINALIZED)
def test_a_stop_sent_again_at_once_is_never_dropped_for_good(
    finalized: type[_SignalledInDel | _SignalledInClose], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent again at once, as when a loaded machine leaves the main thread in the hook or in
    the end of the dropped stop past the delay: a stop raised there would be dropped for good
    (9 of 200 were, before the handler waited for the hook to end)."""
    monkeypatch.setattr(signals, "_REDELIVERY_DELAY_S", 0.0)
    stopped = 0
    for _ in range(100):
        try:
            with stops_raised():
                finalized(signal.SIGINT)
                time.sleep(1)
        except KeyboardInterrupt:
            stopped += 1
    assert stopped == 100


TAKEN_THEN_LET_GO = """
import os, signal, time
from scbench_ci.foundation.signals import Interrupted, stops_raised
try:
    with stops_raised():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
except Interrupted:
    pass
time.sleep(0.5)  # a signal sent again would raise here
print("went on")
"""


def test_a_stop_the_block_took_is_not_given_again() -> None:
    """What the block raised reached it: let go after, it is no drop. In a process of its own: a
    stop given again there would go on being given again in this one."""
    ended = subprocess.run(
        [sys.executable, "-c", TAKEN_THEN_LET_GO],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert (ended.returncode, ended.stdout) == (0, "went on\n"), ended.stderr


def test_what_else_a_finalizer_raises_goes_to_the_hook_there_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class RaisesWhenFinalized:
        def __del__(self) -> None:
            raise ValueError("raised by a finalizer")

    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda given: reported.append(given.exc_value))
    with stops_raised():
        RaisesWhenFinalized()
    assert [type(error) for error in reported] == [ValueError]
