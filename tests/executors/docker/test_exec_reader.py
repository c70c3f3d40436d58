"""The thread that reads a command's output: a failure of its reading is the waiting thread's to
raise, never a traceback printed from the thread (a Ctrl-C closes the connection and the log under
it: tests/integration/test_cancel.py)."""

from __future__ import annotations

import threading

import pytest

from scbench_ci.executors.docker.exec import _Reader
from scbench_ci.foundation.errors import InfrastructureError


def test_a_failed_read_is_raised_by_the_waiting_thread_and_printed_by_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    printed: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", printed.append)

    def read() -> None:
        raise ValueError("PyMemoryView_FromBuffer(): info->buf must not be NULL")

    reader = _Reader(read)
    reader.join()
    assert printed == []
    with pytest.raises(InfrastructureError, match=r"reading the output .* info->buf"):
        reader.raise_failure()


def test_a_read_to_its_end_raises_nothing() -> None:
    read: list[int] = []
    reader = _Reader(lambda: read.append(1))
    reader.join()
    reader.raise_failure()
    assert read == [1]
