from collections.abc import Callable
from pathlib import Path

import pytest

from scbench_ci.action import main as action_main
from scbench_ci.action.inputs import input_value, merge_options, plan_options, read_inputs
from scbench_ci.foundation.errors import UsageError
from scbench_ci.options import MergeOptions, PlanOptions
from scbench_ci.options.declared import COMMAND
from testing.problems import ProblemFolder


def _env(workspace: Path, **inputs: str) -> dict[str, str]:
    env = {"GITHUB_WORKSPACE": str(workspace)}
    env.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return env


def test_defaults(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "problems/p")
    inputs = read_inputs(_env(tmp_path, problem="problems/p", checkpoint=" checkpoint_1 "))
    options = inputs.options
    assert options.problems == (tmp_path / "problems/p",)
    assert options.checkpoint == "checkpoint_1"  # trimmed
    assert options.submission == str(tmp_path / ".")
    assert options.output_dir == tmp_path / ".scbench"
    assert options.executor == "docker"
    assert options.include_prior_tests is None  # the problem decides
    assert (options.policy, options.fail_on, inputs.command) == ("core-cases", "policy", "evaluate")
    assert (inputs.baseline, inputs.comment, inputs.results, inputs.shards) == (
        None,
        False,
        (),
        None,
    )
    assert (options.reruns, options.repeat, options.flaky_passes, options.select) == (
        0,
        1,
        False,
        (),
    )
    assert inputs.github_token == ""  # `${{ github.token }}` not expanded: the image ran alone
    assert (inputs.job_summary, inputs.annotations, inputs.upload_artifact) == (True, True, True)
    assert options.session_timeout_s == 1800
    assert options.test_timeout_s is None and inputs.retention_days is None
    assert options.pytest_args == ()
    assert options.executor_settings.test_network is True  # as in SCBench
    limits = (
        options.executor_settings.memory,
        options.executor_settings.cpus,
        options.executor_settings.pids_limit,
        options.executor_settings.disk,
    )
    assert limits == ("4g", 2, 1024, "auto")
    assert options.executor_settings.use_cache is True
    assert (options.history, options.commit) == (30, None)


def test_every_input(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "p")
    inputs = read_inputs(
        _env(
            tmp_path,
            problem="p",
            checkpoint="all",
            submission="solutions/{checkpoint}",
            include_prior_tests="False",
            entrypoint="python main.py",
            environment="env.yaml",
            image="python:3.12",
            memory="1g",
            cpus="0.5",
            pids_limit="64",
            disk="256m",
            cache="no",
            test_network="false",
            timeout="12.5",
            session_timeout="600",
            pass_policy="all-cases",
            fail_on_policy="FALSE",
            baseline="artifact:nightly",
            baseline_branch="release",
            reruns="2",
            repeat="3",
            flaky_passes="yes",
            pytest_args="-k 'a and b' -x",
            comment="true",
            github_token="ghs_token",
            job_summary="no",
            annotations="off",
            upload_artifact="0",
            artifact_name="my-results",
            retention_days="7",
            history="12",
        ),
    )
    options = inputs.options
    assert options.history == 12
    assert options.submission == str(tmp_path / "solutions/{checkpoint}")
    assert options.include_prior_tests is False
    assert options.environment == tmp_path / "env.yaml"
    assert (options.test_timeout_s, options.session_timeout_s) == (12.5, 600)
    assert options.pytest_args == ("-k", "a and b", "-x")
    assert (
        options.executor_settings.memory,
        options.executor_settings.cpus,
        options.executor_settings.pids_limit,
        options.executor_settings.disk,
    ) == (
        "1g",
        0.5,
        64,
        "256m",
    )
    assert options.executor_settings.use_cache is False
    assert options.fail_on == "never"  # fail_on_policy: false
    assert not (inputs.job_summary or inputs.annotations or inputs.upload_artifact)
    assert (inputs.baseline, inputs.baseline_branch) == ("artifact:nightly", "release")
    assert (options.reruns, options.repeat, options.flaky_passes) == (2, 3, True)
    assert (inputs.comment, inputs.github_token) == (True, "ghs_token")
    assert (inputs.artifact_name, inputs.retention_days) == ("my-results", 7)
    assert options.executor_settings.test_network is False


