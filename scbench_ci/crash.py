"""The one catch-all: an unexpected exception is a bug of scbench-ci's, never a verdict.

It becomes exit code 3 and a log with the traceback and the versions, written where the run's
output goes, so no caller mistakes a crash for a failing submission.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import traceback
from pathlib import Path

from scbench_ci import __version__
from scbench_ci.errors import ScbenchError
from scbench_ci.trust.output_folder import prepare_output, write_file

CRASH_LOG = "crash.log"


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
    return (
        f"internal error ({type(error).__name__}: {error}); this is a bug in scbench-ci, not a "
        f"verdict. The traceback and versions are in {log}"
    )
