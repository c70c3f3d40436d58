"""action.yml, the input reader and the CLI tested against each other, so none of them can drift:
the same inputs and outputs, in the same order, with the same defaults, read into the same options
as the CLI's flags; and the image action.yml runs. docs/action.md is held to action.yml by
tests/test_docs.py."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scbench_ci import __version__
from scbench_ci.action.inputs import DEFAULTS, ActionInputs, read_inputs
from scbench_ci.cli import evaluate
from scbench_ci.cli.main import parse_arguments
from scbench_ci.options import EvaluationOptions
from testing.paths import REPO_ROOT
from testing.problems import ProblemFolder
from testing.runner import input_variable
from testing.workflow_files import action_steps, doc_snippets, load_workflow

ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())


class _RecordingEnv(dict[str, str]):
    """An environment that remembers every name read from it."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


def _workspace(tmp_path: Path) -> Path:
    ProblemFolder(tmp_path / "problem")
    (tmp_path / "ci").mkdir()
    return tmp_path


def _action(workspace: Path, github_sha: str = "", **inputs: str) -> ActionInputs:
    env = {"GITHUB_WORKSPACE": str(workspace), "GITHUB_SHA": github_sha}
    env |= {input_variable(name): value for name, value in inputs.items()}
    return read_inputs(env)


def _cli(*argv: str) -> EvaluationOptions:
    return evaluate.options(parse_arguments(["evaluate", *argv]))


def test_action_yml_declares_the_inputs_the_reader_reads_with_its_defaults() -> None:
    declared = {
        name: None if spec.get("required") else spec.get("default", "")
        for name, spec in ACTION["inputs"].items()
    }
    assert list(declared) == list(DEFAULTS)
    assert declared == DEFAULTS


def test_the_reader_reads_every_input_of_action_yml_and_no_other(tmp_path: Path) -> None:
    env = _RecordingEnv(
        {
            "GITHUB_WORKSPACE": str(_workspace(tmp_path)),
            "INPUT_PROBLEM": "problem",
            "INPUT_CHECKPOINT": "checkpoint_1",
        }
    )
    read_inputs(env)
    read = {name for name in env.read if name.startswith("INPUT_")}
    assert read == {input_variable(name) for name in ACTION["inputs"]}


def test_inputs_left_out_are_action_yml_defaults(tmp_path: Path) -> None:
    """A step that runs the image itself (`uses: docker://...`, as from a mirror) passes only the
    inputs it sets; the runner passes action.yml's defaults for the others."""
    workspace = _workspace(tmp_path)
    given = {"problem": "problem", "checkpoint": "checkpoint_1"}
    defaults = {name: str(default) for name, default in DEFAULTS.items() if default is not None}
    assert _action(workspace, **given) == _action(workspace, **{**defaults, **given})


def _as_cli(from_action: EvaluationOptions) -> EvaluationOptions:
    return dataclasses.replace(from_action, own_output=False, confine_submissions_to=None)


def test_the_cli_and_the_action_make_the_same_default_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    workspace = _workspace(tmp_path)
    from_cli = _cli(
        *("--problem", str(workspace / "problem"), "--checkpoint", "checkpoint_1"),
        *("--submission", str(workspace), "--output", str(workspace / ".scbench")),
        *("--executor", "docker"),
    )
    from_action = _action(workspace, problem="problem", checkpoint="checkpoint_1").options
    # The differences on purpose: the action's .scbench/ in the workspace is its own, and its
    # submissions stay in the workspace.
    assert from_action.own_output and not from_cli.own_output
    assert from_action.confine_submissions_to == workspace
    assert from_cli == _as_cli(from_action)


def test_every_option_reaches_the_cli_and_the_action_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _workspace(tmp_path)
    sha = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setenv("GITHUB_SHA", sha)
    from_action = _action(
        workspace,
        github_sha=sha,
        problem="problem",
        checkpoint="all",
        submission="solutions/{checkpoint}",
        include_prior_tests="false",
        entrypoint="python3 main.py",
        environment="ci/env.yaml",
        image="python:3.12",
        memory="1g",
        cpus="0.5",
        pids_limit="64",
        disk="256m",
        cache="false",
        test_network="false",
        timeout="12",
        session_timeout="600",
        quality="false",
        scbench="paper",
        pass_policy="any-case",
        fail_on="regressions",
        details="all",
        history="12",
        pytest_args="-k 'a and b' -x",
        jobs="3",
        test_shards="2",
        skip_existing="true",
        reruns="2",
        repeat="3",
        flaky_passes="true",
        select="problem/checkpoint_1\nproblem/checkpoint_2",
    ).options
    from_cli = _cli(
        *("--problem", str(workspace / "problem"), "--checkpoint", "all"),
        *("--submission", str(workspace / "solutions/{checkpoint}")),
        *("--output", str(workspace / ".scbench"), "--executor", "docker"),
        *("--no-include-prior-tests", "--entrypoint", "python3 main.py"),
        *("--environment", str(workspace / "ci/env.yaml"), "--image", "python:3.12"),
        *("--memory", "1g", "--cpus", "0.5", "--pids-limit", "64", "--disk", "256m"),
        *("--no-cache", "--no-test-network", "--timeout", "12", "--session-timeout", "600"),
        *("--no-quality", "--scbench", "paper"),
        *("--policy", "any-case", "--fail-on", "regressions", "--jobs", "3", "--skip-existing"),
        *("--shards", "2"),
        *("--reruns", "2", "--repeat", "3", "--flaky-passes", "--details", "all"),
        *("--history", "12"),
        *("--select", "problem/checkpoint_1", "--select", "problem/checkpoint_2"),
        *("--", "-k", "a and b", "-x"),
    )
    assert from_cli == _as_cli(from_action)
    # Every option was set away from its default: each one reaches both front ends.
    defaults = EvaluationOptions(problems=(), checkpoint="", submission="", output_dir=Path())
    for option in dataclasses.fields(EvaluationOptions):
        # The action's executor is always docker; its output folder always its own; it runs on
        # its own machine (no engine); explicit targets are the Python API's.
        if option.name not in ("executor", "own_output", "engine", "ray_address", "targets"):
            assert getattr(from_action, option.name) != getattr(defaults, option.name), option


def test_every_use_of_the_action_gives_inputs_it_has_and_those_it_needs() -> None:
    workflows = [load_workflow("ci.yml")]
    snippets, _ = doc_snippets()
    workflows += [yaml.safe_load(snippet.text) for snippet in snippets]
    steps = [step for workflow in workflows for step in action_steps(workflow)]
    assert len(steps) >= 6
    required = {name for name, spec in ACTION["inputs"].items() if spec.get("required")}
    for step in steps:
        given = set(step.get("with", {}))
        assert given <= set(ACTION["inputs"]), step
        assert required <= given, step


def test_the_image_is_the_dockerfile_or_this_versions_release() -> None:
    """Development: the runner builds the Dockerfile. A release commit (scripts/release_action.py,
    in the release workflow, which then runs this test) names the image of the package's version."""
    image = ACTION["runs"]["image"]
    if image == "Dockerfile":
        assert (REPO_ROOT / "Dockerfile").is_file()
    else:
        found = re.fullmatch(r"docker://ghcr\.io/[a-z0-9-]+/evaluate:(.+)", image)
        assert found, image
        assert found.group(1) == __version__


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_the_workflows_use_no_expression_in_scripts(name: str) -> None:
    """Values reach `run:` scripts through `env:`, never pasted into the script's text."""
    for job in load_workflow(name)["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", ""), step
