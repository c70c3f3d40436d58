"""Every option of scbench-ci's commands, declared once (`Option`): the CLI's flags and their help
(`cli/arguments.add_options`), the action's inputs and their defaults (`action/inputs.py`;
action.yml is held to them by a test), the Python API's keywords (`api.py`: typed signatures whose
defaults are these, held to them by a test), the parser of their text wherever it is given, and
the field of each command's options they set (`options.fields_of`) all come from here. An
executor's settings are declared as the fields of its settings type (`executors/choice.py`).

A new option: its declaration here (or a field of an executor's settings), in the lists of the
commands that take it (`EVALUATE`, `CHECK`, ... for the CLI; `ACTION_INPUTS` and action.yml's
entry for the action); the field it sets in the options type; for the API, its keyword in the
signature; and the code where it takes effect. tests/options/test_declared.py says what is missing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from pathlib import Path

from scbench_ci.engines.admission import AUTO, JobCount
from scbench_ci.executors.choice import (
    DEFAULT_EXECUTOR,
    EXECUTOR_NAMES,
    EXECUTOR_SUMMARIES,
    backend,
    executor_name,
)
from scbench_ci.executors.choice import (
    EXECUTOR_SETTINGS as EXECUTOR_SETTINGS,  # every executor's settings, with the other options
)
from scbench_ci.executors.docker.labels import CACHE_LABEL, LEGACY_CACHE_VOLUME
from scbench_ci.executors.processes import OWNER_LABEL, parse_owner
from scbench_ci.foundation.option_values import (
    BadValue,
    Option,
    boolean,
    choice,
    duration,
    optional_text,
    path,
    seconds,
    shell_words,
    whole_number,
    words,
)
from scbench_ci.foundation.scbench_runner import DEFAULT_SCBENCH, SCBENCH_NAMES
from scbench_ci.job.plan import CHECKPOINT_PLACEHOLDER, PROBLEM_PLACEHOLDER
from scbench_ci.problem.model import CHECKPOINT_NAME_RULE, is_checkpoint_name
from scbench_ci.results import details, fail_on
from scbench_ci.results.history_model import DEFAULT_WINDOW, MAX_WINDOW
from scbench_ci.results.policy import DEFAULT_POLICY, POLICY_NAMES

ENGINES = ("local", "ray")
DEFAULT_RAY_ADDRESS = "auto"
"""Ray's own default: the cluster this machine is a node of (RAY_ADDRESS when set)."""
UNEXPANDED_TOKEN = "${{ github.token }}"
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_RAY_ADDRESS = re.compile(r"(ray://)?[A-Za-z0-9._\-\[\]:]{1,200}:[0-9]{1,5}")
_ACTION_ONLY = "the action's own: how a step publishes to GitHub"


def job_count(option: str, value: str) -> JobCount:
    """`auto`, or a whole number of at least 1."""
    return AUTO if value == AUTO else whole_number(option, value, least=1)


def ray_address(option: str, value: str) -> str:
    """`auto`, or HOST:PORT of a Ray cluster's head (ray://HOST:PORT through Ray Client)."""
    if value != DEFAULT_RAY_ADDRESS and not _RAY_ADDRESS.fullmatch(value):
        raise BadValue(option, f"{value[:200]!r} is not auto or HOST:PORT of a Ray cluster's head")
    return value


def checkpoint_choice(option: str, value: str) -> str:
    """A checkpoint's name, or `all`."""
    if value != "all" and not is_checkpoint_name(value):
        raise BadValue(option, f"{value!r} is not a checkpoint name ({CHECKPOINT_NAME_RULE})")
    return value


def submission_template(option: str, value: str) -> str:
    """A `--submission` value whose placeholders are all known: a typo (`{problems}`) would
    otherwise name a folder that does not exist, and every job would be `missing`."""
    known = (PROBLEM_PLACEHOLDER, CHECKPOINT_PLACEHOLDER)
    unknown = [found for found in _PLACEHOLDER.findall(value) if found not in known]
    if unknown:
        raise BadValue(
            option,
            f"{value!r}: unknown placeholder {unknown[0]} (the known ones: {', '.join(known)})",
        )
    return value


