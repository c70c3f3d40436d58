"""The first Ctrl-C or SIGTERM raises; those that follow while the run stops change nothing, so
a cleanup that a second signal would have cut short runs to its end."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from scbench_ci.foundation import signals
from scbench_ci.foundation.signals import Terminated, raise_on_signals


def stopped_by(*signals: signal.Signals) -> tuple[type[BaseException], list[str]]:
    """What the signals, sent to this process one after another, raise; and how far a cleanup
    that the later ones arrive in got."""
    raise_on_signals()
    steps: list[str] = []
    try:
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
        ((signal.SIGINT,), KeyboardInterrupt),
        ((signal.SIGTERM,), Terminated),
        ((signal.SIGINT, signal.SIGINT), KeyboardInterrupt),
        ((signal.SIGTERM, signal.SIGINT, signal.SIGTERM), Terminated),
        ((signal.SIGINT,) * 10, KeyboardInterrupt),
    ],
)
def test_the_first_signal_raises_and_the_others_cut_no_cleanup_short(
    signals: tuple[signal.Signals, ...], raised: type[BaseException]
) -> None:
    assert stopped_by(*signals) == (raised, ["cleanup started", "cleanup ended"])


def test_each_call_starts_afresh() -> None:
    assert stopped_by(signal.SIGINT)[0] is KeyboardInterrupt
    assert stopped_by(signal.SIGTERM)[0] is Terminated


def test_outside_the_main_thread_nothing_changes() -> None:
    before = signal.getsignal(signal.SIGINT)
    worker = threading.Thread(target=raise_on_signals)
    worker.start()
    worker.join()
    assert signal.getsignal(signal.SIGINT) is before


class _SignalledWhileFinalized:
    """Gets `signum` while Python finalizes it (as an HTTP response's `close` runs when the
    Docker client drops it): the handler raises in `__del__`, where Python drops what is
    raised."""

    def __init__(self, signum: signal.Signals) -> None:
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        time.sleep(0.05)  # the handler runs here


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]
)
def test_a_stop_raised_in_a_finalizer_still_stops_the_run(
    signum: signal.Signals, raised: type[BaseException], capfd: pytest.CaptureFixture[str]
) -> None:
    raise_on_signals()
    steps: list[str] = []
    with pytest.raises(raised):
        try:
            _SignalledWhileFinalized(signum)
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


def test_a_stop_sent_again_while_the_hook_still_runs_is_not_dropped_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sent again at once, as when a loaded machine leaves the main thread in the hook past the
    delay: a stop the handler raised in the hook would be dropped for good (9 of 200 were,
    before the handler waited for the hook to end)."""
    monkeypatch.setattr(signals, "_REDELIVERY_DELAY_S", 0.0)
    stopped = 0
    for _ in range(100):
        raise_on_signals()
        try:
            _SignalledWhileFinalized(signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            stopped += 1
    assert stopped == 100


def test_what_else_a_finalizer_raises_goes_to_the_hook_there_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class RaisesWhenFinalized:
        def __del__(self) -> None:
            raise ValueError("raised by a finalizer")

    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda given: reported.append(given.exc_value))
    raise_on_signals()
    RaisesWhenFinalized()
    assert [type(error) for error in reported] == [ValueError]
