"""A phase's output: kept in a log file (capped) and echoed live."""

from __future__ import annotations

import codecs
from pathlib import Path
from types import TracebackType
from typing import TextIO

MAX_LOG_BYTES = 16 * 1024 * 1024


class LogSink:
    """Writes a byte stream to `path` and `echo`; past `max_bytes` it only counts."""

    def __init__(self, path: Path, echo: TextIO | None, max_bytes: int = MAX_LOG_BYTES) -> None:
        self._file = path.open("wb")
        self._echo = echo
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max_bytes = max_bytes
        self.total_bytes = 0
        self._line_open = False

    def write(self, chunk: bytes) -> None:
        room = self._max_bytes - self.total_bytes
        self.total_bytes += len(chunk)
        if room <= 0:
            return
        kept = chunk[:room]
        self._line_open = not kept.endswith(b"\n")
        self._file.write(kept)
        if self._echo is not None:
            self._echo.write(self._decoder.decode(kept))
            self._echo.flush()

    def note(self, text: str) -> None:
        """A line from scbench-ci itself, always written."""
        prefix = "\n" if self._line_open else ""
        line = f"{prefix}[scbench-ci] {text}\n"
        self._line_open = False
        self._file.write(line.encode())
        if self._echo is not None:
            self._echo.write(line)
            self._echo.flush()

    def close(self) -> None:
        if self.total_bytes > self._max_bytes:
            self.note(
                f"output truncated: {self.total_bytes} bytes written, "
                f"the first {self._max_bytes} kept"
            )
        self._file.close()

    def __enter__(self) -> LogSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