def owner(option: str, value: str) -> str:
    """`HOST/PID`."""
    if parse_owner(value) is None:
        raise BadValue(option, f"expected HOST/PID, got {value!r}")
    return value


def _one_of(choices: tuple[str, ...]) -> partial[str]:
    return partial(choice, choices=choices)


# What and against what (the API's `targets` name each job's problem, checkpoint and submission).
_TARGETS = "the API's `targets` name each job's problem, checkpoint and submission"
PROBLEM = Option(
    # `problems` inside: the repeated flag's values, one tuple.
    "problems",
    (),
    path,
    "a problem folder (holds config.yaml and tests/), or a folder of problem folders (a "
    "repository's problems/) for every problem in it; may be repeated",
    flag="--problem",
    input="problem",
    keyword=False,
    absent=f"{_TARGETS}; `check_problems` takes them as its first argument",
    metavar="DIR",
    required=True,
    repeated=True,
)
CHECKPOINT = Option(
    "checkpoint",
    None,
    checkpoint_choice,
    "the checkpoint to evaluate, or `all` for every one in order",
    flag="--checkpoint",
    input="checkpoint",
    keyword=False,
    absent=_TARGETS,
    metavar="NAME|all",
    # Empty: `plan` and `check` take every checkpoint, `evaluate` needs one.
    input_default="",
    required=True,
)
EVERY_CHECKPOINT = replace(
    CHECKPOINT,
    default="all",
    input_default=None,
    required=False,
    help="the checkpoint of every problem, or all of them (default: %(default)s)",
)
"""`plan`'s and `check`'s: every checkpoint unless one is named."""
SUBMISSION = Option(
    "submission",
    ".",
    submission_template,
    "the submission folder; `{problem}` is replaced by each problem's folder name and "
    "`{checkpoint}` by each checkpoint's name (runs/x/{problem}/{checkpoint}/snapshot, "
    "problems/{problem}/solutions/{checkpoint}). It is only read, never written.",
    flag="--submission",
    input="submission",
    keyword=False,
    absent=_TARGETS,
    metavar="DIR",
    required=True,
)
SAME_SUBMISSION = Option(
    "same_submission",
    False,
    boolean,
    "evaluate every problem against the one --submission folder, which has no `{problem}` "
    "(without it, several problems need `{problem}`)",
    flag="--same-submission",
    input="same_submission",
    keyword=False,
    absent=_TARGETS,
)
SELECT = Option(
    "select",
    (),
    words,
    "evaluate only this checkpoint of the problems given (a shard of `scbench-ci plan`); may "
    "be repeated, or hold several separated by spaces",
    flag="--select",
    input="select",
    keyword=False,
    absent=_TARGETS,
    metavar="PROBLEM/CHECKPOINT",
    repeated=True,
)
INCLUDE_PRIOR_TESTS = Option(
    "include_prior_tests",
    None,
    boolean,
    "also run earlier checkpoints' tests (as Regression)",
    flag="--include-prior-tests",
    input="include_prior_tests",
    off_help="run only the checkpoint's own tests",
)

