"""Hostile problems and inputs through the real CLI and the real action entry point: each is
refused with exit code 2 and one line naming the file and field, before anything is evaluated,
and nothing on disk changes.

Every hostile problem is a folder of `tests/threats/hostile/inputs/` laid over a copy of the
wordstat example. The copy sits in a workspace beside `outside/`, which holds a valid config.yaml
and tests folder: a symlink out of the problem that reaches them would load without complaint.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from scbench_ci.problem.yaml_loader import MAX_CONFIG_BYTES
from testing.cli import cli_argv
from testing.paths import EXAMPLES, REPO_ROOT
from testing.trees import snapshot

HOSTILE_INPUTS = REPO_ROOT / "tests/threats/hostile/inputs"
WORDSTAT = EXAMPLES / "wordstat"
MEMORY_LIMIT_BYTES = 512 * 1024**2
TIME_LIMIT_S = 60
NAME_RULE = (
    "checkpoint names are 1 to 100 letters, digits, '_', '-' and '.', not starting with '-' or '.'"
)

# Each runs scbench-ci end to end, as every test under tests/integration does.
pytestmark = pytest.mark.integration

# What follows `<problem>/config.yaml: ` in the error line.
CONFIG_ERRORS = {
    "billion_laughs": "refused YAML at line 7, column 7: more than 10000 values once its aliases "
    "are expanded",
    "deep_nesting": "refused YAML at line 6, column 51: nested deeper than 32 levels",
    "non_utf8": "not UTF-8 text (byte 163)",
    "nul_byte": "invalid YAML at line 23, column 16: character U+0000 is not allowed",
    "python_tag": "invalid YAML at line 2, column 7: could not determine a constructor for the tag "
    "'tag:yaml.org,2002:python/object/apply:os.system'",
    "bad_date": "invalid YAML at line 21, column 14: month must be in 1..12",
    "huge_integer": "invalid YAML at line 2, column 10: Exceeds the limit (4300 digits) for "
    "integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to "
    "increase the limit",
    "timeout_nan": "timeout: must be a positive number of seconds, got nan",
    "order_infinite": "checkpoints.checkpoint_1.order: must be an integer, got inf",
    "env_nul": "env.WORDSTAT_RUN_TIMEOUT: must not hold a NUL character, got '10\\x00'",
    "checkpoint_dotdot": f"checkpoints.../../escape: {NAME_RULE}",
    "checkpoint_absolute": f"checkpoints./tmp/escape: {NAME_RULE}",
    "checkpoint_separator": f"checkpoints.sub/checkpoint_1: {NAME_RULE}",
    "checkpoint_backslash": f"checkpoints...\\\\..\\\\escape: {NAME_RULE}",
    "checkpoint_dot": f"checkpoints...: {NAME_RULE}",
    "checkpoint_nul": "checkpoints.checkpoint_1\\x00: must not hold a NUL character, got "
    "'checkpoint_1\\x00'",
    "checkpoint_newline": f"checkpoints.checkpoint_1\\n../escape: {NAME_RULE}",
    "checkpoint_too_long": f"checkpoints.{'c' * 185}...: {NAME_RULE}",  # cut to 200 characters
    "asset_path_dotdot": "static_assets.corpus.path: '../../etc' leaves the problem folder",
    "asset_path_absolute": "static_assets.corpus.path: '/etc/passwd' leaves the problem folder",
    "asset_path_symlink": "static_assets.corpus.path: 'assets/etc' leaves the problem folder",
    "asset_save_path_absolute": "static_assets.corpus.save_path: '/tmp/escape' must stay inside "
    "tests/assets",
    "asset_save_path_dotdot": "static_assets.corpus.save_path: '../../../escape' must stay inside "
    "tests/assets",
    # An asset's name is its folder in .evaluation_tests/assets/: one file name.
    "asset_name_dotdot": "static_assets.../../../escape: must be named by one file name without =",
    "asset_overlap": "static_assets.fox.save_path: 'corpus/fox.txt' overlaps "
    "static_assets.corpus's 'corpus'",
    "asset_through_tests_symlink": "static_assets.corpus.save_path: tests/assets is a symlink in "
    "the problem folder",
    "config_directory": "is not a regular file",
    "config_symlink_loop": "cannot be read: Too many levels of symbolic links",
    "config_symlink_escape": "is a symlink that leaves the problem folder {problem}",
}
# Errors about another file of the problem: (its path in the problem, what follows it).
OTHER_ERRORS = {
    "tests_symlink_escape": ("tests", "is a symlink that leaves the problem folder {problem}"),
}


@dataclass(frozen=True)
class Layout:
    root: Path
    """Everything the test owns: snapshotted before and after."""
    workspace: Path
    """The CLI's working folder, the action's GITHUB_WORKSPACE."""
    problem: Path
    runner: Path
    """The runner's file-command folder (GITHUB_OUTPUT), outside the snapshot."""


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    workspace = tmp_path / "workspace"
    problem = workspace / "problem"
    shutil.copytree(WORDSTAT, problem, symlinks=True)
    outside = workspace / "outside"
    outside.mkdir()
    shutil.copy(WORDSTAT / "config.yaml", outside / "config.yaml")
    shutil.copytree(WORDSTAT / "tests", outside / "tests")
    runner = tmp_path / "runner"
    runner.mkdir()
    return Layout(tmp_path, workspace, problem, runner)


