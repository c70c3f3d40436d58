"""The words of a workspace and of a job's folder, which every layer names: where the problem's
tests and the runner's reports are, the files only the evaluator makes, the logs a run leaves,
and where SCBench's environment puts the workspace and who runs the tests there."""

from __future__ import annotations

TESTS_DIR = "tests"
"""The problem's folder of tests; test ids and files in results.json name them under it."""
WORKSPACE_TESTS_DIR = ".evaluation_tests"
"""Where the problem's tests are staged in the workspace, as SCBench's runner stages them
(`WORKSPACE_TEST_DIR`, src/slop_code/common/constants.py); a submission's own `tests/` stays."""
PYTEST_INI = "pytest.ini"
REPORTS_DIR = ".scbench"
"""Where the test runner writes its reports, in the workspace."""
EVALUATOR_NAMES = (WORKSPACE_TESTS_DIR, REPORTS_DIR, PYTEST_INI)
"""The workspace's entries only the evaluator makes: all others are the submission's."""
REQUIREMENTS = "requirements.txt"
"""The submission's dependencies, which SCBench's default setup installs."""
SETUP_LOG = "setup.log"
PYTEST_LOG = "pytest.log"
QUALITY_LOG = "quality.log"
"""What the quality measure printed besides its report."""
SCBENCH_TESTS_USER = "1000:1000"
"""The user SCBench runs the tests as when its environment names none (`get_eval_user`)."""
SCBENCH_WORKDIR = "/workspace"
"""SCBench's default `docker.workdir`: where the workspace is and the tests run."""
