"""scbench-ci: evaluate a submission against an SCBench problem checkpoint.

The package, its layers top to bottom (DESIGN.md "Layers"); a layer imports only the ones below
it, and `.importlinter` holds it to that:

front ends   cli/             the command line: arguments in, a command's core called, exit code out
             action/          the GitHub Action: INPUT_* in, a command's core called, then
                              published (`publish`: a `workflow_run` event's triggering run)
             __main__.py      `python -m scbench_ci`, the CLI
             api.py           the Python API: plain values in, a command's core called, typed
                              results out (its names re-exported here, imported when first used)
commands     commands/        one core per command (evaluate, check, merge, plan, summary, cleanup):
                              typed options in, a result and a written output folder out
pipeline     options.py       one options type per command, built once by either front end
             check/           `check`: a problem's static findings, then findings from its runs
  (a stage   evaluation.py    the run: its jobs side by side by an engine, the one that timed out
  imports                     beside extra jobs run again, repeats combined; the run's results
  the ones   job_evaluation.py one job: problem -> workspace -> command -> executor -> reports
  below it)                   -> results, written into its job folder (or an earlier one reused)
             placement.py     where a job's run takes place: this machine's executor, or a node
                              of a Ray cluster (the workspace and the outcome as bytes)
             merge.py         the shards of a matrix as one run
             matrix.py        GitHub's `strategy.matrix`: one entry per checkpoint, or timed shards
             outputs/         what people and workflows read: summary, console report, progress,
                              exit status; github/: workflow commands, annotations, the REST API,
                              artifacts, the pull request comment, the Check Run, the event
             results/         each checkpoint's result, policy and verdict; results.json written and
                              read back; a baseline and the comparison with it; the history across
                              runs and its trends; check's findings; SCBench's own result files
             reports.py       pytest-json-report and CTRF read into test outcomes
             plan.py          problems x checkpoints x submissions -> jobs
             command.py       the uvx/pytest command line and the variables the tests see
             environment.py   how a submission is set up and started
             fingerprint.py   what `--skip-existing` compares
             workspace.py     the folder the tests run in: submission, selected tests, assets,
                              pytest.ini, .scbench/
             problem/         config.yaml, read by a hardened loader, as a typed problem
engines      engines/         how jobs run side by side: the pool (`--jobs`), its admission by
                              measured load (`auto`), and the Ray cluster (`--engine ray`)
executors    executors/       where tests run, behind one `Executor` shape (`choice.py` names them
                              and makes one): local, and docker/ (its settings, the daemon, the
                              evaluation image, the container, its caches, the tar transfer,
                              cleanup); the phases, logs and processes both share
base         error_handler.py the one catch-all: an error as its exit code and one line, an
                              unexpected exception as exit code 3 and a crash log
             trust/           the guarded tree reader, the one output-folder writer, the reports'
                              seal, signatures for reuse, strict JSON, the escapers (markdown,
                              terminal text) and the rule for names
             option_values.py the one set of parsers of option text (numbers, booleans, seconds)
             errors.py        errors the user can act on, and the exit codes
             signals.py       Ctrl-C and SIGTERM as exceptions, the first only: every cleanup runs
             version.py       the package's one version
             standalone/      scripts run as processes of their own (the test runner, the
                              subreaper): they import nothing of the package
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from scbench_ci.version import __version__

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
    "scbench_ci.errors": ("ExitCode", "InfrastructureError", "ScbenchError", "UsageError"),
    "scbench_ci.executors.base": ("ImageRecord",),
    "scbench_ci.plan": ("Target",),
    "scbench_ci.problem.model": ("Group",),
    "scbench_ci.reports": ("Status",),
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
    from scbench_ci.errors import ExitCode, InfrastructureError, ScbenchError, UsageError
    from scbench_ci.executors.base import ImageRecord
    from scbench_ci.plan import Target
    from scbench_ci.problem.model import Group
    from scbench_ci.reports import Status
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
