"""A process a test starts ends with the test: one that outlives a failed assertion (a run that
did not stop on its signal) would load the machine, and decide the tests after it."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def ended_with_the_block(process: subprocess.Popen[Any]) -> Iterator[subprocess.Popen[Any]]:
    """`process`, killed (and its pipes read to the end) when the block ends while it runs."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
