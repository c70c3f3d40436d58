"""The one catch-all, for both front ends: how a command that does not return ends.

An error the user can act on is its exit code and one line; Ctrl-C and SIGTERM are 130 and 143
(the first signal decides: those that follow while the run stops are ignored, `signals.py`);
an unexpected exception is a bug of scbench-ci's, never a verdict: exit code 3 and a log with the
traceback and the versions, written where the run's output goes, so no caller mistakes a crash
for a failing submission. Each front end says the line its own way.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.foundation.errors import ExitCode, ScbenchError
from scbench_ci.foundation.signals import Terminated, stops_raised
from scbench_ci.foundation.version import __version__
from scbench_ci.trust.output_folder import prepare_output, write_file

CRASH_LOG = "crash.log"
INTERRUPTED = 130
TERMINATED = 143
MESSAGE_CHARS = 300
"""A crash's exception in its one line: its first line, cut to this (the log has it whole)."""


@dataclass(frozen=True)
class Ending:
    """How a command ended without returning."""

    exit_code: int
    message: str
    cancelled: bool = False
    """Ctrl-C or SIGTERM (`message`: `interrupted`, `terminated`): no verdict, and no error."""
    lines: tuple[str, ...] = ()
    """The message as a terminal shows it, each one line (`ScbenchError.lines`); none: the
    message."""

    def shown_lines(self) -> tuple[str, ...]:
        return self.lines or (self.message,)


def handle_errors(
    command: Callable[[], int],
    report: Callable[[Ending], None],
    crash_folder: Path | None,
    interrupted: int = INTERRUPTED,
) -> int:
    """`command`'s exit code, or the ending's once `report` has said it. `crash_folder`: where a
    crash's log goes (else a new temporary file); `interrupted`: Ctrl-C's exit code (the action
    ends 143 whichever way it is cancelled)."""
    try:
        with stops_raised():
            return int(command())
    except ScbenchError as error:
        ending = Ending(int(error.exit_code), str(error), lines=error.lines())
    except KeyboardInterrupt:
        ending = Ending(interrupted, "interrupted", cancelled=True)
    except Terminated:
        ending = Ending(TERMINATED, "terminated", cancelled=True)
    except Exception as error:  # the catch-all: a crash is never read as a failing verdict
        log = write_crash_log(error, crash_folder)
        ending = Ending(int(ExitCode.INFRASTRUCTURE), crash_message(error, log))
    report(ending)
    return ending.exit_code


def write_crash_log(error: BaseException, folder: Path | None) -> Path:
    """The traceback and the versions, in `folder` (else in a new temporary file)."""
    text = "".join(
        [
            f"scbench-ci {__version__} crashed\n",
            f"python {platform.python_version()} on {platform.platform()}\n",
            f"command: {' '.join(sys.argv)}\n\n",
            *traceback.format_exception(error),
        ]
    ).encode()
    if folder is not None:
        try:
            return write_file(prepare_output(folder), CRASH_LOG, text)
        except (OSError, ScbenchError):
            pass
    with tempfile.NamedTemporaryFile(
        prefix="scbench-ci-crash-", suffix=".log", delete=False
    ) as log:
        log.write(text)
    return Path(log.name)


def crash_message(error: BaseException, log: Path) -> str:
    lines = str(error).strip().splitlines()
    said = lines[0] if lines else ""
    if len(said) > MESSAGE_CHARS or len(lines) > 1:
        said = f"{said[:MESSAGE_CHARS]} ..."
    return (
        f"internal error ({type(error).__name__}: {said}); this is a bug in scbench-ci, not "
        f"a verdict. The traceback and versions are in {log}"
    )