# How the tests run (`evaluate` and `check`).
ENTRYPOINT = Option(
    "entrypoint",
    None,
    optional_text,
    "the command that runs the submission (default: from the environment)",
    flag="--entrypoint",
    input="entrypoint",
    metavar="CMD",
)
ENVIRONMENT = Option(
    "environment",
    None,
    path,
    "an SCBench environment YAML (setup commands, command, entry file)",
    flag="--environment",
    input="environment",
    metavar="FILE",
)
EXECUTOR = Option(
    "executor",
    DEFAULT_EXECUTOR,
    executor_name,
    f"where the tests run: {EXECUTOR_SUMMARIES} (default: %(default)s)",
    flag="--executor",
    absent="the action always runs the Docker executor: never a submission on the runner itself",
    choices=EXECUTOR_NAMES,
)
ENGINE = Option(
    "engine",
    "local",
    _one_of(ENGINES),
    "local: this machine, --jobs side by side; ray: each run a task on a Ray cluster, run by "
    "the Docker executor of the node it lands on (needs scbench-ci[ray]) (default: %(default)s)",
    flag="--engine",
    group="where the runs take place",
    absent="the action runs on its own runner; a cluster is for the CLI and the API",
    choices=ENGINES,
)
RAY_ADDRESS = Option(
    "ray_address",
    DEFAULT_RAY_ADDRESS,
    ray_address,
    "the Ray cluster to join with --engine ray: HOST:PORT of its head, or auto (the cluster "
    "this machine is a node of, or RAY_ADDRESS) (default: %(default)s)",
    flag="--ray-address",
    group="where the runs take place",
    absent="as engine's",
    metavar="ADDRESS",
)
ACTION_EXECUTOR = "docker"
"""The executor the action runs (EXECUTOR's `absent`); its settings are the action's inputs."""
TEST_TIMEOUT = Option(
    # The flag and input are pytest-timeout's word; the API's keyword and the options' field say
    # which of the two timeouts, the field in seconds (`_s`) as every duration field is.
    "test_timeout",
    None,
    seconds,
    "per-test timeout (default: the checkpoint's, the problem's, or 30)",
    flag="--timeout",
    input="timeout",
    field="test_timeout_s",
    metavar="S",
)
SESSION_TIMEOUT = Option(
    # The field in seconds (`_s`), as every duration field is.
    "session_timeout",
    1800.0,
    seconds,
    "wall-clock limit for the whole run of one checkpoint (default: %(default)g)",
    flag="--session-timeout",
    input="session_timeout",
    field="session_timeout_s",
    metavar="S",
)
JOBS = Option(
    "jobs",
    AUTO,
    job_count,
    "evaluations side by side, each in its own container: a number, or auto (one per core, "
    "and more while the CPU stays idle and memory allows; default: %(default)s)",
    flag="--jobs",
    short="-j",
    input="jobs",
    metavar="N|auto",
)
TEST_SHARDS = Option(
    # `test_shards` but for the flag: `plan --shards` is the matrix's (SHARDS), and the action,
    # which has both inputs, and the API tell them apart.
    "test_shards",
    1,
    job_count,
    "split each checkpoint's tests over N runs side by side, each a whole run of its own in "
    "its own container (by test file or class, what shares a module-scoped fixture together, "
    "balanced by the baseline's durations), their reports merged into the checkpoint's one "
    "result: a number, or auto (as many as the cores no other evaluation uses; default: "
    "%(default)s)",
    flag="--shards",
    input="test_shards",
    metavar="N|auto",
)
PYTEST_ARGS = Option(
    "pytest_args",
    (),
    shell_words,
    "arguments given to pytest as they are, after the run's own",
    input="pytest_args",
    input_default="",
    absent="the CLI takes them after `--` (`cli/main.py`); the API as a list of strings",
)

