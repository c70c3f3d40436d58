"""Hostile text through the whole pipeline comes out as text: never as markdown, HTML or a
workflow command, and as it was in results.json.

tests/threats/hostile/injection_problem has three checkpoints whose text is hostile: test names
(checkpoint_1), a collection error (checkpoint_2) and the end of a log with no report
(checkpoint_3, where a test shows the submission's output as it runs and the submission kills
pytest: an aborted run). The failure messages and output are those of its submission,
injection_submission, which prints OUTPUT: markdown, HTML, workflow commands, escapes.
"""

from __future__ import annotations

import json
import re
import runpy
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import jsonschema
import pytest

from scbench_ci.job.reports import problem_node_id
from scbench_ci.trust.terminal import inert, terminal_text
from testing.action_run import run_action
from testing.examples import SCHEMA
from testing.hostile_submissions import HOSTILE
from testing.results import checkpoint_documents
from testing.twirp_server import ArtifactService
from tests.outputs.test_summary import rendered_tags, scbench

# They talk to the artifact service double (testing.azurite) on this machine.
# Each runs scbench-ci end to end, as every test under tests/integration does.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("loopback_without_proxy")]

PROBLEM = HOSTILE / "injection_problem"
SUBMISSION = HOSTILE / "injection_submission"
NAMES: list[str] = json.loads((PROBLEM / "tests/names.json").read_text(encoding="utf-8"))
OUTPUT: str = runpy.run_path(str(SUBMISSION / "main.py"))["OUTPUT"]
FAILED_EXIT = 1

# What GitHub's runner reads in a step's output, after actions/runner (src/Runner.Worker/
# ActionCommandManager.cs and src/Runner.Common/ActionCommand.cs).
REGISTERED = frozenset(
    {
        "add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
        "notice", "remove-matcher", "save-state", "set-env", "set-output", "stop-commands",
        "warning",
    }
)  # fmt: skip
"""The commands the runner knows: a line naming any other is printed as it is."""
LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Where .NET's ReadLine, with which the runner reads the output, ends a line."""
PROPERTY_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))
DATA_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))


@dataclass(frozen=True)
class Command:
    name: str
    properties: dict[str, str]
    data: str


def _unescape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for escaped, character in escapes:
        text = text.replace(escaped, character)
    return text


def _parse(line: str, registered: set[str]) -> Command | None:
    """`::name properties::data` after leading white space, else `##[name properties]data`
    anywhere in the line (the runner's old form, still read)."""
    stripped = line.lstrip()
    if stripped.startswith("::") and (end := stripped.find("::", 2)) >= 0:
        info, data, separator = stripped[2:end], stripped[end + 2 :], ","
    elif (start := line.find("##[")) >= 0 and (end := line.find("]", start)) >= 0:
        info, data, separator = line[start + 3 : end], line[end + 1 :], ";"
    else:
        return None
    name, _, properties = info.partition(" ")
    if name.lower() not in registered:
        return None
    pairs = (pair.split("=", 1) for pair in properties.split(separator) if "=" in pair)
    return Command(
        name.lower(),
        {key.strip(): _unescape(value, PROPERTY_ESCAPES) for key, value in pairs},
        _unescape(data, DATA_ESCAPES),
    )


def processed_commands(log: str) -> list[Command]:
    """The workflow commands the runner processes in this output; while commands are stopped,
    only the one that resumes them."""
    commands = []
    stop_token: str | None = None
    for line in LINE_BREAK.split(log):
        command = _parse(line, {*REGISTERED, *([stop_token.lower()] if stop_token else [])})
        if command is None or (stop_token and command.name != stop_token.lower()):
            continue
        stop_token = command.data if command.name == "stop-commands" else None
        commands.append(command)
    return commands


def raw(path: Path) -> str:
    """A file's text with its carriage returns (read_text would make them newlines)."""
    return path.read_bytes().decode("utf-8")


def escaped_id(name: str) -> str:
    """pytest's node id for a parametrize id: what is not printable ASCII, escaped."""
    return f"tests/test_checkpoint_1.py::test_name[{name.encode('unicode_escape').decode()}]"


def assert_faithful(results: dict[str, Any], output: Path) -> None:
    """results.json has the hostile text as pytest and the submission wrote it."""
    jsonschema.validate(results, SCHEMA)
    names, collection, crashed = checkpoint_documents(results)
    report = json.loads(raw(output / "checkpoint_1/pytest-report.json"))
    # pytest ran the staged .evaluation_tests/; results name the problem's tests/.
    staged = [problem_node_id(t["nodeid"]) for t in report["tests"]]
    # In SCBench 1.0's order: its inventory's first, by node id (an id with a space is not in it).
    assert sorted(t["id"] for t in names["tests"]) == sorted(staged)
    assert sorted(t["id"] for t in names["tests"]) == sorted(escaped_id(name) for name in NAMES)
    for test in names["tests"]:
        assert (test["status"], test["group"]) == ("failed", "Core")
        assert test["message"] == f"Failed: {OUTPUT}".rstrip("\n")
    assert collection["failure"]["kind"] == "collection"
    first, *others = OUTPUT.rstrip("\n").split("\n")
    assert f"E   RuntimeError: {first}\n" in collection["failure"]["log_tail"]
    for line in others:
        assert f"\nE   {line}" in collection["failure"]["log_tail"]
    assert crashed["failure"]["kind"] == "aborted"
    # Its one test, collected but never reported, fails as SCBench 1.0 counts it.
    assert [(t["status"], t["group"]) for t in crashed["tests"]] == [("failed", "Core")]
    assert OUTPUT in raw(output / "checkpoint_3/pytest.log")
    # The log's lines, as Python splits them (at carriage returns and line separators too); the
    # first follows the test's name.
    assert set(OUTPUT.splitlines()[1:]) <= set(crashed["failure"]["log_tail"].split("\n"))


