"""A run's history: the runs before it that results.json carries forward from its baseline, and
the run itself as the last one, each as a compact record (its date, commit, and per checkpoint its
verdict, group counts, each test's status and its code quality's verbosity and erosion).
`carried_history` makes it, `history_json` writes and reads it, `trends` reads what it says.

It comes from files nobody vouches for (a baseline, an artifact): it is capped everywhere, and
nothing in it decides a verdict or an exit code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from scbench_ci.job.reports import Status
from scbench_ci.problem.model import Group
from scbench_ci.results.policy import GroupCounts

DEFAULT_WINDOW = 30
"""How many runs a history keeps, this one included (`--history`, input `history`)."""
MAX_WINDOW = 100
MAX_CHECKPOINTS = 1000
"""Checkpoints one record keeps: a run of more keeps its first ones."""
MAX_TESTS = 5000
"""Tests one checkpoint keeps over the history: a checkpoint of more keeps its first ones."""
MAX_ID_CHARS = 500
"""A test id, or a `problem/checkpoint` key, of more characters (or with a character that is
not printable) is not kept."""
MAX_COMMIT_CHARS = 64
MAX_BYTES = 4 * 1024**2
"""The history as compact JSON: past it, its oldest runs are left out."""


def checkpoint_key(problem: str, checkpoint: str) -> str:
    """How the history names a checkpoint: `problem/checkpoint`."""
    return f"{problem}/{checkpoint}"


def keeps(text: str) -> bool:
    """Whether a history can keep the id or key `text`."""
    return 0 < len(text) <= MAX_ID_CHARS and text.isprintable()


def kept_fingerprint(fingerprint: str | None) -> str | None:
    """A checkpoint's fingerprint as a history keeps it: a sha256 in hex, else unknown (a loaded
    baseline's is whatever its file says)."""
    if fingerprint is not None and re.fullmatch("[0-9a-f]{64}", fingerprint):
        return fingerprint
    return None


@dataclass(frozen=True)
class CheckpointRecord:
    passed: bool
    groups: Mapping[Group, GroupCounts]
    """Its counts per group (without the flaky count)."""
    outcomes: Mapping[str, Status]
    """Each test it ran: its id and status."""
    fingerprint: str | None = None
    """What it tested (results.json's `fingerprint`: the submission, the tests, the settings):
    runs of the same fingerprint had the same inputs. None when unknown."""
    verbosity: float | None = None
    """Its submission's verbosity (scb-check, 0-1); None when it was not measured."""
    erosion: float | None = None
    """Its submission's erosion (scb-check, 0-1); None when it was not measured."""


@dataclass(frozen=True)
class RunRecord:
    started_at: str
    commit: str | None
    """The commit evaluated (`GITHUB_SHA`), when known."""
    checkpoints: Mapping[str, CheckpointRecord]
    """By `checkpoint_key`, in the run's order."""


@dataclass(frozen=True)
class History:
    window: int
    """The most runs it keeps."""
    runs: tuple[RunRecord, ...]
    """Oldest first; the run that carries it last."""