def lay_over(source: Path, target: Path) -> None:
    """Copy `source` onto `target`: an entry replaces the one of the same name, folders merge."""
    for entry in sorted(source.iterdir()):
        existing = target / entry.name
        real_folder = entry.is_dir() and not entry.is_symlink()
        if real_folder and existing.is_dir() and not existing.is_symlink():
            lay_over(entry, existing)
            continue
        if existing.is_dir() and not existing.is_symlink():
            shutil.rmtree(existing)
        elif existing.exists() or existing.is_symlink():
            existing.unlink()
        if real_folder:
            shutil.copytree(entry, existing, symlinks=True)
        else:
            shutil.copy2(entry, existing, follow_symlinks=False)


def _limits() -> None:
    # Without its guard, a YAML bomb takes gigabytes and minutes: fail fast instead.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT_S,
        stdin=subprocess.DEVNULL,
        preexec_fn=_limits,
    )


def cli_evaluate(layout: Layout, *args: str) -> subprocess.CompletedProcess[str]:
    """`scbench-ci evaluate` from the workspace, writing to `out/`."""
    argv = cli_argv("evaluate", *args)
    argv += ["--output", "out", "--executor", "local", "--quiet"]
    return _run(argv, layout.workspace, {"PATH": os.environ["PATH"]})


def evaluate_problem(layout: Layout) -> subprocess.CompletedProcess[str]:
    """Every checkpoint: a checkpoint name also becomes an output sub-folder's name."""
    return cli_evaluate(
        layout,
        *("--problem", "problem", "--checkpoint", "all"),
        *("--submission", "problem/solutions/{checkpoint}"),
    )


