"""scbench-ci: evaluate a submission against an SCBench problem checkpoint.

This module only names the Python API (docs/api.md). The package's layers, the path of one
evaluation through them and where to add an option, an executor, an output format or a pass
policy: docs/architecture.md; `.importlinter` holds the layers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from scbench_ci.foundation.version import __version__

# The API's names (docs/api.md), each imported from its module when first used: every
# `scbench_ci.<module>` import and every CLI run imports this package, and should not pay for
# the whole pipeline and the Docker SDK that the API imports.
__all__ = [
    "CheckReport",
    "CheckResult",
    "CheckpointResult",
    "EvaluationResult",
    "ExitCode",
    "Failure",
    "FailureKind",
    "Finding",
    "Group",
    "GroupCounts",
    "ImageRecord",
    "InfrastructureError",
    "ProblemResult",
    "RepeatCount",
    "RunResult",
    "ScbenchError",
    "Session",
    "Severity",
    "Stage",
    "Status",
    "Target",
    "TestResult",
    "UsageError",
    "__version__",
    "check_problems",
    "evaluate",
    "history",
]
_HOMES = {
    "scbench_ci.api": (
        "CheckResult",
        "EvaluationResult",
        "Session",
        "check_problems",
        "evaluate",
        "history",
    ),
    "scbench_ci.foundation.errors": (
        "ExitCode",
        "InfrastructureError",
        "ScbenchError",
        "UsageError",
    ),
    "scbench_ci.executors.base": ("ImageRecord",),
    "scbench_ci.job.plan": ("Target",),
    "scbench_ci.problem.model": ("Group",),
    "scbench_ci.job.reports": ("Status",),
    "scbench_ci.results.findings": ("CheckReport", "Finding", "Severity", "Stage"),
    "scbench_ci.results.model": (
        "CheckpointResult",
        "Failure",
        "FailureKind",
        "ProblemResult",
        "RepeatCount",
        "RunResult",
        "TestResult",
    ),
    "scbench_ci.results.policy": ("GroupCounts",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

if TYPE_CHECKING:
    from scbench_ci.api import (
        CheckResult,
        EvaluationResult,
        Session,
        check_problems,
        evaluate,
        history,
    )
    from scbench_ci.executors.base import ImageRecord
    from scbench_ci.foundation.errors import ExitCode, InfrastructureError, ScbenchError, UsageError
    from scbench_ci.job.plan import Target
    from scbench_ci.job.reports import Status
    from scbench_ci.problem.model import Group
    from scbench_ci.results.findings import CheckReport, Finding, Severity, Stage
    from scbench_ci.results.model import (
        CheckpointResult,
        Failure,
        FailureKind,
        ProblemResult,
        RepeatCount,
        RunResult,
        TestResult,
    )
    from scbench_ci.results.policy import GroupCounts


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'scbench_ci' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
