"""`scbench-ci` as a user runs it at a terminal: its output on a pseudo-terminal of a given
width, each piece with when it came."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from testing.cli import cli_argv


@dataclass(frozen=True)
class TerminalRun:
    returncode: int
    pieces: list[tuple[float, str]]
    """What it wrote, as it came: seconds since it started, and the text."""

    @property
    def output(self) -> str:
        return "".join(text for _, text in self.pieces)


def run_on_terminal(
    *args: str | Path, columns: int = 200, timeout: float = 600, env: dict[str, str] | None = None
) -> TerminalRun:
    """Its stdout and stderr on one terminal `columns` wide, no colour (NO_COLOR). COLUMNS and
    LINES are not passed on: Python takes them before the terminal's size, and the shell or the
    test runner this one runs in may have set them (COLUMNS=80 cut the status line)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    started = time.monotonic()
    process = subprocess.Popen(
        cli_argv(*args),
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={
            **{
                name: value
                for name, value in (env if env is not None else os.environ).items()
                if name not in ("COLUMNS", "LINES")
            },
            "NO_COLOR": "1",
            "TERM": "xterm",
        },
    )
    os.close(follower)
    pieces = []
    try:
        while time.monotonic() - started < timeout:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal is closed: every writer has exited
                break
            if not data:
                break
            pieces.append((time.monotonic() - started, data.decode("utf-8", "replace")))
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
        process.wait()
    return TerminalRun(process.returncode, pieces)