# The verdict and what the summary shows.
POLICY = Option(
    # The action's input is `pass_policy`, as published in v1.
    "policy",
    DEFAULT_POLICY,
    _one_of(POLICY_NAMES),
    "what makes a checkpoint pass (default: %(default)s)",
    flag="--policy",
    input="pass_policy",
    choices=POLICY_NAMES,
)
FAIL_ON_POLICY = Option(
    "fail_on_policy",
    True,
    boolean,
    "false is fail_on: never (kept for workflows written before fail_on)",
    input="fail_on_policy",
    keyword=False,
    absent="the action's, kept for workflows written before fail_on; elsewhere fail_on never",
)
FAIL_ON = Option(
    "fail_on",
    fail_on.DEFAULT_FAIL_ON,
    fail_on.parse_fail_on,
    f"what makes the exit code 1: {fail_on.FAIL_ON_HELP} (default: %(default)s)",
    flag="--fail-on",
    input="fail_on",
    metavar="RULES",
)
DETAILS = Option(
    "details",
    details.DEFAULT_DETAILS,
    _one_of(details.DETAILS),
    f"{details.DETAILS_HELP} (default: %(default)s)",
    flag="--details",
    input="details",
    keyword=False,
    absent="the API returns results, not a summary (its output folder's has the default)",
    choices=details.DETAILS,
)
HISTORY = Option(
    "history",
    DEFAULT_WINDOW,
    partial(whole_number, most=MAX_WINDOW),
    "how many runs results.json's history keeps, this one included, carried forward from the "
    "baseline's; the summary charts them (0: no history; at most "
    f"{MAX_WINDOW}; default: %(default)s)",
    flag="--history",
    input="history",
    keyword=False,
    absent="the API compares with no baseline, so it has no history to carry forward",
    metavar="N",
)
BASELINE = Option(
    "baseline",
    None,
    optional_text,
    "an earlier run's results.json, or a folder holding one: list the tests that regressed, "
    "were fixed, are new or were removed since",
    flag="--baseline",
    input="baseline",
    keyword=False,
    absent="the API returns the run's results for the program to compare",
    metavar="PATH",
)
BASELINE_BRANCH = Option(
    "baseline_branch",
    None,
    optional_text,
    "the branch whose runs `baseline: artifact:<name>` looks at",
    input="baseline_branch",
    keyword=False,
    absent="only the action downloads a baseline artifact of a branch's runs",
)

SCBENCH = Option(
    "scbench",
    DEFAULT_SCBENCH,
    _one_of(SCBENCH_NAMES),
    "whose rules decide: 1.0 (SCBench 1.0, what its users run now: the tests' inventory from "
    "--collect-only, its infrastructure rules and files) or paper (SCBench as the paper "
    "released it, January 2026) (default: %(default)s)",
    flag="--scbench",
    input="scbench",
    choices=SCBENCH_NAMES,
)
QUALITY = Option(
    "quality",
    True,
    boolean,
    "do not measure the submission's code quality (SCBench's verbosity and erosion, by "
    "scb-check) after each checkpoint's tests",
    flag="--no-quality",
    input="quality",
)

# Flaky tests and reuse.
RERUNS = Option(
    "reruns",
    0,
    whole_number,
    "rerun a failing test up to N times in its session (no new install); one that then passes "
    "is flaky (default: %(default)s)",
    flag="--reruns",
    input="reruns",
    group="flaky tests",
    metavar="N",
)
REPEAT = Option(
    "repeat",
    1,
    partial(whole_number, least=1),
    "run each checkpoint whole N times and count each test's passes; a test whose outcome "
    "differs is flaky (default: %(default)s)",
    flag="--repeat",
    input="repeat",
    group="flaky tests",
    # Empty: the command's (1, and 2 for `check`'s oracle runs).
    input_default="",
    metavar="N",
)
FLAKY_PASSES = Option(
    "flaky_passes",
    False,
    boolean,
    "count flaky tests as passed for the policy (default: as failed)",
    flag="--flaky-passes",
    input="flaky_passes",
    group="flaky tests",
)
SKIP_EXISTING = Option(
    "skip_existing",
    False,
    boolean,
    "reuse the results in --output of evaluations whose problem files, submission files and "
    "settings are unchanged, instead of running them again",
    flag="--skip-existing",
    input="skip_existing",
    keyword=False,
    absent="the API's runs are made fresh (without `output` there is nothing to reuse)",
)