def assert_renders_as_text(markdown: str, links: int, results: dict[str, Any]) -> None:
    """Rendered as GitHub renders it: only the summary's own elements, whatever the text. The
    evaluator's own warnings (a leftover process killed, which depends on timing) are a list of
    their own."""
    tags = rendered_tags(markdown)
    # One verdict heading, a section per checkpoint and a failing group per checkpoint with
    # failing tests, each one folded block with its output as code once. Every hostile test fails
    # with the same output, so they are one cause, a block listing them. Under SCBench 1.0's rules
    # the aborted checkpoint's test, collected but never reported, fails too: a group of its own.
    # And the two logs as code.
    failing = [
        c for c in checkpoint_documents(results) if any(t["status"] == "failed" for t in c["tests"])
    ]
    groups = len(failing)
    expected = {"h2": 1, "h3": 3, "h4": groups, "details": groups, "summary": groups}
    assert {tag: tags.count(tag) for tag in expected} == expected
    assert markdown.count(f"<strong>The cause ({len(NAMES)} tests)</strong>") == 1
    # With the checkpoints' code quality measured, their trajectory: a chart and a table.
    trajectory = int("**Code quality, checkpoint by checkpoint**" in markdown)
    assert tags.count("pre") == groups + 2 + trajectory
    assert tags.count("a") == links
    assert tags.count("table") == 4 + trajectory
    warnings = [c["warnings"] for c in checkpoint_documents(results) if c["warnings"]]
    # The programs of SCBench's image that the image lacks (where it was built without them).
    missing = {
        program["program"]
        for c in checkpoint_documents(results)
        for program in (c["image"] or {}).get("missing", ())
    }
    # Beside them, the first screen's list of the three failing checkpoints and why, and the
    # cause's list of the tests it hit.
    assert tags.count("ul") == len(warnings) + 2 + bool(missing)
    assert tags.count("li") == sum(len(listed) for listed in warnings) + 3 + len(NAMES) + len(
        missing
    )
    assert {"script", "img", "blockquote"}.isdisjoint(tags)


def test_the_cli(tmp_path: Path) -> None:
    output = tmp_path / "out"
    run = scbench(
        "evaluate",
        "--problem",
        PROBLEM,
        "--checkpoint",
        "all",
        "--submission",
        SUBMISSION,
        "--output",
        output,
        "--executor",
        "local",
        "--quiet",
    )
    assert run.returncode == FAILED_EXIT, run.stdout + run.stderr
    results = json.loads(raw(output / "results.json"))
    assert_faithful(results, output / PROBLEM.name)
    # Rendered again from results.json, through the strict reader: the run's summary.md, byte for
    # byte. On stdout, where a workflow step reads commands, the same markdown made inert.
    again = tmp_path / "again.md"
    rendered = scbench("summary", output / "results.json", "--output", again)
    assert rendered.returncode == 0, rendered.stderr
    assert again.read_bytes() == (output / "summary.md").read_bytes()
    summary = scbench("summary", output / "results.json")
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout == inert(raw(output / "summary.md"))
    assert processed_commands(summary.stdout) == []
    assert_renders_as_text(raw(output / "summary.md"), links=0, results=results)
    # The report it prints, log tails included, as a workflow step running the CLI shows it.
    assert "::error::the last line" in run.stdout
    assert processed_commands(run.stdout) == []


def test_the_action(
    docker_client: docker.DockerClient,
    action_image: str,
    test_image: str,
    tmp_path: Path,
    artifact_service: ArtifactService,
) -> None:
    # run_action copies one folder of ours into the workspace: the problem, holding the solution.
    problem = tmp_path / "problem"
    shutil.copytree(PROBLEM, problem)
    shutil.copytree(SUBMISSION, problem / "solution")
    run = run_action(
        docker_client,
        action_image,
        tmp_path / "runner",
        {
            "image": test_image,
            "problem": "submission",
            "submission": "submission/solution",
            "checkpoint": "all",
        },
        artifact_service,
        submission=str(problem),
    )
    assert run.exit_code == FAILED_EXIT, run.log
    assert (run.outputs["passed"], run.outputs["infrastructure_failure"]) == ("false", "false")
    reports = run.workspace / ".scbench"
    results = json.loads(raw(reports / "results.json"))
    assert_faithful(results, reports / "submission")
    assert_renders_as_text(run.summary, links=1, results=results)
    assert f"]({run.outputs['artifact_url']})" in run.summary

    commands = processed_commands(run.log)
    token = commands[1].data
    assert [(c.name, c.data) for c in commands[:4]] == [
        ("group", "scbench-ci: evaluation"),
        ("stop-commands", token),
        (token, ""),
        ("endgroup", ""),
    ]
    # Then only the annotations, each carrying its title and message as the workflow commands'
    # escaper shows them: what is not printable as its escape (a message keeps its newlines).
    checkpoints = checkpoint_documents(results)
    # The problem is named by its folder in the workspace.
    raw_expected = [
        (f"submission / {c['name']}: {c['failure']['kind']}", c["failure"]["message"])
        for c in checkpoints
        if c["failure"]
    ] + [(f"checkpoint_1 · Core · {t['id']}", t["message"]) for t in checkpoints[0]["tests"]]
    expected = [
        (terminal_text(title, kept=""), terminal_text(message, kept="\n"))
        for title, message in raw_expected
    ]
    annotations = commands[4:]
    assert {c.name for c in annotations} == {"error"}
    assert [(c.properties["title"], c.data) for c in annotations] == expected[:10]
    for annotation in annotations[2:]:
        assert annotation.properties["file"] == "submission/tests/test_checkpoint_1.py"
