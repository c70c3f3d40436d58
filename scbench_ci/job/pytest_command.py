"""The test runner's packages, pytest's command line and the variables the tests see."""

from __future__ import annotations

import json
from typing import Any

from scbench_ci.executors.base import TestCommand
from scbench_ci.foundation.layout import PYTEST_INI, REPORTS_DIR, WORKSPACE_TESTS_DIR
from scbench_ci.job.workspace import ASSETS_DIR
from scbench_ci.problem.model import Checkpoint, Problem
from scbench_ci.standalone.pytest_runner import INVENTORY_OPTION
from scbench_ci.trust.seal import CTRF_REPORT, INVENTORY, PYTEST_REPORT

PYTEST_PLUGINS = (
    "pytest",
    "pytest-json-ctrf",
    "pytest-json-report",
    "pytest-timeout",
    "jsonschema",
    "deepdiff",
)
MARKER_PASSES = ("error", "functionality", "regression", None)
"""SCBench 1.0's `--collect-only` passes of the evaluated checkpoint, by marker, in its order."""
_OWN_CONFIG = ("-c", PYTEST_INI, "-p", "no:cacheprovider")
"""What every session of the run's is given first: the generated ini file (none of the
submission's), no cache."""
TEST_CASE_VERBOSITY = 1
"""pytest's `verbosity_test_cases`: what -vv is for the tests' own lines (see
build_test_command)."""
RERUN_PLUGIN = "pytest-rerunfailures"
"""Only in the runner's environment of a run with reruns: without them, the environment (and the
Docker executor's cache key for it) is what it always was."""


def build_test_command(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    entrypoint: str,
    environment_env: dict[str, str],
    test_timeout_s: float,
    pytest_args: tuple[str, ...] = (),
    reruns: int = 0,
    inventory: tuple[Checkpoint, ...] | None = None,
) -> TestCommand:
    """`test_timeout_s`: each test's timeout (the job's, `plan.Job.test_timeout_s`). `reruns`:
    how many times a failing test is run again in the same session (pytest-rerunfailures); the
    runner records each rerun test's first failure in the JSON report. `inventory`: take SCBench
    1.0's inventory of the tests (`--scbench 1.0`), these being the prior checkpoints whose
    tests are included; None: none is taken."""
    if reruns < 0:
        raise ValueError(f"reruns must be 0 or more, not {reruns}")
    # An explicit ini file: none of the submission's (pytest.ini, tox.ini, setup.cfg,
    # pyproject.toml) is ever looked for. No cache: nothing of an earlier run steers this one.
    args = [
        *_OWN_CONFIG,
        WORKSPACE_TESTS_DIR,
        f"--entrypoint={entrypoint}",
        f"--checkpoint={checkpoint.name}",
        f"--ctrf={REPORTS_DIR}/{CTRF_REPORT}",
        "--json-report",
        f"--json-report-file={REPORTS_DIR}/{PYTEST_REPORT}",
        f"--timeout={_seconds(test_timeout_s)}",
        "-vv",
        # Under -vv, pytest writes a skipped or xfailed test's reason through its wrap_write,
        # which cuts away the start of the reason when the test's line is wider than the
        # terminal less 8 (80 columns without a terminal): `test_split XFAILdea for a later
        # version) [ 26%]`. At 1, for the tests' lines only, it trims the reason to fit instead.
        # Here, not in the ini file every session reads: under it, the inventory's
        # `--collect-only -q` passes print a tree, not the node ids SCBench's passes print.
        "-o",
        f"verbosity_test_cases={TEST_CASE_VERBOSITY}",
        *([f"--reruns={reruns}"] if reruns else []),
        *pytest_args,
    ]
    variables = {**environment_env, **checkpoint.env, "SCBENCH_CHECKPOINT": checkpoint.name}
    # As SCBench's runner sets them: relative to the workspace, the tests' working directory,
    # and only when the problem has static assets.
    if problem.static_assets:
        variables["SCBENCH_ASSETS_DIR"] = ASSETS_DIR
    for asset in problem.static_assets:
        variables[asset.env_name] = f"{ASSETS_DIR}/{asset.name}"
    return TestCommand(
        requirements=(
            *PYTEST_PLUGINS,
            *([RERUN_PLUGIN] if reruns else []),
            *problem.test_dependencies,
        ),
        pytest_args=tuple(args),
        variables=variables,
        runner_options=()
        if inventory is None
        else (
            INVENTORY_OPTION
            + json.dumps(inventory_spec(checkpoint, inventory, entrypoint, pytest_args)),
        ),
    )


def inventory_spec(
    checkpoint: Checkpoint,
    prior: tuple[Checkpoint, ...],
    entrypoint: str,
    pytest_args: tuple[str, ...],
) -> dict[str, Any]:
    """What the runner needs to take SCBench 1.0's inventory (`collection.py`
    `collect_checkpoint_tc`): its file, and each `--collect-only -q` pass with its command line
    as SCBench builds it (`_build_collect_cmd`: `-m <marker>` for each marker and once without,
    `-k <checkpoint>`, then one pass `-k <prior>` for each prior checkpoint), after the run's own
    configuration. With a `-k` among the pytest arguments, SCBench collects nothing
    (`_has_k_filter`): no pass, the runner only counts what it collects. With other pytest
    arguments, the runner runs the passes rather than reading them from its own session."""
    passes = (
        []
        if has_k_filter(pytest_args)
        else [
            *((marker, checkpoint.name) for marker in MARKER_PASSES),
            *((None, earlier.name) for earlier in prior),
        ]
    )
    return {
        "file": f"{REPORTS_DIR}/{INVENTORY}",
        "passes": [
            {
                "marker": marker,
                "keyword": name,
                "argv": [
                    *_OWN_CONFIG,
                    "--collect-only",
                    "-q",
                    f"--entrypoint={entrypoint}",
                    f"--checkpoint={name}",
                    *(["-m", marker] if marker is not None else []),
                    "-k",
                    name,
                    *pytest_args,
                    WORKSPACE_TESTS_DIR,
                ],
            }
            for marker, name in passes
        ],
        "passes_because": "pytest arguments were given, which may change what a pass prints "
        "or keeps"
        if passes and pytest_args
        else None,
    }


def has_k_filter(pytest_args: tuple[str, ...]) -> bool:
    """SCBench 1.0's `_has_k_filter`: the first argument that starts with `-k` is a filter (a
    bare `-k` only when a value follows)."""
    for index, arg in enumerate(pytest_args):
        if arg == "-k":
            return index + 1 < len(pytest_args)
        if arg.startswith("-k"):
            return True
    return False


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