def test_plan_and_merge_take_the_inputs_the_evaluation_read(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "p")
    shard = tmp_path / "shard/results.json"
    shard.parent.mkdir()
    shard.write_text("{}")
    given = {
        "problem": "p",
        "checkpoint": "all",
        "submission": "solutions/{checkpoint}",
        "include_prior_tests": "false",
        "select": "p/checkpoint_1",
        "fail_on_policy": "false",
        "details": "all",
        "history": "12",
    }
    env = _env(tmp_path, command="plan", shards="3", **given) | {"GITHUB_SHA": "a" * 40}
    planned = plan_options(read_inputs(env))
    assert planned == PlanOptions(
        problems=(tmp_path / "p",),
        checkpoint="all",
        submission=str(tmp_path / "solutions/{checkpoint}"),
        output_dir=tmp_path / ".scbench",
        include_prior_tests=False,
        select=("p/checkpoint_1",),
        shards=3,
        confine_submissions_to=tmp_path,
    )
    merging = read_inputs(_env(tmp_path, command="merge", results="shard", **given) | env)
    assert merge_options(merging, "my-results") == MergeOptions(
        results=(shard,),
        output_dir=tmp_path / ".scbench",
        fail_on="never",
        details="all",
        artifact_name="my-results",
        history=12,
        commit="a" * 40,
    )


@pytest.mark.parametrize(("given", "days"), [("", None), ("0", 0), ("1", 1), ("400", 400)])
def test_retention_days_are_passed_on_as_given(
    tmp_path: Path, given: str, days: int | None
) -> None:
    """0 (the repository's default) and more than 90 are for the upload to judge, as the
    toolkit does: only what is not a whole number is refused here."""
    ProblemFolder(tmp_path / "p")
    env = _env(tmp_path, problem="p", checkpoint="checkpoint_1", retention_days=given)
    assert read_inputs(env).retention_days == days


def test_input_names_as_the_runner_writes_them() -> None:
    env = {"INPUT_PASS_POLICY": " any ", "INPUT_MY-INPUT": "kept", "INPUT_TWO_WORDS": "x"}
    assert input_value(env, "pass_policy") == "any"
    assert input_value(env, "my-input") == "kept"  # hyphens stay
    assert input_value(env, "two words") == "x"  # spaces become underscores


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"checkpoint": "c"}, "input problem: is required (command evaluate)"),
        ({"problem": "p"}, "input checkpoint: is required (command evaluate)"),
        ({"command": "merge"}, "input results: is required (command merge)"),
        ({"command": "check-all", "problem": "p"}, "input command: 'check-all' is not one of"),
        ({"problem": "p", "checkpoint": "c", "fail_on": "tests"}, "input fail_on: 'tests' is not"),
        (
            {"problem": "p", "checkpoint": "c", "baseline": "../b.json"},
            "input baseline: '../b.json' leaves",
        ),
        (
            {"problem": "p", "checkpoint": "c", "baseline": "artifact: "},
            "input baseline: `artifact:` needs",
        ),
        ({"problem": "p", "checkpoint": "c", "repeat": "0"}, "input repeat: must be at least 1"),
        ({"problem": "p", "checkpoint": "c", "reruns": "-1"}, "input reruns: '-1' is not a whole"),
        ({"problem": "../outside", "checkpoint": "c"}, "input problem: '../outside' leaves"),
        ({"problem": "/etc", "checkpoint": "c"}, "input problem: '/etc' leaves the workspace"),
        ({"problem": "p", "checkpoint": "c", "submission": "../../x"}, "input submission:"),
        (
            {"problem": "p", "checkpoint": "c", "submission": "x/{problems}/{checkpoint}"},
            "input submission: 'x/{problems}/{checkpoint}': unknown placeholder {problems} "
            "(the known ones: {problem}, {checkpoint})",
        ),
        (
            {"problem": "p", "checkpoint": "c", "same_submission": "often"},
            "input same_submission: 'often' is not a boolean",
        ),
        ({"problem": "p", "checkpoint": "c", "environment": "/tmp/e.yaml"}, "input environment:"),
        ({"problem": "p", "checkpoint": "../c"}, "input checkpoint: '../c' is not a checkpoint"),
        ({"problem": "p", "checkpoint": "/c"}, "input checkpoint: '/c' is not a checkpoint"),
        ({"problem": "p", "checkpoint": "c" * 101}, "input checkpoint: 'ccc"),
        (
            {"problem": "p", "checkpoint": "c", "fail_on_policy": "maybe"},
            "input fail_on_policy: 'maybe' is not a boolean",
        ),
        ({"problem": "p", "checkpoint": "c", "timeout": "-1"}, "input timeout: must be more"),
        (
            {"problem": "p", "checkpoint": "c", "retention_days": "7d"},
            "input retention_days: '7d' is not a whole number",
        ),
        (
            {"problem": "p", "checkpoint": "c", "pass_policy": "most"},
            "input pass_policy: 'most' is not one of core-cases,",
        ),
        ({"problem": "p", "checkpoint": "c", "pytest_args": "-k 'open"}, "input pytest_args:"),
        (
            {"problem": "p", "checkpoint": "c", "memory": "lots"},
            "input memory: not a size like 512m or 4g: 'lots'",
        ),
        ({"problem": "p", "checkpoint": "c", "disk": "0"}, "input disk: not a size"),
        ({"problem": "p", "checkpoint": "c", "cpus": "two"}, "input cpus: 'two' is not a number"),
        ({"problem": "p", "checkpoint": "c", "cpus": "0"}, "input cpus: must be more than 0"),
        ({"problem": "p", "checkpoint": "c", "cpus": "nan"}, "input cpus: must be more than 0"),
        ({"problem": "p", "checkpoint": "c", "pids_limit": "0"}, "input pids_limit: must be at"),
        (
            {"problem": "p", "checkpoint": "c", "pids_limit": "²"},
            "input pids_limit: '²' is not a whole number",
        ),
        ({"problem": "p", "checkpoint": "c", "cache": "sometimes"}, "input cache: 'sometimes'"),
        (
            {"problem": "p", "checkpoint": "c", "history": "101"},
            "input history: must be at most 100",
        ),
        ({"problem": "p", "checkpoint": "c", "history": "all"}, "input history: 'all' is not a"),
    ],
)
def test_bad_inputs(tmp_path: Path, inputs: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as error:
        read_inputs(_env(tmp_path, **inputs))
    assert str(error.value).startswith(message)


def test_a_symlink_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(UsageError, match="input problem: 'link' leaves the workspace"):
        read_inputs(_env(tmp_path, problem="link", checkpoint="c"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda out, elsewhere: out.symlink_to(elsewhere), "the output folder is a symlink"),
        (lambda out, elsewhere: out.write_text(""), "the output folder is not a folder"),
        (
            lambda out, elsewhere: (out.mkdir(), (out / "checkpoint_1").symlink_to(elsewhere)),
            "checkpoint_1: a symlink in the output folder",
        ),
    ],
)
def test_the_output_folder_is_a_plain_folder(
    tmp_path: Path, make: Callable[[Path, Path], object], message: str
) -> None:
    workspace = tmp_path / "workspace"
    ProblemFolder(workspace / "p")
    make(workspace / ".scbench", tmp_path)
    with pytest.raises(UsageError, match=message):
        read_inputs(_env(workspace, problem="p", checkpoint="checkpoint_1"))