# `check`, `plan`, `merge`, `summary`.
PLAN_BASELINE = replace(
    BASELINE,
    help="an earlier run's results.json (or a folder holding one): its checkpoint durations "
    "balance the shards",
)
SUMMARY_FAIL_ON = replace(
    FAIL_ON, help="the run's --fail-on, which the headline follows (default: %(default)s)"
)
CHECK_REPEAT = replace(
    REPEAT,
    default=2,
    group="",
    help="run each reference solution N times; a test whose outcome differs is flaky "
    "(default: %(default)s)",
)
CHECK_JOBS = replace(
    JOBS,
    help="runs side by side, each in its own container: a number, or auto (one per core, and "
    "more while the CPU stays idle and memory allows; default: %(default)s)",
)
ORACLE_POLICY = Option(
    "oracle_policy",
    "all-cases",
    _one_of(POLICY_NAMES),
    "what each reference solution must pass; the tests listed in tests/known_failures.txt are "
    "known to fail (default: %(default)s)",
    flag="--oracle-policy",
    input="oracle_policy",
    # `check`'s runs are judged by it.
    field="policy",
    choices=POLICY_NAMES,
)
CHANGED_SINCE = Option(
    "changed_since",
    None,
    optional_text,
    "check only the problems with files changed since this git ref (for a pull request, its "
    "base branch: the diff REF...HEAD, and changes not committed yet)",
    flag="--changed-since",
    input="changed_since",
    metavar="REF",
)
SHARDS = Option(
    "shards",
    None,
    partial(whole_number, least=1),
    "N matrix jobs of balanced length, instead of one per checkpoint",
    flag="--shards",
    input="shards",
    keyword=False,
    absent="the API has no `plan`",
    metavar="N",
)
RESULTS = Option(
    "results",
    (),
    path,
    "the results to merge: results.json files, or folders holding them",
    input="results",
    keyword=False,
    absent="the CLI's `merge` takes them as its arguments; the API has no `merge`",
    repeated=True,
)

# The action's step: which command, and how it publishes.
ACTION_COMMANDS = ("evaluate", "plan", "merge", "check", "publish")
"""The action's commands (`action/main.py`'s COMMANDS)."""
COMMAND = Option(
    "command",
    "evaluate",
    _one_of(ACTION_COMMANDS),
    "what the step does",
    input="command",
    keyword=False,
    absent="the CLI's command is its first argument; the API's, the function called",
    choices=ACTION_COMMANDS,
)
COMMENT = Option(
    "comment", False, boolean, "keep a pull request comment", input="comment", keyword=False,
    absent=_ACTION_ONLY,
)  # fmt: skip
CHECK_RUN = Option(
    "check_run", False, boolean, "create a Check Run", input="check_run", keyword=False,
    absent=_ACTION_ONLY,
)  # fmt: skip
GITHUB_TOKEN = Option(
    "github_token", None, optional_text, "the token for GitHub's API", input="github_token",
    keyword=False, absent=_ACTION_ONLY, input_default=UNEXPANDED_TOKEN,
)  # fmt: skip
JOB_SUMMARY = Option(
    "job_summary", True, boolean, "write the job summary", input="job_summary", keyword=False,
    absent=_ACTION_ONLY,
)  # fmt: skip
ANNOTATIONS = Option(
    "annotations", True, boolean, "annotate failing tests", input="annotations", keyword=False,
    absent=_ACTION_ONLY,
)  # fmt: skip
UPLOAD_ARTIFACT = Option(
    "upload_artifact", True, boolean, "upload the output folder", input="upload_artifact",
    keyword=False, absent=_ACTION_ONLY,
)  # fmt: skip
ARTIFACT_NAME = Option(
    "artifact_name",
    None,
    optional_text,
    "the name of that artifact (default: point to the folder of RESULTS_JSON)",
    flag="--artifact-name",
    input="artifact_name",
    keyword=False,
    absent="the API uploads nothing",
    metavar="NAME",
)
RETENTION_DAYS = Option(
    "retention_days", None, whole_number, "days to keep the artifact", input="retention_days",
    keyword=False, absent=_ACTION_ONLY,
)  # fmt: skip

