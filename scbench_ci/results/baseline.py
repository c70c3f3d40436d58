"""Earlier runs: the results.json a `--baseline` or `merge` names (the file, or a folder
holding it), read and compared with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from scbench_ci.results.compare import compare
from scbench_ci.results.file import RESULTS_FILE, ResultsError, load_results
from scbench_ci.results.model import RunResult

MAX_DEPTH = 2
"""A folder's results.json may be this deep: actions/download-artifact puts each artifact in a
folder of its own name."""


def results_files(path: Path, option: str) -> list[Path]:
    """`path` itself, or every results.json in the folder `path`, at most MAX_DEPTH below it
    (none in a folder that holds one at its top); a ResultsError when there is none."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ResultsError(f"{option}: {path}: no such file or folder")
    found = _find(path, MAX_DEPTH)
    if not found:
        raise ResultsError(f"{option}: {path}: holds no {RESULTS_FILE}")
    return found


def results_file(path: Path, option: str) -> Path:
    """The one results.json that `path` names or holds."""
    found = results_files(path, option)
    if len(found) > 1:
        shown = ", ".join(str(file) for file in found[:5])
        raise ResultsError(
            f"{option}: {path} holds {len(found)} {RESULTS_FILE} files ({shown}); name one"
        )
    return found[0]


def _find(folder: Path, depth: int) -> list[Path]:
    own = folder / RESULTS_FILE
    if own.is_file() and not own.is_symlink():
        return [own]
    if depth == 0:
        return []
    found: list[Path] = []
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink():
            found += _find(child, depth - 1)
    return found


@dataclass(frozen=True)
class Baseline:
    run: RunResult
    source: str
    """What the comparison names as its baseline: the file, or the artifact it came from."""


def load_baseline(path: Path, option: str = "--baseline", source: str | None = None) -> Baseline:
    """The earlier run in `path` (a results.json of any schema version, or a folder holding
    one), read before anything runs so a bad baseline costs nothing."""
    file = results_file(path, option)
    return Baseline(load_results(file), source or str(file))


def compared(run: RunResult, baseline: Baseline | None) -> RunResult:
    """The run with its comparison against the baseline, when there is one."""
    if baseline is None:
        return run
    return replace(run, comparison=compare(run, baseline.run, baseline.source))


def baseline_durations(baseline: Baseline | None) -> dict[str, float]:
    """Each checkpoint's duration in the baseline, by `<problem>/<checkpoint>`."""
    if baseline is None:
        return {}
    return {
        f"{problem.name}/{checkpoint.name}": checkpoint.duration_s
        for problem, checkpoint in baseline.run.checkpoints()
    }


def test_times(run: RunResult | None) -> Callable[[str], dict[str, float]]:
    """The seconds each test of a checkpoint of `run` took, by test id, for the checkpoint's
    `<problem>/<checkpoint>` (read when asked; none when unknown or unreadable)."""
    checkpoints = (
        {}
        if run is None
        else {
            f"{problem.name}/{checkpoint.name}": checkpoint
            for problem, checkpoint in run.checkpoints()
            if not checkpoint.infrastructure_failure
        }
    )

    def times(key: str) -> dict[str, float]:
        checkpoint = checkpoints.get(key)
        if checkpoint is None:
            return {}
        try:
            return {test.id: test.duration_s for test in checkpoint.tests}
        except ResultsError:
            return {}

    return times
