"""The test runner's packages, pytest's command line and the variables the tests see."""

from __future__ import annotations

from scbench_ci.executors.base import PYTEST_INI, REPORTS_DIR, WORKSPACE_TESTS_DIR, TestCommand
from scbench_ci.problem.model import Checkpoint, Problem
from scbench_ci.trust.seal import CTRF_REPORT, PYTEST_REPORT
from scbench_ci.workspace import ASSETS_DIR

PYTEST_PLUGINS = (
    "pytest",
    "pytest-json-ctrf",
    "pytest-json-report",
    "pytest-timeout",
    "jsonschema",
    "deepdiff",
)
RERUN_PLUGIN = "pytest-rerunfailures"
"""Only in the runner's environment of a run with reruns: without them, the environment (and the
Docker executor's cache key for it) is what it always was."""


def build_command(
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    entrypoint: str,
    environment_env: dict[str, str],
    test_timeout_s: float | None = None,
    pytest_args: tuple[str, ...] = (),
    reruns: int = 0,
) -> TestCommand:
    """`reruns`: how many times a failing test is run again in the same session
    (pytest-rerunfailures); the runner records each rerun test's first failure in the JSON
    report."""
    if reruns < 0:
        raise ValueError(f"reruns must be 0 or more, not {reruns}")
    timeout = per_test_timeout(checkpoint, test_timeout_s)
    # An explicit ini file: none of the submission's (pytest.ini, tox.ini, setup.cfg,
    # pyproject.toml) is ever looked for. No cache: nothing of an earlier run steers this one.
    args = [
        "-c",
        PYTEST_INI,
        "-p",
        "no:cacheprovider",
        WORKSPACE_TESTS_DIR,
        f"--entrypoint={entrypoint}",
        f"--checkpoint={checkpoint.name}",
        f"--ctrf={REPORTS_DIR}/{CTRF_REPORT}",
        "--json-report",
        f"--json-report-file={REPORTS_DIR}/{PYTEST_REPORT}",
        f"--timeout={_seconds(timeout)}",
        "-vv",
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
        test_timeout_s=timeout,
    )


def per_test_timeout(checkpoint: Checkpoint, override: float | None) -> float:
    """Each test's timeout: `--timeout` when given, else the checkpoint's (or its problem's)."""
    return override or checkpoint.timeout_s


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