# The CLI's own: where it writes and what it prints.
_OWN_OUTPUT = (
    "the action's output folder is always .scbench/ in its workspace, which it uploads; the "
    "API's `output` is optional (without it, a scratch folder removed before the call returns)"
)
OUTPUT = Option(
    # A folder: the field is `output_dir`, beside `summary`'s `--output`, a file (`output`).
    "output",
    Path(".scbench"),
    path,
    "where reports, logs and results.json go (default: ./.scbench)",
    flag="--output",
    short="-o",
    field="output_dir",
    keyword=False,
    absent=_OWN_OUTPUT,
    metavar="DIR",
)
CHECK_OUTPUT = replace(
    OUTPUT,
    help="where the runs' reports and logs, results.json and summary.md go (default: ./.scbench)",
)
MERGE_OUTPUT = replace(
    OUTPUT,
    help="where the merged results.json, summary.md and each checkpoint's reports go "
    "(default: ./.scbench)",
)
SUMMARY_OUTPUT = replace(
    OUTPUT,
    default=None,
    field="output",
    metavar="FILE",
    help="write the markdown to FILE (default: stdout)",
    absent="the action writes the job summary; the API returns results, not markdown",
)
QUIET = Option(
    "quiet",
    False,
    boolean,
    "do not stream the test output; print only the report",
    flag="--quiet",
    short="-q",
    keyword=False,
    absent="the terminal's: the action folds the output into a log group, the API prints only "
    "to `echo`",
)
CHECK_QUIET = replace(QUIET, help="do not show a line per finished run")
VERBOSE = Option(
    "verbose",
    False,
    boolean,
    "also show the set-up lines that mean nothing went wrong (uv's account of what it "
    "installed, the cached environments used); setup.log keeps them either way",
    flag="--verbose",
    short="-v",
    keyword=False,
    absent="the terminal's: the action's log and the API's `echo` get what the CLI shows without "
    "it; setup.log has every line",
)
WORKFLOW_REPORT = Option(
    "workflow_report",
    True,
    boolean,
    "in a GitHub Actions step, do not write the job summary and the annotations (written by "
    "default when GITHUB_ACTIONS is true, as the action writes them)",
    flag="--no-workflow-report",
    keyword=False,
    absent="the CLI's in a workflow step: the action publishes as its inputs say, the API not",
)
ARTIFACT_URL = Option(
    "artifact_url",
    None,
    optional_text,
    "link the summary to the artifact with the reports",
    flag="--artifact-url",
    keyword=False,
    absent="`summary`'s, which only the CLI has: the action links the artifact it uploads",
    metavar="URL",
)

# `cleanup`, which only the CLI has: each of the action's and the API's runs removes its own.
_CLEANUP = "`cleanup` is the CLI's: each run of the action and of the API removes its own"
YES = Option(
    "yes",
    False,
    boolean,
    "remove what is listed (without it, nothing is removed: cleanup only says what it would "
    "remove)",
    flag="--yes",
    keyword=False,
    absent=_CLEANUP,
)
VOLUMES = Option(
    "volumes",
    False,
    boolean,
    f"also the cached environments the runs share (label {CACHE_LABEL}) that no run has used "
    f"for --unused-for, and the uv cache volume of earlier versions ({LEGACY_CACHE_VOLUME}); "
    "never one a container uses",
    flag="--volumes",
    keyword=False,
    absent=_CLEANUP,
)
UNUSED_FOR = Option(
    # In seconds (`_s`), as every duration field is.
    "unused_for_s",
    3600.0,
    duration,
    "with --volumes, the cached environments no run has used for this long (30m, 12h, 7d; 0: "
    "every one no run uses now) (default: 1h)",
    flag="--unused-for",
    keyword=False,
    absent=_CLEANUP,
    metavar="TIME",
)
OWNER = Option(
    "owner",
    None,
    owner,
    "only what the scbench-ci process PID of host HOST made (its "
    f"{OWNER_LABEL} label), on any machine, even while it runs",
    flag="--owner",
    keyword=False,
    absent=_CLEANUP,
    metavar="HOST/PID",
)
EVERYTHING = Option(
    # `--all` is `everything` inside: `all` is Python's.
    "everything",
    False,
    boolean,
    "every run's containers, volumes and networks on the daemon, whatever machine made them, "
    "those of runs still in progress too",
    flag="--all",
    keyword=False,
    absent=_CLEANUP,
)

