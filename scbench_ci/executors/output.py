"""A phase's output: kept in a log file (capped, head and tail) and echoed live."""

from __future__ import annotations

import codecs
from pathlib import Path
from types import TracebackType
from typing import TextIO

from scbench_ci.trust.terminal import terminal_text

MAX_LOG_BYTES = 16 * 1024 * 1024
TAIL_BYTES = 256 * 1024


class LogSink:
    """Writes a byte stream to `path` and `echo`.

    Past `max_bytes - tail_bytes` only the last `tail_bytes` are kept (pytest's summary and the
    runner's seal come last), written out when the sink is closed.
    """

    def __init__(
        self,
        path: Path,
        echo: TextIO | None,
        max_bytes: int = MAX_LOG_BYTES,
        tail_bytes: int = TAIL_BYTES,
    ) -> None:
        self._file = path.open("wb")
        self._echo = echo
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_bytes = max_bytes - tail_bytes
        self._tail_bytes = tail_bytes
        self._tail = bytearray()
        self.total_bytes = 0
        self._line_open = False

    def write(self, chunk: bytes) -> None:
        room = max(0, self._head_bytes - self.total_bytes)
        self.total_bytes += len(chunk)
        if room:
            self._keep(chunk[:room])
        if len(chunk) > room:
            self._tail += chunk[room:]
            del self._tail[: max(0, len(self._tail) - self._tail_bytes)]

    def note(self, text: str) -> None:
        """A line from scbench-ci itself, always kept, after the output so far."""
        if self._tail:
            prefix = "" if self._tail.endswith(b"\n") else "\n"
            self._tail += f"{prefix}[scbench-ci] {text}\n".encode()
            return
        prefix = "\n" if self._line_open else ""
        self._keep(f"{prefix}[scbench-ci] {text}\n".encode())

    def close(self) -> None:
        if self._tail:
            tail = bytes(self._tail)
            self._tail.clear()
            self.note(
                f"output truncated: {self.total_bytes} bytes written, the first "
                f"{self._head_bytes} and the last {len(tail)} kept"
            )
            self._keep(tail)
        self._file.close()

    def _keep(self, data: bytes) -> None:
        self._line_open = not data.endswith(b"\n")
        self._file.write(data)
        if self._echo is not None:
            # The log file keeps the raw bytes; a terminal gets them inert.
            self._echo.write(terminal_text(self._decoder.decode(data)))
            self._echo.flush()

    def __enter__(self) -> LogSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
