"""What the cores take from a front end besides their options, and what they give back."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from scbench_ci.executors.output import EveryLine
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.results.baseline import Baseline
from scbench_ci.results.model import RunResult
from scbench_ci.trust.terminal import inert

Echo = Callable[[], AbstractContextManager[TextIO | None]]
"""Opened around the runs: the stream their output and progress go to (None: not shown). The
front end wraps it as it needs (a workflow's log group, its commands stopped; `EveryLine` for
every line of the set-up too)."""
__all__ = ["BaselineSource", "Echo", "EveryLine", "Outcome", "Warn", "no_baseline", "say"]
Warn = Callable[[str], None]
"""Shows a notice that does not stop the run (the local executor's lack of isolation)."""
BaselineSource = Callable[[], Baseline | None]
"""The run to compare with, asked for once the inputs are known to be good and before anything
runs: a bad input costs no download, a bad baseline no run."""


@dataclass(frozen=True)
class Outcome:
    """A run's end: its result, the results.json written, and the exit code it makes."""

    result: RunResult
    results_path: Path | None
    """None: a check that `--changed-since` left nothing to check."""
    exit_code: ExitCode


def no_baseline() -> None:
    return None


def say(stream: TextIO | None, line: str | None) -> None:
    """`line`, when there is one, where the runs' output goes (nowhere when not shown): one
    line, inert, whatever it quotes."""
    if stream is not None and line is not None:
        stream.write(inert(line, one_line=True) + "\n")