ACTION_INPUTS: tuple[Option, ...] = (
    COMMAND,
    PROBLEM,
    CHECKPOINT,
    SELECT,
    SUBMISSION,
    SAME_SUBMISSION,
    INCLUDE_PRIOR_TESTS,
    ENTRYPOINT,
    ENVIRONMENT,
    *backend(ACTION_EXECUTOR).declarations(),
    TEST_TIMEOUT,
    SESSION_TIMEOUT,
    SCBENCH,
    QUALITY,
    POLICY,
    FAIL_ON_POLICY,
    FAIL_ON,
    DETAILS,
    HISTORY,
    BASELINE,
    BASELINE_BRANCH,
    RERUNS,
    REPEAT,
    FLAKY_PASSES,
    PYTEST_ARGS,
    JOBS,
    TEST_SHARDS,
    SKIP_EXISTING,
    RESULTS,
    SHARDS,
    CHANGED_SINCE,
    ORACLE_POLICY,
    COMMENT,
    CHECK_RUN,
    GITHUB_TOKEN,
    JOB_SUMMARY,
    ANNOTATIONS,
    UPLOAD_ARTIFACT,
    ARTIFACT_NAME,
    RETENTION_DAYS,
)
"""Every input of the action, in action.yml's order."""
RUN = (
    ENTRYPOINT,
    ENVIRONMENT,
    EXECUTOR,
    ENGINE,
    RAY_ADDRESS,
    *EXECUTOR_SETTINGS,
    TEST_TIMEOUT,
    SESSION_TIMEOUT,
    SCBENCH,
    QUALITY,
)
"""How the tests run: the options `evaluate` and `check` share, in every front end."""
COMPARISON = (BASELINE, FAIL_ON, HISTORY, DETAILS)
"""The baseline, what fails the run and what the summary details: `evaluate`'s and `merge`'s."""
EVALUATE = (
    PROBLEM,
    CHECKPOINT,
    SUBMISSION,
    SAME_SUBMISSION,
    JOBS,
    TEST_SHARDS,
    SKIP_EXISTING,
    SELECT,
    INCLUDE_PRIOR_TESTS,
    *RUN,
    POLICY,
    *COMPARISON,
    RERUNS,
    REPEAT,
    FLAKY_PASSES,
    OUTPUT,
    QUIET,
    VERBOSE,
    WORKFLOW_REPORT,
)
"""`evaluate`'s options (its flags, in the help's order)."""
CHECK = (
    CHANGED_SINCE,
    CHECK_JOBS,
    CHECK_REPEAT,
    ORACLE_POLICY,
    *RUN,
    CHECK_OUTPUT,
    CHECK_QUIET,
)
"""`check`'s options, after its problems."""
PLAN = (PROBLEM, EVERY_CHECKPOINT, SHARDS, PLAN_BASELINE)
MERGE = (*COMPARISON, MERGE_OUTPUT)
"""`merge`'s options, after its results."""
SUMMARY = (ARTIFACT_URL, ARTIFACT_NAME, SUMMARY_OUTPUT, SUMMARY_FAIL_ON, DETAILS)
"""`summary`'s options, after its results."""
CLEANUP = (YES, VOLUMES, UNUSED_FOR, OWNER, EVERYTHING)
