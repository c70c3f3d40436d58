import json

import pytest

from scbench_ci.executors.base import TestCommand
from scbench_ci.job.plan import resolved_test_timeout
from scbench_ci.job.pytest_command import build_test_command, has_k_filter, inventory_spec
from scbench_ci.problem.load import load_problem
from scbench_ci.standalone.pytest_runner import INVENTORY_OPTION
from testing.problems import ProblemFolder


def test_command_matches_the_design(problem_folder: ProblemFolder) -> None:
    problem_folder.write("data/words.txt", "x")
    problem_folder.config.update(
        {
            "test_dependencies": ["pyyaml", "requests>=2"],
            "env": {"A": "problem", "B": "problem"},
            "static_assets": {"word-list": {"path": "data/words.txt"}},
        }
    )
    problem_folder.config["checkpoints"]["checkpoint_2"] = {"timeout": 12.5, "env": {"B": "cp"}}
    problem_folder.save()
    problem = load_problem(problem_folder.root)

    command = build_test_command(
        problem,
        problem.checkpoint("checkpoint_2"),
        entrypoint="uv run main.py",
        environment_env={"A": "environment", "C": "environment"},
        test_timeout_s=12.5,
        pytest_args=("-k", "smoke"),
    )

    assert command.requirements == (
        "pytest",
        "pytest-json-ctrf",
        "pytest-json-report",
        "pytest-timeout",
        "jsonschema",
        "deepdiff",
        "pyyaml",
        "requests>=2",
    )
    assert command.pytest_args == (
        "-c",
        "pytest.ini",
        "-p",
        "no:cacheprovider",
        ".evaluation_tests",
        "--entrypoint=uv run main.py",
        "--checkpoint=checkpoint_2",
        "--ctrf=.scbench/ctrf-report.json",
        "--json-report",
        "--json-report-file=.scbench/pytest-report.json",
        "--timeout=12.5",
        "-vv",
        "-o",
        "verbosity_test_cases=1",
        "-k",
        "smoke",
    )
    uvx = command.uvx_argv("/x/pytest_runner.py")
    assert uvx[:3] == ["uvx", "--with=pytest", "--with=pytest-json-ctrf"]
    assert uvx[9:13] == ["python", "-I", "/x/pytest_runner.py", "-c"]
    assert uvx[12:] == list(command.pytest_args)
    assert command.variables == {
        "A": "problem",  # the problem's env beats the environment file's
        "B": "cp",  # the checkpoint's beats the problem's
        "C": "environment",
        "SCBENCH_CHECKPOINT": "checkpoint_2",
        # As SCBench's runner sets them: relative to the workspace, each asset under its name.
        "SCBENCH_ASSETS_DIR": ".evaluation_tests/assets",
        "SCBENCH_ASSET_WORD-LIST": ".evaluation_tests/assets/word-list",
    }


def test_timeout_precedence(problem_folder: ProblemFolder) -> None:
    problem_folder.config["timeout"] = 7
    problem_folder.config["checkpoints"]["checkpoint_3"] = {"timeout": 9}
    problem_folder.save()
    problem = load_problem(problem_folder.root)

    def timeout_flag(checkpoint: str, override: float | None = None) -> str:
        argv = build_test_command(
            problem,
            problem.checkpoint(checkpoint),
            entrypoint="x",
            environment_env={},
            test_timeout_s=resolved_test_timeout(problem.checkpoint(checkpoint), override),
        ).pytest_args
        return next(a for a in argv if a.startswith("--timeout="))

    assert timeout_flag("checkpoint_1") == "--timeout=7"  # problem
    assert timeout_flag("checkpoint_3") == "--timeout=9"  # checkpoint beats problem
    assert timeout_flag("checkpoint_3", 3) == "--timeout=3"  # --timeout beats both


