"""What `check` finds in a problem: one finding per defect, each where it is (file and line)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Stage(StrEnum):
    STATIC = "static"
    COLLECTION = "collection"
    ORACLE = "oracle"
    EMPTY = "empty"
    FLAKY = "flaky"
    TIME = "time"


@dataclass(frozen=True)
class Finding:
    stage: Stage
    severity: Severity
    file: str
    """POSIX, relative to the folder the check was given (a repository root), by default the
    problem folder's parent: `<problem>/tests/test_checkpoint_1.py`."""
    line: int | None
    """From 1; None when the defect is the file's as a whole (or a file that is missing)."""
    message: str
    checkpoint: str | None = None
    test: str | None = None
    """The test's node id, as pytest names it in the workspace: `tests/<file>::<name>`."""


@dataclass(frozen=True)
class CheckReport:
    """What `check` found in one problem."""

    findings: tuple[Finding, ...]
    skipped: frozenset[Stage] = field(default_factory=frozenset)
    """Stages not run: all but static for a problem with static errors; flaky and time for a
    problem without reference solutions."""
    infrastructure: tuple[str, ...] = ()
    """Why runs could not be judged, for a cause outside the problem: those parts have no
    verdict."""

    @property
    def passed(self) -> bool:
        return not self.infrastructure and not any(
            finding.severity is Severity.ERROR for finding in self.findings
        )

    def counts(self, stage: Stage) -> tuple[int, int] | None:
        """The stage's errors and warnings; None when it was not run."""
        if stage in self.skipped:
            return None
        found = [finding.severity for finding in self.findings if finding.stage is stage]
        return found.count(Severity.ERROR), found.count(Severity.WARNING)


def finding_path(path: Path, base: Path) -> str:
    """`path` as findings name it: relative to `base` when inside it, else as it is."""
    return (path.relative_to(base) if path.is_relative_to(base) else path).as_posix()


def finding_to_json(finding: Finding) -> dict[str, Any]:
    return asdict(finding) | {"stage": str(finding.stage), "severity": str(finding.severity)}


def finding_from_json(data: Mapping[str, Any]) -> Finding:
    """The inverse of `finding_to_json`; ValueError on anything else."""
    try:
        stage = Stage(data["stage"])
        severity = Severity(data["severity"])
        file, line, message = data["file"], data["line"], data["message"]
        checkpoint, test = data.get("checkpoint"), data.get("test")
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a finding: {error!s}") from None
    if not isinstance(file, str) or not isinstance(message, str):
        raise ValueError("not a finding: file and message must be strings")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        raise ValueError(f"not a finding: line must be a number from 1 or null, got {line!r}")
    for name, value in (("checkpoint", checkpoint), ("test", test)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"not a finding: {name} must be a string or null, got {value!r}")
    return Finding(stage, severity, file, line, message, checkpoint, test)
