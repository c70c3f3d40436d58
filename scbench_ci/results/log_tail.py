"""The tail of a run's log, as a failure quotes it: the last lines, capped in characters."""

from __future__ import annotations

from pathlib import Path

LOG_TAIL_LINES = 40
LOG_TAIL_CHARS = 6000


def log_tail(path: Path) -> str | None:
    """The log's last LOG_TAIL_LINES lines, at most LOG_TAIL_CHARS of them; None when there is
    no log. Only the end of a large log is read."""
    if not path.is_file():
        return None
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - LOG_TAIL_CHARS * 4))
        text = stream.read().decode("utf-8", errors="replace")
    tail = "\n".join(text.splitlines()[-LOG_TAIL_LINES:])
    return tail[-LOG_TAIL_CHARS:]
