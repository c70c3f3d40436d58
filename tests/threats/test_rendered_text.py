"""Untrusted text in every output, escaped by construction: the hostile-payload sweep.

Documents in which every string field the schema lets be any string holds PAYLOAD (markdown,
HTML, terminal escapes, workflow commands), and every problem, checkpoint and test name is the
most hostile name the name rule accepts (testing/hostile_results.py finds the fields by walking
results.schema.json), are published as `command: publish` publishes a fork's artifact (job
summary, pull request comment, Check Run title, summary, text and annotations, workflow
commands, outputs), merged with `scbench-ci merge`, and shown by `scbench-ci summary` and
`scbench-ci history` and the console recaps. Markdown is rendered as GitHub renders it (cmark-gfm)
and compared with the rendering of the same document made benign: no payload makes a link,
image, heading, tag, code span, cell, mention or HTML comment. What goes to a terminal holds no
control, C1, bidi or format character; every workflow command is one of ours, its properties
whole. The fields and names the strict reader refuses are refused with exit 2 and an inert
message, in the terminal and in the failed Check Run.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.foundation.errors import ExitCode, UsageError
from scbench_ci.outputs.check_console import render_check_report
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.github.pr_comment import comment_tag
from scbench_ci.outputs.summary import render_summary
from scbench_ci.results.carried_history import carried, with_history
from scbench_ci.results.file import write_pull_request, write_results
from scbench_ci.results.model import RunResult
from scbench_ci.results.pull_request import PullRequestRef
from scbench_ci.results.quality import Unmeasured
from scbench_ci.results.quality_report import shown_path
from scbench_ci.trust.names import NAME_PATTERN
from testing.cli import run_cli
from testing.github_page import markdown_html
from testing.golden import trajectory_run
from testing.hostile_results import (
    HOSTILE_NAME,
    PAYLOAD,
    REFUSED_NAMES,
    Hostile,
    hostile,
    live_in_html,
    not_inert_on_a_terminal,
    places,
    read,
    refusal,
    with_name,
)
from testing.mermaid import mermaid_blocks
from testing.paths import REPO_ROOT
from testing.rest_double import FORK, RestDouble
from testing.results import make_checkpoint, make_run, make_test
from tests.action.test_triggering_run import HEAD, NAME, PR, publish
from tests.outputs.test_summary_history import SCHEDULE

GOLDEN = REPO_ROOT / "tests/data/golden"
FOREIGN_TAG = "<!-- scbench-ci:0123456789abcdef -->"
"""Another job's sticky-comment tag, which PAYLOAD holds."""
OUR_COMMAND = re.compile(
    r"::(error|warning) title=[^:,\n]*(,file=[^:,\n]*)?(,line=\d+)?::[^\n\r]*"
    r"|::warning title=scbench-ci::[^\n\r]*"
)


