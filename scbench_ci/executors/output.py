"""A phase's output: kept in a log file (capped, head and tail) and echoed live, without the
test runner's own lines and, for the set-up, without the lines that say nothing went wrong
(SETUP_LOG_ONLY), unless the console shows every line (`EveryLine`, the CLI's `--verbose`)."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from scbench_ci.standalone.pytest_runner import SEAL_PREFIX, START_PREFIX
from scbench_ci.trust.terminal import terminal_text

MAX_LOG_BYTES = 16 * 1024 * 1024
TAIL_BYTES = 256 * 1024
LOG_ONLY_PREFIXES = (START_PREFIX, SEAL_PREFIX)
"""The test runner's start and seal lines: the evaluator reads them in the log; on a console
they are noise (a key's digest)."""
SETUP_LOG_ONLY = (
    # uv's account of what it did, in the setup (`uv init`, `uv add`) and in the cached
    # environment's finish (the tests' first `uv run`).
    "Initialized project ",
    "Using CPython ",
    "Creating virtual environment at: ",
    "Resolved ",
    "Prepared ",
    "Installed ",
    "Uninstalled ",
    "Audited ",
    "   Building ",
    "      Built ",
    " + ",
    " - ",
    "warning: Failed to hardlink files; falling back to full copy.",
    "         If the cache and target directories are on different filesystems, hardlinking ",
    "         If this is intentional, set `export UV_LINK_MODE=copy`",
    # SCBench's `uv add -r requirements.txt || true` without a requirements.txt: expected.
    "error: File not found: requirements.txt",
    # scbench-ci's own, where a cached environment or the image was had as always.
    "[scbench-ci] test runner: the cached environment of volume ",
    "[scbench-ci] setup: not run here; ",
    "[scbench-ci] image ",
)
"""Set-up lines that mean nothing went wrong: kept in setup.log, not echoed (unless
`EveryLine`). A failing command is still said (`setup command failed with exit code N`)."""
_LINE_PIECES = re.compile(r"[^\n]*\n|[^\n]+")


class EveryLine:
    """A console that is shown every line of the set-up too (the CLI's `--verbose`): a stream
    for a LogSink's `echo`, which writes to `stream`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class LogOnlyLines:
    """Text as it comes, in pieces, without the lines that start with one of `prefixes`. Only
    the start of a line that may still become one of them is held back: the rest is passed on
    at once (pytest's progress dots as they come)."""

    def __init__(self, prefixes: tuple[str, ...] = LOG_ONLY_PREFIXES) -> None:
        self._prefixes = prefixes
        self._held = ""
        """The start of a line, undecided."""
        self._passing = False
        """The line goes to the console (it started with none of the prefixes)."""
        self._dropping = False

    def feed(self, text: str) -> str:
        shown = []
        for piece in _LINE_PIECES.findall(text):
            if self._passing:
                shown.append(piece)
            elif not self._dropping:
                self._held += piece
                line = self._held.removesuffix("\n")
                if line.startswith(self._prefixes):
                    self._dropping, self._held = True, ""
                elif not any(prefix.startswith(line) for prefix in self._prefixes):
                    shown.append(self._held)
                    self._passing, self._held = True, ""
            if piece.endswith("\n"):
                shown.append(self.flush())  # a whole line too short to be one of them
                self._passing = self._dropping = False
        return "".join(shown)

    def flush(self) -> str:
        """What is held back: the start of a line that did not become one of them."""
        held, self._held = self._held, ""
        return held


class LogSink:
    """Writes a byte stream to `path` and `echo`.

    Past `max_bytes - tail_bytes` only the last `tail_bytes` are kept (pytest's summary and the
    runner's seal come last), written out when the sink is closed. The thread that reads a
    command's output may still write when a stopped run closes the sink (Ctrl-C): what comes
    after the close is dropped, never written to a closed file.
    """

    def __init__(
        self,
        path: Path,
        echo: TextIO | None,
        max_bytes: int = MAX_LOG_BYTES,
        tail_bytes: int = TAIL_BYTES,
        *,
        setup: bool = False,
    ) -> None:
        """`setup`: the log of the set-up, whose lines that mean nothing went wrong
        (SETUP_LOG_ONLY) are not echoed, unless `echo` is EveryLine."""
        self._file = path.open("wb")
        self._echo = echo
        quiet = setup and not isinstance(echo, EveryLine)
        self._shown = LogOnlyLines(LOG_ONLY_PREFIXES + (SETUP_LOG_ONLY if quiet else ()))
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_bytes = max_bytes - tail_bytes
        self._tail_bytes = tail_bytes
        self._tail = bytearray()
        self.total_bytes = 0
        self._line_open = False
        self._closed = False

    def write(self, chunk: bytes) -> None:
        if self._closed:
            return
        room = max(0, self._head_bytes - self.total_bytes)
        self.total_bytes += len(chunk)
        if room:
            self._keep(chunk[:room])
        if len(chunk) > room:
            self._tail += chunk[room:]
            del self._tail[: max(0, len(self._tail) - self._tail_bytes)]

    def note(self, text: str) -> None:
        """A line from scbench-ci itself, always kept, after the output so far."""
        if not self._closed:
            self._note(text)

    def _note(self, text: str) -> None:
        if self._tail:
            prefix = "" if self._tail.endswith(b"\n") else "\n"
            self._tail += f"{prefix}[scbench-ci] {text}\n".encode()
            return
        prefix = "\n" if self._line_open else ""
        self._keep(f"{prefix}[scbench-ci] {text}\n".encode())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._tail:
            tail = bytes(self._tail)
            self._tail.clear()
            self._note(
                f"output truncated: {self.total_bytes} bytes written, the first "
                f"{self._head_bytes} and the last {len(tail)} kept"
            )
            self._keep(tail)
        self._file.close()
        if self._echo is not None:
            rest = self._shown.feed(self._decoder.decode(b"", final=True))
            self._show(self._echo, rest + self._shown.flush())

    def _keep(self, data: bytes) -> None:
        self._line_open = not data.endswith(b"\n")
        try:
            self._file.write(data)
        except ValueError:
            # Closed by the run's end between the reader's check and this write: dropped.
            if not self._file.closed:
                raise
            return
        if self._echo is not None:
            self._show(self._echo, self._shown.feed(self._decoder.decode(data)))

    @staticmethod
    def _show(echo: TextIO, text: str) -> None:
        if text:
            # The log file keeps the raw bytes; a terminal gets them inert.
            echo.write(terminal_text(text))
            echo.flush()

    def __enter__(self) -> LogSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