def run_action(layout: Layout, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The action's entry point, as its container runs it: in the workspace, inputs as INPUT_*."""
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_WORKSPACE": str(layout.workspace),
        "GITHUB_OUTPUT": str(layout.runner / "output"),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    return _run([sys.executable, str(REPO_ROOT / "entrypoint.py")], layout.workspace, env)


def assert_cli_refused(
    run: subprocess.CompletedProcess[str], message: str, before: dict[str, str], layout: Layout
) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == ""  # no run header, no pytest output, no report
    assert run.stderr == f"scbench-ci: error: {message}\n"
    assert snapshot(layout.root, skip=layout.runner) == before


def assert_action_refused(
    run: subprocess.CompletedProcess[str], message: str, before: dict[str, str], layout: Layout
) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == f"::error title=scbench-ci::{message}\n"  # no log group, no run
    assert run.stderr == ""
    outputs = (layout.runner / "output").read_text()
    assert re.fullmatch(
        r"passed<<(\w+)\nfalse\n\1\ninfrastructure_failure<<(\w+)\nfalse\n\2\n", outputs
    )
    assert snapshot(layout.root, skip=layout.runner) == before


def _prepared(layout: Layout, case: str) -> tuple[str, dict[str, str]]:
    lay_over(HOSTILE_INPUTS / case, layout.problem)
    if case in OTHER_ERRORS:
        relative, text = OTHER_ERRORS[case]
    else:
        relative, text = "config.yaml", CONFIG_ERRORS[case]
    message = f"{layout.problem / relative}: {text.format(problem=layout.problem)}"
    return message, snapshot(layout.root, skip=layout.runner)


def test_every_hostile_problem_has_a_case() -> None:
    folders = {entry.name for entry in HOSTILE_INPUTS.iterdir() if entry.is_dir()}
    assert folders == set(CONFIG_ERRORS) | set(OTHER_ERRORS)


@pytest.mark.parametrize("case", sorted([*CONFIG_ERRORS, *OTHER_ERRORS]))
def test_a_hostile_problem_is_refused_by_the_cli(case: str, layout: Layout) -> None:
    message, before = _prepared(layout, case)
    assert_cli_refused(evaluate_problem(layout), message, before, layout)


@pytest.mark.parametrize("case", sorted([*CONFIG_ERRORS, *OTHER_ERRORS]))
def test_a_hostile_problem_is_refused_by_the_action(case: str, layout: Layout) -> None:
    message, before = _prepared(layout, case)
    run = run_action(layout, problem="problem", checkpoint="all", submission="problem")
    assert_action_refused(run, message, before, layout)


@pytest.mark.serial
def test_a_yaml_bomb_fails_fast(layout: Layout) -> None:
    message, before = _prepared(layout, "billion_laughs")
    started = time.monotonic()
    run = evaluate_problem(layout)
    elapsed = time.monotonic() - started
    assert_cli_refused(run, message, before, layout)
    # Unguarded, its 9**9 strings took 26 s and 1.5 GiB, and ended in a MemoryError under a
    # 2 GiB limit. Guarded, 0.4 s and 36 MiB.
    assert elapsed < 10


def test_a_huge_config_is_refused_unread(layout: Layout) -> None:
    config = layout.problem / "config.yaml"
    with config.open("a") as file:
        file.write("# padding\n" * (5 * MAX_CONFIG_BYTES // 10))
    before = snapshot(layout.root, skip=layout.runner)
    message = f"{config}: larger than {MAX_CONFIG_BYTES} bytes; refusing to parse"
    assert_cli_refused(evaluate_problem(layout), message, before, layout)


def test_a_fifo_config_is_refused_unopened(layout: Layout) -> None:
    """Opening a named pipe would block until someone writes to it."""
    config = layout.problem / "config.yaml"
    config.unlink()
    os.mkfifo(config)
    before = snapshot(layout.root, skip=layout.runner)
    assert_cli_refused(evaluate_problem(layout), f"{config}: is not a regular file", before, layout)


@pytest.mark.parametrize(
    "checkpoint",
    [
        "../../escape",
        "/tmp/escape",
        "sub/checkpoint_1",
        "..",
        ".",
        "checkpoint_1/..",
        "-rf",
        "",
        "checkpoint_1\n",
        "c" * 101,
    ],
)
def test_a_checkpoint_that_is_no_name_is_refused_by_the_cli(
    checkpoint: str, layout: Layout
) -> None:
    before = snapshot(layout.root, skip=layout.runner)
    run = cli_evaluate(
        layout,
        *("--problem", "problem", f"--checkpoint={checkpoint}"),
        *("--submission", "problem/solutions/checkpoint_1"),
    )
    # Refused as the flag's value is parsed: argparse's short usage line, then the error.
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == ""
    usage, error, end = run.stderr.split("\n")
    assert usage.startswith("usage: scbench-ci evaluate ") and end == ""
    assert error == (
        "scbench-ci evaluate: error: argument --checkpoint: "
        f"{checkpoint!r} is not a checkpoint name ({NAME_RULE})"
    )
    assert snapshot(layout.root, skip=layout.runner) == before


def test_an_asset_is_never_written_through_a_symlink(layout: Layout) -> None:
    """tests/assets, an absolute symlink in the problem, would be copied as a link into the
    staged workspace, and the asset written through it (a committed folder cannot hold the
    absolute path of a test's own folder)."""
    target = layout.root / "elsewhere"
    target.mkdir()
    (layout.problem / "tests/assets").symlink_to(target)
    before = snapshot(layout.root, skip=layout.runner)
    message = (
        f"{layout.problem / 'config.yaml'}: static_assets.corpus.save_path: tests/assets is a "
        "symlink in the problem folder"
    )
    assert_cli_refused(evaluate_problem(layout), message, before, layout)
    assert list(target.iterdir()) == []


def _elsewhere(layout: Layout) -> Path:
    """A valid problem and submission outside the workspace."""
    elsewhere = layout.root / "elsewhere"
    shutil.copytree(WORDSTAT, elsewhere / "problem", symlinks=True)
    (elsewhere / "environment.yaml").write_text("type: docker\n")
    return elsewhere


def _leaves(layout: Layout, name: str, value: str) -> str:
    return f"input {name}: {value!r} leaves the workspace {layout.workspace}"


def _problem_absolute(layout: Layout) -> tuple[dict[str, str], str]:
    value = str(_elsewhere(layout) / "problem")
    return {"problem": value}, _leaves(layout, "problem", value)


def _problem_dotdot(layout: Layout) -> tuple[dict[str, str], str]:
    _elsewhere(layout)
    return {"problem": "../elsewhere/problem"}, _leaves(layout, "problem", "../elsewhere/problem")


def _problem_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    (layout.workspace / "linked").symlink_to(_elsewhere(layout) / "problem")
    return {"problem": "linked"}, _leaves(layout, "problem", "linked")


def _submission_absolute(layout: Layout) -> tuple[dict[str, str], str]:
    value = str(_elsewhere(layout) / "problem/solutions/checkpoint_1")
    return {"submission": value}, _leaves(layout, "submission", value)


def _submission_dotdot(layout: Layout) -> tuple[dict[str, str], str]:
    _elsewhere(layout)
    value = "../elsewhere/problem/solutions/checkpoint_1"
    return {"submission": value}, _leaves(layout, "submission", value)


def _submission_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    (layout.workspace / "linked").symlink_to(_elsewhere(layout) / "problem/solutions/checkpoint_1")
    return {"submission": "linked"}, _leaves(layout, "submission", "linked")


def _placeholder_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    solutions = layout.workspace / "solutions"
    solutions.mkdir()
    (solutions / "checkpoint_1").symlink_to(_elsewhere(layout) / "problem/solutions/checkpoint_1")
    inputs = {"submission": "solutions/{checkpoint}"}
    return inputs, _leaves(layout, "submission", "solutions/checkpoint_1")


def _placeholder_symlink_for_all(layout: Layout) -> tuple[dict[str, str], str]:
    """Only the second checkpoint's folder leaves: a check of the first alone misses it."""
    solutions = layout.workspace / "solutions"
    shutil.copytree(WORDSTAT / "solutions", solutions)
    shutil.rmtree(solutions / "checkpoint_2")
    (solutions / "checkpoint_2").symlink_to(_elsewhere(layout) / "problem/solutions/checkpoint_2")
    inputs = {"checkpoint": "all", "submission": "solutions/{checkpoint}"}
    return inputs, _leaves(layout, "submission", "solutions/checkpoint_2")


def _environment_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    (layout.workspace / "environment.yaml").symlink_to(_elsewhere(layout) / "environment.yaml")
    return {"environment": "environment.yaml"}, _leaves(layout, "environment", "environment.yaml")


def _output_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    elsewhere = _elsewhere(layout)
    (layout.workspace / ".scbench").symlink_to(elsewhere)
    return {}, f"{layout.workspace / '.scbench'}: the output folder is a symlink; remove it"


def _output_file(layout: Layout) -> tuple[dict[str, str], str]:
    (layout.workspace / ".scbench").write_text("not a folder\n")
    return {}, f"{layout.workspace / '.scbench'}: the output folder is not a folder; remove it"


def _output_subfolder_symlink(layout: Layout) -> tuple[dict[str, str], str]:
    """`all` writes each checkpoint's reports to a sub-folder named after it."""
    (layout.workspace / ".scbench").mkdir()
    (layout.workspace / ".scbench/checkpoint_1").symlink_to(_elsewhere(layout))
    link = layout.workspace / ".scbench/checkpoint_1"
    return {"checkpoint": "all"}, f"{link}: a symlink in the output folder; remove it"


def _checkpoint(value: str) -> Callable[[Layout], tuple[dict[str, str], str]]:
    def setup(layout: Layout) -> tuple[dict[str, str], str]:
        message = f"input checkpoint: {value!r} is not a checkpoint name ({NAME_RULE})"
        return {"checkpoint": value}, message

    return setup


def _unknown_checkpoint(layout: Layout) -> tuple[dict[str, str], str]:
    message = (
        f"{layout.problem / 'config.yaml'}: checkpoints: no checkpoint 'checkpoint_9' "
        "(known: checkpoint_1, checkpoint_2, checkpoint_3)"
    )
    return {"checkpoint": "checkpoint_9"}, message


ACTION_INPUT_CASES = {
    "problem_absolute": _problem_absolute,
    "problem_dotdot": _problem_dotdot,
    "problem_symlink": _problem_symlink,
    "submission_absolute": _submission_absolute,
    "submission_dotdot": _submission_dotdot,
    "submission_symlink": _submission_symlink,
    "placeholder_symlink": _placeholder_symlink,
    "placeholder_symlink_for_all": _placeholder_symlink_for_all,
    "environment_symlink": _environment_symlink,
    "output_symlink": _output_symlink,
    "output_file": _output_file,
    "output_subfolder_symlink": _output_subfolder_symlink,
    "checkpoint_dotdot": _checkpoint("../checkpoint_1"),
    "checkpoint_separator": _checkpoint("sub/checkpoint_1"),
    "checkpoint_absolute": _checkpoint("/tmp/escape"),
    "checkpoint_unknown": _unknown_checkpoint,
}


@pytest.mark.parametrize("case", list(ACTION_INPUT_CASES))
def test_a_hostile_action_input_is_refused(case: str, layout: Layout) -> None:
    inputs, message = ACTION_INPUT_CASES[case](layout)
    before = snapshot(layout.root, skip=layout.runner)
    defaults = {
        "problem": "problem",
        "checkpoint": "checkpoint_1",
        "submission": "problem/solutions/checkpoint_1",
    }
    run = run_action(layout, **{**defaults, **inputs})
    assert_action_refused(run, message, before, layout)
