"""A run and the proof of its reports, on the machine that runs it.

The seal's secret is made here, given only to the test runner, and checked here: it never leaves
the process that runs the executor, so a run on another node (`--engine ray`) sends back the
reports with the seal's verdict, never the secret.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace

from scbench_ci.executors.base import ExecutionRequest, ExecutionResult, Executor
from scbench_ci.foundation.layout import PYTEST_LOG, REPORTS_DIR
from scbench_ci.trust.seal import (
    Broken,
    ReportFiles,
    Seal,
    check_seal,
    read_report_files,
    sealed_inventory,
)


@dataclass(frozen=True)
class SealedRun:
    execution: ExecutionResult
    files: ReportFiles
    """The reports as they were read, once: the bytes the seal covers are the bytes parsed."""
    seal: Seal | Broken
    inventory: bytes | None = None
    """The runner's inventory of the tests (SCBench 1.0's rules), when sealed: by the seal, or
    for a run that ended unsealed by the line printed once the tests were collected."""


def run_sealed(executor: Executor, request: ExecutionRequest) -> SealedRun:
    """Run `request` (its `seal_key` unset) with a secret of its own, then read the reports
    the runner left in the workspace and check their seal. InfrastructureError as `execute`."""
    if request.seal_key:
        raise ValueError("run_sealed makes the seal's secret itself")
    seal_key = secrets.token_hex(32)
    execution = executor.execute(replace(request, seal_key=seal_key))
    # Read once, never through a link.
    files = read_report_files(request.workspace / REPORTS_DIR)
    log = request.log_dir / PYTEST_LOG
    seal = check_seal(log, files, seal_key, execution.exit_code)
    return SealedRun(execution, files, seal, sealed_inventory(log, files, seal_key, seal))
