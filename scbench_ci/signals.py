"""SIGTERM (a cancelled workflow, `docker stop`) as an exception, so every cleanup still runs."""

from __future__ import annotations

import signal


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def raise_on_sigterm() -> None:
    signal.signal(signal.SIGTERM, _raise_terminated)
