"""`scbench-ci evaluate` as a user runs it: a real process, exit codes, one-line errors."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from scbench_ci.executors.choice import LOCAL_NOTICE
from testing.cli import run_cli
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder
from testing.results import checkpoint_documents

pytestmark = pytest.mark.slow

SCHEMA = json.loads((REPO_ROOT / "scbench_ci/schema/results.schema.json").read_text())


def evaluate(
    problem: ProblemFolder,
    submission: Path,
    *extra: str,
    checkpoint: str = "checkpoint_1",
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict]:
    output = problem.root.parent / "out"
    run = run_cli(
        "evaluate",
        "--problem",
        problem.root,
        "--checkpoint",
        checkpoint,
        "--submission",
        submission,
        "--output",
        output,
        "--executor",
        "local",
        *extra,
        cwd=problem.root.parent,
        env=env,
    )
    results_file = output / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    if results:
        jsonschema.validate(results, SCHEMA)
    return run, results


def _one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in run.stderr
    # The local executor's notice comes first once the run has got as far as making it.
    lines = run.stderr.strip().removeprefix(f"scbench-ci: {LOCAL_NOTICE}\n").splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--problem", "nowhere"], "nowhere: problem folder does not exist"),
        (
            ["--checkpoint", "checkpoint_7"],
            "checkpoints: no checkpoint 'checkpoint_7' (known: "
            "checkpoint_1, checkpoint_2, checkpoint_3)",
        ),
        (["--environment", "nope.yaml"], "nope.yaml: environment file does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    problem_folder: ProblemFolder, submission: Path, args: list[str], expected: str
) -> None:
    defaults = {
        "--problem": str(problem_folder.root),
        "--checkpoint": "checkpoint_1",
        "--submission": str(submission),
    }
    for flag, value in zip(args[::2], args[1::2], strict=True):
        defaults[flag] = value
    run = run_cli(
        "evaluate", *[x for pair in defaults.items() for x in pair], cwd=problem_folder.root.parent
    )
    assert run.returncode == 2
    line = _one_line_error(run)
    assert line.startswith("scbench-ci: error: ")
    assert expected in line


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--policy", "strict", "'strict' is not one of core-cases, all-non-error-cases"),
        ("--timeout", "-3", "must be more than 0 seconds"),
        ("--session-timeout", "soon", "not a number of seconds"),
        ("--executor", "vm", "'vm' is not one of docker, local"),
    ],
)
def test_bad_flags_exit_2(
    problem_folder: ProblemFolder, submission: Path, flag: str, value: str, expected: str
) -> None:
    run = run_cli(
        "evaluate",
        "--problem",
        problem_folder.root,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        submission,
        flag,
        value,
        cwd=problem_folder.root.parent,
    )
    assert run.returncode == 2
    assert expected in run.stderr
    assert "Traceback" not in run.stderr


def test_a_missing_submission_is_that_checkpoints_failure(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    """With `{checkpoint}`, checkpoint_2's folder is missing: checkpoints 1 and 3 still run."""
    solutions = tmp_path / "solutions"
    for name in ("checkpoint_1", "checkpoint_3"):
        shutil.copytree(submission, solutions / name)
    output = tmp_path / "out"
    run = run_cli(
        *("evaluate", "--problem", problem_folder.root, "--checkpoint", "all"),
        *("--submission", f"{solutions}/{{checkpoint}}", "--output", output, "--quiet"),
        *("--executor", "local"),
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    results = json.loads((output / "results.json").read_text())
    assert [c["passed"] for c in checkpoint_documents(results)] == [True, False, True]
    failure = checkpoint_documents(results)[1]["failure"]
    assert failure["kind"] == "missing"
    assert failure["message"] == f"the submission folder {solutions}/checkpoint_2 does not exist"
    assert "why it failed: missing: the submission folder" in run.stdout
    assert results["infrastructure_failure"] is False


def test_an_unknown_placeholder_in_the_submission_is_exit_2_before_any_run(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    run = run_cli(
        *("evaluate", "--problem", problem_folder.root, "--checkpoint", "all"),
        *("--submission", "examples/{problems}/solutions/{checkpoint}"),
        *("--output", "out", "--executor", "local"),
        cwd=tmp_path,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.endswith(
        "error: argument --submission: 'examples/{problems}/solutions/{checkpoint}': unknown "
        "placeholder {problems} (the known ones: {problem}, {checkpoint})\n"
    )
    assert not (tmp_path / "out").exists()


def test_several_problems_share_one_submission_only_with_same_submission(
    submission: Path, tmp_path: Path
) -> None:
    for name in ("one", "two"):
        config = {"name": name, "entry_file": "main", "checkpoints": {"checkpoint_1": {}}}
        ProblemFolder(tmp_path / "problems" / name, config)
    where = (
        *("evaluate", "--problem", "problems", "--checkpoint", "checkpoint_1"),
        *("--submission", submission, "--output", "out", "--executor", "local", "--quiet"),
    )
    refused = run_cli(*where, cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert _one_line_error(refused) == (
        f"scbench-ci: error: --submission: {str(submission)!r} has no {{problem}}, so each of "
        "the 2 problems would be evaluated against the same folder; put {problem} in it, or "
        "give --same-submission if that is meant"
    )
    assert not (tmp_path / "out").exists()

    asked = run_cli(*where, "--same-submission", cwd=tmp_path)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    results = json.loads((tmp_path / "out/results.json").read_text())
    assert [c["passed"] for c in checkpoint_documents(results)] == [True, True]


def test_the_summary_names_the_output_folder_as_given(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    run = run_cli(
        *("evaluate", "--problem", problem_folder.root, "--checkpoint", "checkpoint_1"),
        *("--submission", submission, "--output", "out/run1", "--executor", "local", "--quiet"),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    pointer = "Reports, logs and results.json: the `out/run1/` folder."
    assert pointer in (tmp_path / "out/run1/summary.md").read_text()
    # `summary` points to the folder of the results.json it is given.
    rendered = run_cli("summary", "out/run1/results.json", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    assert pointer in rendered.stdout


def test_output_may_not_be_the_submission(problem_folder: ProblemFolder, submission: Path) -> None:
    run = run_cli(
        "evaluate",
        "--problem",
        problem_folder.root,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        submission,
        "--output",
        submission,
        cwd=submission,
    )
    assert run.returncode == 2
    assert "would write over the submission" in _one_line_error(run)


def test_passing_and_failing_verdicts(problem_folder: ProblemFolder, submission: Path) -> None:
    problem_folder.write(
        "tests/test_checkpoint_1.py",
        """
        import subprocess

        def test_prints_hello(entrypoint_argv):
            out = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=30)
            assert out.stdout == "hello\\n"
        """,
    )
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results["passed"] is True
    assert checkpoint_documents(results)[0]["groups"]["Core"]["passed"] == 1
    assert "Verdict: PASSED" in run.stdout
    assert "Core                    1/1   100.0%" in run.stdout

    (submission / "main.py").write_text("print('goodbye')\n")
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 1
    assert results["passed"] is False
    (test,) = checkpoint_documents(results)[0]["tests"]
    assert test["status"] == "failed" and "goodbye" in test["message"]


def test_collection_failure(problem_folder: ProblemFolder, submission: Path) -> None:
    problem_folder.write("tests/test_checkpoint_1.py", "def test_x(:\n    pass\n")
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 1
    failure = checkpoint_documents(results)[0]["failure"]
    assert failure["kind"] == "collection"
    assert failure["message"] == "errors collecting tests/test_checkpoint_1.py"
    assert "SyntaxError" in failure["log_tail"]
    assert checkpoint_documents(results)[0]["pytest_exit_code"] == 2


def test_no_tests_collected(problem_folder: ProblemFolder, submission: Path) -> None:
    problem_folder.write("tests/test_checkpoint_1.py", "X = 1\n")
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 1
    assert checkpoint_documents(results)[0]["failure"]["kind"] == "no_tests"


def test_a_runner_that_ends_without_its_seal_is_aborted(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    """Once the runner has started, the submission may be what ended it: a fail, not exit 3."""
    conftest = problem_folder.root / "tests/conftest.py"
    conftest.write_text(
        conftest.read_text() + "\n\ndef pytest_configure(config):\n    import os\n    os._exit(0)\n"
    )
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 1
    assert results["infrastructure_failure"] is False
    assert checkpoint_documents(results)[0]["failure"]["kind"] == "aborted"
    assert "why it failed: aborted: the test runner was stopped before it sealed" in run.stdout


def test_a_runner_that_cannot_start_is_an_infrastructure_failure(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    """uvx cannot build the runner's environment: no index answers, and the cache is empty."""
    env = {
        **os.environ,
        "UV_INDEX_URL": "http://127.0.0.1:9/simple",
        "UV_CACHE_DIR": str(tmp_path / "empty-cache"),
        "UV_OFFLINE": "",
    }
    run, results = evaluate(problem_folder, submission, "--quiet", env=env)
    assert run.returncode == 3, run.stdout + run.stderr
    failure = checkpoint_documents(results)[0]["failure"]
    assert failure["kind"] == "infrastructure"
    assert failure["message"].startswith("the test runner did not start (exit code ")


def test_an_unexpected_exception_is_exit_3_with_a_crash_log(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    """A bug in scbench-ci (here: a report folder it cannot read) is never read as a verdict."""
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "inject")}
    (tmp_path / "inject").mkdir()
    # Loaded by the CLI's interpreter only: scbench_ci's own read of the reports raises.
    (tmp_path / "inject" / "sitecustomize.py").write_text(
        "import scbench_ci.trust.seal as seal\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('a bug')\n"
        "seal.read_report_files = broken\n"
        "import scbench_ci.pipeline.evaluation as evaluation\n"
        "evaluation.read_report_files = broken\n"
    )
    run, _ = evaluate(problem_folder, submission, "--quiet", env=env)
    assert run.returncode == 3
    line = _one_line_error(run)
    log = tmp_path / "out" / "crash.log"
    assert line == (
        "scbench-ci: error: internal error (RuntimeError: a bug); this is a bug in scbench-ci, "
        f"not a verdict. The traceback and versions are in {log}"
    )
    text = log.read_text()
    assert text.startswith("scbench-ci ")
    assert "Traceback (most recent call last)" in text and "RuntimeError: a bug" in text


def test_a_failing_setup_is_a_warning_and_the_tests_decide(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    """As under SCBench, whose entry script runs its setup lines without `set -e`: `uv add`
    fails on a package the index lacks, and a submission that does not import it passes."""
    (submission / "requirements.txt").write_text("scbench-ci-no-such-package-anywhere==1.0\n")
    run, results = evaluate(problem_folder, submission)
    assert run.returncode == 0, run.stdout + run.stderr
    (checkpoint,) = checkpoint_documents(results)
    assert (checkpoint["failure"], checkpoint["passed"]) == (None, True)
    assert any(
        warning.startswith("a setup command failed with exit code ")
        for warning in checkpoint["warnings"]
    )
    setup_log = problem_folder.root.parent / "out/problem/checkpoint_1/setup.log"
    assert "scbench-ci-no-such-package-anywhere" in setup_log.read_text()
    assert not (submission / "pyproject.toml").exists()  # setup ran on the copy


def test_session_timeout(problem_folder: ProblemFolder, submission: Path) -> None:
    problem_folder.write(
        "tests/test_checkpoint_1.py", "import time\n\ndef test_slow():\n    time.sleep(120)\n"
    )
    run, results = evaluate(problem_folder, submission, "--session-timeout", "8")
    assert run.returncode == 1
    assert checkpoint_documents(results)[0]["failure"]["kind"] == "timeout"
    assert checkpoint_documents(results)[0]["duration_s"] < 30


def test_per_test_timeout_fails_only_that_test(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    problem_folder.write(
        "tests/test_checkpoint_1.py",
        "import time\n\ndef test_slow():\n    time.sleep(60)\n\ndef test_fast():\n    pass\n",
    )
    run, results = evaluate(problem_folder, submission, "--timeout", "2")
    assert run.returncode == 1
    tests = {t["id"].split("::")[1]: t for t in checkpoint_documents(results)[0]["tests"]}
    assert tests["test_fast"]["status"] == "passed"
    assert tests["test_slow"]["status"] == "failed"
    assert "Timeout" in tests["test_slow"]["message"]
    assert checkpoint_documents(results)[0]["failure"] is None


def test_all_checkpoints_with_their_own_submissions(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    for name in ("checkpoint_1", "checkpoint_2", "checkpoint_3"):
        folder = tmp_path / "solutions" / name
        folder.mkdir(parents=True)
        (folder / "main.py").write_text(f"print('{name}')\n")
        problem_folder.write(
            f"tests/test_{name}.py",
            f"""
            import subprocess

            def test_own(entrypoint_argv, checkpoint_name):
                out = subprocess.run(entrypoint_argv, capture_output=True, text=True, timeout=30)
                assert out.stdout == "{name}\\n" == checkpoint_name + "\\n"
            """,
        )
    run, results = evaluate(
        problem_folder, tmp_path / "solutions/{checkpoint}", "--quiet", checkpoint="all"
    )
    # Each solution fails the earlier checkpoints' tests, which run as Regression.
    assert run.returncode == 0, run.stdout
    summary = [
        (c["name"], c["groups"]["Core"]["passed"], c["groups"]["Regression"]["failed"])
        for c in checkpoint_documents(results)
    ]
    assert summary == [("checkpoint_1", 1, 0), ("checkpoint_2", 1, 1), ("checkpoint_3", 1, 2)]
    out = problem_folder.root.parent / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "checkpoint_results.jsonl",
        "problem",
        "results.json",
        "summary.md",
    ]
    assert sorted(p.name for p in (out / "problem").iterdir()) == [
        "checkpoint_1",
        "checkpoint_2",
        "checkpoint_3",
    ]
    assert (out / "problem/checkpoint_2/pytest-report.json").is_file()

    run, results = evaluate(
        problem_folder,
        tmp_path / "solutions/{checkpoint}",
        "--quiet",
        "--no-include-prior-tests",
        "--policy",
        "all-cases",
        checkpoint="all",
    )
    assert run.returncode == 0
    assert [c["groups"]["Regression"]["total"] for c in checkpoint_documents(results)] == [0, 0, 0]


def test_pytest_arguments_after_double_dash(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    problem_folder.write(
        "tests/test_checkpoint_1.py", "def test_a():\n    pass\n\ndef test_b():\n    assert False\n"
    )
    run, results = evaluate(problem_folder, submission, "--", "-k", "test_a")
    assert run.returncode == 0, run.stdout + run.stderr
    assert [t["id"] for t in checkpoint_documents(results)[0]["tests"]] == [
        "tests/test_checkpoint_1.py::test_a"
    ]


def _without_a_daemon(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path, *executor: str
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """An evaluation with DOCKER_HOST naming no daemon, of a test that leaves a file when it
    runs: the run, that file and the output folder."""
    ran_here = tmp_path / "ran-on-the-host"
    problem_folder.write(
        "tests/test_checkpoint_1.py",
        f"from pathlib import Path\n\ndef test_a():\n    Path({str(ran_here)!r}).touch()\n",
    )
    no_daemon = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    output = tmp_path / "out"
    run = run_cli(
        "evaluate",
        "--problem",
        problem_folder.root,
        "--checkpoint",
        "checkpoint_1",
        "--submission",
        submission,
        "--output",
        output,
        "--quiet",
        *executor,
        cwd=tmp_path,
        env=no_daemon,
    )
    return run, ran_here, output


@pytest.mark.parametrize("executor", [(), ("--executor", "auto"), ("--executor", "docker")])
def test_without_a_daemon_nothing_runs_on_the_host(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path, executor: tuple[str, ...]
) -> None:
    """The default, `auto` (an alias of docker) and docker alike: exit 3 with what to do, before
    any test runs."""
    run, ran_here, output = _without_a_daemon(problem_folder, submission, tmp_path, *executor)
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr == (
        f"scbench-ci: error: cannot reach the Docker daemon at DOCKER_HOST=unix://"
        f"{tmp_path}/no-daemon.sock: start Docker (or point DOCKER_HOST at a running daemon), "
        "or pass --executor local to run the tests on this machine without isolation\n"
    )
    assert not ran_here.exists()
    assert not (output / "results.json").exists()


def test_without_a_daemon_the_tests_run_on_the_host_only_with_the_local_executor(
    problem_folder: ProblemFolder, submission: Path, tmp_path: Path
) -> None:
    run, ran_here, output = _without_a_daemon(
        problem_folder, submission, tmp_path, "--executor", "local"
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == f"scbench-ci: {LOCAL_NOTICE}\n"
    assert ran_here.exists()
    assert json.loads((output / "results.json").read_text())["executor"] == "local"


def test_help_says_the_local_executor_does_not_isolate(tmp_path: Path) -> None:
    for command in ("evaluate", "check"):
        run = run_cli(command, "--help", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        said = " ".join(run.stdout.split())
        assert "{docker,local}" in said
        assert "local (this machine, as you, WITHOUT ISOLATION: only for code you trust)" in said


def test_in_a_workflow_step_the_streamed_output_cannot_issue_commands(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    problem_folder.write(
        "tests/test_checkpoint_1.py",
        "def test_prints():\n    print('\\n::set-output name=passed::true')\n    assert False\n",
    )
    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    run, _ = evaluate(problem_folder, submission, env=env)
    assert run.returncode == 1
    stop = re.search(r"^::stop-commands::(\w+)$", run.stdout, re.MULTILINE)
    assert stop is not None, run.stdout
    injected = run.stdout.index("::set-output name=passed::true")
    resumed = run.stdout.index(f"\n::{stop.group(1)}::\n")
    assert stop.start() < injected < resumed


def test_outside_a_workflow_the_stream_is_not_wrapped(
    problem_folder: ProblemFolder, submission: Path
) -> None:
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_ACTIONS"}
    run, _ = evaluate(problem_folder, submission, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "::stop-commands::" not in run.stdout