@pytest.mark.parametrize(
    ("inputs", "refused"),
    [
        ({"checkpoint": "all"}, True),
        ({"checkpoint": "all", "submission": "solutions/{checkpoint}"}, True),
        ({"checkpoint": "all", "same_submission": "true"}, False),
        ({"checkpoint": "all", "submission": "{problem}/{checkpoint}"}, False),
        # `plan`'s matrix names no folder: the evaluations it fans out to check theirs.
        ({"command": "plan"}, False),
        ({"command": "plan", "submission": "."}, False),
        ({"command": "check"}, False),
    ],
)
def test_several_problems_share_a_submission_only_when_asked(
    tmp_path: Path, inputs: dict[str, str], refused: bool
) -> None:
    for name in ("a", "b"):
        ProblemFolder(tmp_path / "problems" / name)
    env = _env(tmp_path, problem="problems", **inputs)
    if not refused:
        read_inputs(env)
        return
    with pytest.raises(UsageError) as error:
        read_inputs(env)
    assert str(error.value).startswith("input submission: ")
    assert str(error.value).endswith(
        "has no {problem}, so each of the 2 problems would be evaluated against the same "
        "folder; put {problem} in it, or set same_submission: true if that is meant"
    )


def test_the_commit_the_history_records_is_github_sha(tmp_path: Path) -> None:
    ProblemFolder(tmp_path / "p")
    env = _env(tmp_path, problem="p", checkpoint="c")
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert read_inputs({**env, "GITHUB_SHA": sha}).options.commit == sha
    with pytest.raises(UsageError, match=r"^GITHUB_SHA: 'main' is not a commit hash"):
        read_inputs({**env, "GITHUB_SHA": "main"})


def test_the_action_s_commands_are_the_command_input_s_choices() -> None:
    assert tuple(action_main.COMMANDS) == COMMAND.choices