def test_reruns_add_the_plugin_and_the_option_and_nothing_without(
    problem_folder: ProblemFolder,
) -> None:
    problem_folder.config["test_dependencies"] = ["pyyaml"]
    problem = load_problem(problem_folder.save().root)
    checkpoint = problem.checkpoint("checkpoint_1")

    def command(**reruns: int) -> TestCommand:
        return build_test_command(
            problem,
            checkpoint,
            entrypoint="python main.py",
            environment_env={},
            test_timeout_s=30,
            pytest_args=("-k", "x"),
            **reruns,
        )

    plain, rerun = command(), command(reruns=2)
    # Without reruns, the command (and so the Docker executor's cached runner) is unchanged.
    assert command(reruns=0) == plain
    assert "pytest-rerunfailures" not in plain.requirements
    assert not any(arg.startswith("--reruns") for arg in plain.pytest_args)
    assert rerun.requirements == (*plain.requirements[:-1], "pytest-rerunfailures", "pyyaml")
    # Before the user's own arguments, which may still override it.
    assert rerun.pytest_args == (*plain.pytest_args[:-2], "--reruns=2", "-k", "x")
    assert rerun.variables == plain.variables
    with pytest.raises(ValueError, match="reruns must be 0 or more"):
        command(reruns=-1)


def test_the_inventory_s_passes_are_scbench_1_0_s(problem_folder: ProblemFolder) -> None:
    """`--scbench 1.0`: a pass per marker and once without, `-k` the checkpoint, then one per
    prior checkpoint; each with its command line as SCBench builds it, after the run's own ini
    file; the runner gets them as its own option."""
    problem = load_problem(problem_folder.root)
    cp1, cp2 = problem.checkpoint("checkpoint_1"), problem.checkpoint("checkpoint_2")
    command = build_test_command(
        problem,
        cp2,
        entrypoint="uv run main.py",
        environment_env={},
        test_timeout_s=30,
        inventory=(cp1,),
    )
    (option,) = command.runner_options
    assert option.startswith(INVENTORY_OPTION)
    spec = json.loads(option.removeprefix(INVENTORY_OPTION))
    assert spec["file"] == ".scbench/inventory.json" and spec["passes_because"] is None
    assert [(p["marker"], p["keyword"]) for p in spec["passes"]] == [
        ("error", "checkpoint_2"),
        ("functionality", "checkpoint_2"),
        ("regression", "checkpoint_2"),
        (None, "checkpoint_2"),
        (None, "checkpoint_1"),
    ]
    assert spec["passes"][0]["argv"] == [
        *("-c", "pytest.ini", "-p", "no:cacheprovider", "--collect-only", "-q"),
        "--entrypoint=uv run main.py",
        "--checkpoint=checkpoint_2",
        *("-m", "error", "-k", "checkpoint_2", ".evaluation_tests"),
    ]
    assert spec["passes"][4]["argv"][6:] == [
        "--entrypoint=uv run main.py",
        "--checkpoint=checkpoint_1",
        *("-k", "checkpoint_1", ".evaluation_tests"),
    ]
    runner = command.runner_argv(["python"], "runner.py", "--kill-others")
    assert runner[:5] == ["python", "-I", "runner.py", "--kill-others", option]
    plain = build_test_command(
        problem, cp2, entrypoint="uv run main.py", environment_env={}, test_timeout_s=30
    )
    assert plain.runner_options == ()


@pytest.mark.parametrize(
    ("pytest_args", "passes", "because"),
    [
        (("-x",), 4, True),
        (("-k", "parse"), 0, False),
        (("-kparse",), 0, False),
        (("-k",), 4, True),  # `-k` with nothing after it is no filter (SCBench's `_has_k_filter`)
        (("-x", "-k", "a"), 0, False),
    ],
)
def test_pytest_arguments_run_the_passes_and_a_k_filter_takes_no_inventory(
    problem_folder: ProblemFolder, pytest_args: tuple[str, ...], passes: int, because: bool
) -> None:
    problem = load_problem(problem_folder.root)
    cp1 = problem.checkpoint("checkpoint_1")
    spec = inventory_spec(cp1, (), "python main.py", pytest_args)
    assert len(spec["passes"]) == passes
    assert (spec["passes_because"] is not None) is because
    assert all(p["argv"][-1 - len(pytest_args) : -1] == list(pytest_args) for p in spec["passes"])
    assert has_k_filter(pytest_args) is (passes == 0)