def golden(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((GOLDEN / name / "results.json").read_text())
    return document


def with_every_list(document: dict[str, Any]) -> dict[str, Any]:
    """The document with a warning and a notice on each checkpoint, a failure with its log on
    the first, and (with a comparison) a note on the runs' selections: each a string field the
    golden runs leave empty."""
    for problem in document["problems"]:
        for checkpoint in problem["checkpoints"]:
            checkpoint["warnings"], checkpoint["notices"] = ["a warning"], ["a notice"]
    first = document["problems"][0]
    first["checkpoints"][0].update(
        passed=False, failure={"kind": "timeout", "message": "m", "log_tail": "l\nl"}
    )
    first["passed"] = document["passed"] = False
    if document["comparison"] is not None:
        document["comparison"]["selection_notes"] = ["a note"]
    if first["check"] is not None:
        first["check"]["findings"] = [
            {
                "stage": "oracle",
                "severity": "warning",
                "file": "f",
                "line": 1,
                "message": "m",
                "checkpoint": first["checkpoint_order"][0],
                "test": first["checkpoints"][0]["tests"][0]["id"],
            }
        ]
    return document


def history_document(scratch: Path) -> dict[str, Any]:
    """A run of one checkpoint with the history of five nights before it, and its trends."""
    run = None
    for night in range(1, 7):
        tests = [
            make_test(name, statuses[night - 1], group)
            for name, (group, statuses) in SCHEDULE.items()
        ]
        tonight = make_run(make_checkpoint(*tests), started_at=f"2026-03-0{night}T02:00:00+00:00")
        run = with_history(tonight, 30, "c0ffee0123456789", carried(run))
    assert run is not None
    document: dict[str, Any] = json.loads(write_results(run, scratch).read_text())
    assert document["history"] is not None and document["trends"] is not None
    return document


BASES = ("comparison", "merge", "check", "history")
"""One problem and a comparison; three problems in a matrix; a check; a history."""
CHECKED = {
    ".comparison.baseline_started_at",
    ".trends.pass_rates[].started_at",
    ".trends.pass_rates[].commit",
    ".trends.failing[].since",
    ".trends.quality[].started_at",
    ".problems[].checkpoints[].quality.measures.tool_version",
    ".problems[].checkpoints[].image.missing[].program",
    ".problems[].checkpoints[].image.missing[].without",
}
"""The free text fields the reader refuses a payload in: dates it parses, the trends, which it
derives again from the history and compares, scb-check's version (at most 64 characters) and the
image's missing programs (at most 100 and 500 characters)."""


@dataclass(frozen=True)
class Published:
    hostile: Hostile
    document: Path
    benign: Path
    summary: str
    comment: str
    check_run: tuple[str, str, str]
    annotations: list[dict[str, Any]]
    log: str
    benign_summary: str
    benign_comment: str
    benign_check_run: tuple[str, str, str]


def published(document: dict[str, Any], workspace: Path) -> tuple[str, str, Any, str]:
    """What `command: publish` makes of a fork's artifact holding `document`: the job summary,
    the comment's body, the Check Run and the step's log."""
    folder = workspace.parent / "artifact"
    folder.mkdir(exist_ok=True)
    (folder / "results.json").write_text(json.dumps(document))
    write_pull_request(PullRequestRef(PR, HEAD), folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.iterdir():
            bundle.write(path, path.name)
    with RestDouble() as double:
        double.state.pull_requests[PR] = HEAD
        run = double.add_run(
            event="pull_request", head_sha=HEAD, head_repository=FORK, pull_request=PR
        )
        double.add_artifact(run, NAME, buffer.getvalue())
        code, log, env = publish(double, workspace, run, details="all")
        assert code == 0, log
        (comment,) = double.comments_on(PR)
        (check,) = double.check_runs_on(HEAD)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    return summary, comment.body, check, log


@pytest.fixture(scope="module", params=BASES)
def sweep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Published:
    scratch = tmp_path_factory.mktemp(request.param)
    if request.param == "history":
        base = history_document(scratch)
    else:
        base = with_every_list(golden(request.param))
    found = hostile(base, scratch)
    made = {}
    for side, document in (("hostile", found.document), ("benign", found.benign)):
        workspace = scratch / side / "workspace"
        workspace.mkdir(parents=True)
        made[side] = published(document, workspace)
        (scratch / f"{side}.json").write_text(json.dumps(document))
    (summary, comment, check, log), (benign_summary, benign_comment, benign_check, _) = (
        made["hostile"],
        made["benign"],
    )
    return Published(
        found,
        scratch / "hostile.json",
        scratch / "benign.json",
        summary,
        comment,
        (check.title, check.summary, check.text),
        check.annotations,
        log,
        benign_summary,
        benign_comment,
        (benign_check.title, benign_check.summary, benign_check.text),
    )


def test_the_sweep_reaches_every_free_text_field_of_the_schema(sweep: Published) -> None:
    """The payload is in every string field of the document that the reader takes it in; the
    names are hostile everywhere they are; a refused field is one of CHECKED."""
    document = json.loads(sweep.document.read_text())
    kinds = {place.kind for place in places(document)}
    assert {"problem", "checkpoint", "test", "text"} <= kinds
    assert sweep.hostile.text_fields
    assert set(sweep.hostile.refused) <= CHECKED
    for place in places(document):
        if place.kind in ("problem", "checkpoint"):
            assert HOSTILE_NAME in _value(document, place.path), place


def test_no_payload_is_live_in_the_job_summary_the_comment_or_the_check_run(
    sweep: Published,
) -> None:
    pairs = {
        "job summary": (sweep.summary, sweep.benign_summary),
        "comment": (sweep.comment, sweep.benign_comment),
        "check run title": (sweep.check_run[0], sweep.benign_check_run[0]),
        "check run summary": (sweep.check_run[1], sweep.benign_check_run[1]),
        "check run text": (sweep.check_run[2], sweep.benign_check_run[2]),
    }
    assert "PWN-TEXT" in sweep.summary + sweep.comment  # the payloads are shown, as text
    for output, (markdown, benign) in pairs.items():
        assert live_in_html(markdown_html(markdown), markdown_html(benign)) == [], output
        # The zero-width space after an `@` is the escaper's: it keeps a mention from notifying.
        assert not_inert_on_a_terminal(markdown.replace("@\u200b", "@")) == [], output


def test_the_comment_s_tag_is_its_last_line_and_another_job_s_tag_is_text(
    sweep: Published,
) -> None:
    body = sweep.comment
    assert re.fullmatch(r"<!-- scbench-ci:[0-9a-f]{16} -->", body.rsplit("\n", 1)[1])
    assert not body.endswith(FOREIGN_TAG)
    # Quoted in a code block, or escaped: never an HTML comment of the page.
    rendered = markdown_html(body)
    assert rendered.count("<!--") == 1 and FOREIGN_TAG not in rendered


def test_the_workflow_commands_are_ours_whole(sweep: Published) -> None:
    log = sweep.log
    assert not_inert_on_a_terminal(log) == []
    commands = [line for line in log.split("\n") if line.lstrip().startswith("::")]
    assert commands, log
    for line in commands:
        assert OUR_COMMAND.fullmatch(line), line
    assert not re.search(r"^\s*##\[", log, re.MULTILINE)
    for annotation in sweep.annotations:
        for key in ("message", "title", "path"):
            assert not_inert_on_a_terminal(annotation[key].replace("\n", "")) == [], annotation


@pytest.mark.parametrize("sweep", [base for base in BASES if base != "check"], indirect=True)
def test_merge_s_summary_and_recap(sweep: Published, tmp_path: Path) -> None:
    """`merge` takes evaluations' shards, not checks."""
    made = {}
    for side, document in (("hostile", sweep.document), ("benign", sweep.benign)):
        run = run_cli("merge", document, "--output", tmp_path / side)
        assert run.returncode in (0, 1), run.stderr
        assert not_inert_on_a_terminal(run.stdout + run.stderr) == []
        made[side] = (tmp_path / side / "summary.md").read_text()
    assert live_in_html(markdown_html(made["hostile"]), markdown_html(made["benign"])) == []


def test_the_summary_and_history_commands_on_a_terminal(sweep: Published) -> None:
    summary = run_cli("summary", sweep.document, "--details", "all")
    benign = run_cli("summary", sweep.benign, "--details", "all")
    assert (summary.returncode, benign.returncode) == (0, 0), summary.stderr
    assert not_inert_on_a_terminal(summary.stdout + summary.stderr) == []
    assert re.search(r"\\x1b\\?\[32mVerdict: PASSED", summary.stdout)  # as text
    assert live_in_html(markdown_html(summary.stdout), markdown_html(benign.stdout)) == []
    history = run_cli("history", sweep.document)
    assert history.returncode == 0, history.stderr
    assert not_inert_on_a_terminal(history.stdout + history.stderr) == []


def test_the_console_recaps(sweep: Published, tmp_path: Path) -> None:
    run = read(sweep.hostile.document, tmp_path / "results.json")
    recaps = [render_report(run, None, fail_on="policy")]
    if run.problems[0].check is not None:
        recaps.append(render_check_report(run, None, fail_on="policy"))
    for recap in recaps:
        assert "PWN" in recap
        assert not_inert_on_a_terminal(recap) == []
        assert not re.search(r"^\s*::", recap, re.MULTILINE)


# What the rules refuse.


@pytest.mark.parametrize("kind", ["problem", "checkpoint", "test"])
@pytest.mark.parametrize("reason", sorted(REFUSED_NAMES))
def test_a_name_the_rule_refuses_is_refused(kind: str, reason: str, tmp_path: Path) -> None:
    base = with_every_list(golden("comparison"))
    error = refusal(with_name(base, kind, REFUSED_NAMES[reason]), tmp_path)
    assert error is not None, (kind, reason)
    assert "results.json: " in error and not_inert_on_a_terminal(error) == []
    assert UsageError.exit_code == ExitCode.USAGE


@pytest.mark.parametrize("scenario", ["single_pass", "missing_module"])  # without and with trends
@pytest.mark.parametrize("kind", ["problem", "checkpoint", "test"])
def test_a_refused_name_is_exit_2_with_an_inert_message(
    kind: str, scenario: str, tmp_path: Path
) -> None:
    document = with_name(golden(scenario), kind, REFUSED_NAMES["an escape sequence"])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    for command in ("summary", "history"):
        run = run_cli(command, path)
        assert run.returncode == ExitCode.USAGE, run.stderr
        assert "Traceback" not in run.stderr
        assert not_inert_on_a_terminal(run.stdout + run.stderr) == [], run.stderr
        assert "holds \\x1b, a character that is not printable" in run.stderr


def test_a_refused_field_is_exit_2_with_an_inert_message(sweep: Published) -> None:
    assert set(sweep.hostile.refused) <= CHECKED
    if not sweep.hostile.refused:
        return
    document = sweep.hostile.document
    found = [p for p in places(document) if p.field in sweep.hostile.refused]
    path = sweep.document.parent / "refused.json"
    refused = json.loads(json.dumps(document))
    _set(refused, found[0].path, PAYLOAD)
    path.write_text(json.dumps(refused))
    run = run_cli("summary", path)
    assert run.returncode == ExitCode.USAGE, run.stdout
    assert "Traceback" not in run.stderr and not_inert_on_a_terminal(run.stderr) == []
    assert f": {found[0].field.split('.')[1].removesuffix('[]')}" in run.stderr


def test_the_schema_pattern_refuses_what_the_rule_refuses() -> None:
    pattern = re.compile(NAME_PATTERN)
    for reason, name in REFUSED_NAMES.items():
        if reason not in ("nothing", "too many characters"):
            assert pattern.search(name) is None, reason
    assert pattern.search(HOSTILE_NAME)


def test_a_refused_document_fails_the_check_run_with_its_reason_as_text(
    tmp_path: Path,
) -> None:
    """`command: publish` of an artifact the strict reader refuses: the Check Run fails, its
    text quoting the refusal (which quotes the hostile value) as text."""
    document = golden("single_pass")
    document["policy"] = "<img src=https://pwn.example/i.png> [PWN](https://pwn.example) @pwnuser"
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(document))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.write(folder / "results.json", "results.json")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with RestDouble() as double:
        double.state.pull_requests[PR] = HEAD
        run = double.add_run(
            event="pull_request", head_sha=HEAD, head_repository=FORK, pull_request=PR
        )
        double.add_artifact(run, NAME, buffer.getvalue())
        code, log, _ = publish(double, workspace, run)
        checks = double.check_runs_on("d" * 40) + double.check_runs_on(HEAD)
    assert code == ExitCode.USAGE, log
    (check,) = checks
    assert check.conclusion == "failure"
    assert check.text is not None and "PWN" in check.text
    # Shown as the step's reason is: a line of text, and the same in a code block.
    for shown, benign in ((check.title, "text"), (check.summary, "text"), (check.text, "```\n```")):
        assert live_in_html(markdown_html(shown), markdown_html(benign)) == [], shown
        assert not_inert_on_a_terminal(shown.replace("@\u200b", "@")) == [], shown
    assert not_inert_on_a_terminal(log) == []


def test_comment_tags_are_made_by_the_escaper(tmp_path: Path) -> None:
    tag = comment_tag({"GITHUB_JOB": "<!-- x -->"}, "@someone")
    assert re.fullmatch(r"<!-- scbench-ci:[0-9a-f]{16} -->", tag)


def _set(document: Any, path: tuple[object, ...], value: str) -> None:
    for step in path[:-1]:
        document = document[step]
    document[path[-1]] = value


def _value(document: Any, path: tuple[object, ...]) -> str:
    for step in path:
        document = document[step]
    return str(document)


def _quality_run(reason: str, version: str) -> RunResult:
    """The trajectory golden's run (testing/golden.py) with `reason` as the unmeasured
    checkpoint's reason, `version` as every measure's scb-check version and `reason` on one line
    as the name of a source file each measure left out: text the sandbox's report and the
    submission give, until results.json carries it (then the sweep's fields reach it)."""
    run = trajectory_run()
    problem = run.problems[0]
    checkpoints = []
    for checkpoint in problem.checkpoints:
        outcome = checkpoint.quality
        assert outcome is not None
        if outcome.measures is None:
            outcome = replace(outcome, reason=reason)
        else:
            outcome = replace(
                outcome,
                measures=replace(outcome.measures, tool_version=version),
                unmeasured=Unmeasured(1, (shown_path(reason),)),
            )
        checkpoints.append(replace(checkpoint, quality=outcome))
    return replace(run, problems=(replace(problem, checkpoints=tuple(checkpoints)),))


@pytest.mark.parametrize("details", ["changed", "all"])
def test_a_hostile_quality_reason_or_version_is_text_in_the_summary(details: str) -> None:
    """Each section shows the version or the reason (details `all`: folded, one line each; a
    single checkpoint: the paragraph under its counts), the trajectory's table the reason."""
    for made, benign in (
        (_quality_run(PAYLOAD, PAYLOAD), _quality_run("a reason", "0.2.0")),
        (
            replace(_quality_run(PAYLOAD, PAYLOAD), comparison=None),
            replace(_quality_run("a reason", "0.2.0"), comparison=None),
        ),
    ):
        markdown = render_summary(made, details=details)
        assert "PWN" in markdown  # reached the page, as text
        (chart,) = mermaid_blocks(markdown)
        assert "PWN" not in chart
        html = markdown_html(markdown)
        assert live_in_html(html, markdown_html(render_summary(benign, details=details))) == []
        assert not_inert_on_a_terminal(markdown.replace("@\u200b", "@")) == []
        console = render_report(made, None, fail_on="policy verbosity>0.5")
        assert "PWN" in console
        assert not_inert_on_a_terminal(console) == []
    hostile_checkpoints = _quality_run(PAYLOAD, PAYLOAD).problems[0].checkpoints
    benign_checkpoints = _quality_run("a reason", "0.2.0").problems[0].checkpoints
    for hostile_one, benign_one in zip(hostile_checkpoints, benign_checkpoints, strict=True):
        alone = render_summary(make_run(hostile_one))
        assert "PWN" in alone
        benign_html = markdown_html(render_summary(make_run(benign_one)))
        assert live_in_html(markdown_html(alone), benign_html) == []
        assert not_inert_on_a_terminal(alone.replace("@\u200b", "@")) == []
