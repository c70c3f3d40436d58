"""What a step of the action publishes once its command's core has written the output folder:
the artifact (with the pull request it is for, on a pull request), the job summary, the pull
request comment, the step outputs, the annotations and the Check Run; and the log lines and
warnings it writes on the way."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TextIO

from scbench_ci.action.inputs import ActionInputs
from scbench_ci.commands.channels import Echo, Outcome
from scbench_ci.foundation.errors import ExitCode
from scbench_ci.outputs.exit_status import run_headline
from scbench_ci.outputs.github.annotations import Annotate, workflow_commands
from scbench_ci.outputs.github.artifact_service import ArtifactUploadError
from scbench_ci.outputs.github.artifacts import (
    FORBIDDEN_IN_NAME,
    UploadedArtifact,
    upload_artifact,
)
from scbench_ci.outputs.github.check_run import (
    OUTPUT_LIMIT,
    CheckRun,
    Conclusion,
    publish_check_run,
)
from scbench_ci.outputs.github.event import head_sha, pull_request, pull_request_number
from scbench_ci.outputs.github.pr_comment import COMMENT_LIMIT, comment_tag, upsert_comment
from scbench_ci.outputs.github.workflow import (
    append_summary,
    commands_stopped,
    group,
    workflow_command,
    write_outputs,
)
from scbench_ci.results.file import write_pull_request
from scbench_ci.results.model import RunResult
from scbench_ci.results.policy import GroupCounts
from scbench_ci.trust.markdown import Markdown, formatted, joined, literal
from scbench_ci.trust.terminal import inert

COMMENT_BYTES = COMMENT_LIMIT - 1024
"""The summary's size in a comment: GitHub's limit (in characters, each at most a byte of UTF-8
here), less room for the tag."""


UNVERIFIED_TITLE = "Not verified"


def unverified_note(run_id: int) -> Markdown:
    """Said first wherever `command: publish` shows another workflow's result: a claim."""
    return formatted(
        "> ⚠️ **Not verified.** This result was reported by the pull request's own workflow "
        "(run {}), which the pull request can change, and was not verified by this "
        "repository: it is shown for information and is not a verdict.\n\n",
        run_id,
    )


@dataclass(frozen=True)
class PublishTarget:
    """Where the comment and the Check Run go: a pull request (None: none) and a commit."""

    pull_request: int | None
    head_sha: str | None

    @classmethod
    def of_event(cls, env: Mapping[str, str]) -> PublishTarget:
        """This run's own: its event's pull request, and its head commit or GITHUB_SHA."""
        return cls(pull_request_number(env), head_sha(env))


@dataclass(frozen=True)
class WorkflowStep:
    """The step's environment and log."""

    inputs: ActionInputs
    env: Mapping[str, str]
    stdout: TextIO

    def warn(self, text: str) -> None:
        self.stdout.write(workflow_command("warning", text, title="scbench-ci") + "\n")

    def say(self, text: str) -> None:
        """A line of the log, never a workflow command."""
        self.stdout.write(inert(text) + "\n")

    def log_group(self, title: str) -> Echo:
        """The runs' output, folded in the log under `title`; nothing it prints is a workflow
        command."""

        @contextmanager
        def opened() -> Iterator[TextIO]:
            with group(title, self.stdout), commands_stopped(self.stdout):
                yield self.stdout

        return opened

    def shown(self, path: Path | None) -> Path | None:
        """A path in the workspace as the log shows it: relative."""
        return path.relative_to(self.inputs.workspace) if path is not None else None

    def publish(
        self,
        outcome: Outcome,
        artifact_name: str,
        render: Callable[..., Markdown],
        annotate: Annotate,
        target: PublishTarget | None = None,
        reported_by: int | None = None,
    ) -> None:
        """The artifact, the job summary (as `render` makes it), the pull request comment, the
        outputs, the annotations (as `annotate` makes them) and the Check Run; the comment and
        the Check Run go to `target` (None: this run's own). `reported_by`: the workflow run
        whose artifact the result is (`command: publish`), a claim this repository did not
        verify: the summary and the comment say so first, and the Check Run is neutral."""
        inputs, result = self.inputs, outcome.result
        note = literal("") if reported_by is None else unverified_note(reported_by)
        own = pull_request(self.env)
        if target is None and own is not None and outcome.results_path is not None:
            # What a `workflow_run` workflow needs to publish this run (`command: publish`).
            write_pull_request(own, outcome.results_path.parent)
        target = target or PublishTarget.of_event(self.env)
        artifact = self._upload(artifact_name, inputs.options.output_dir)
        summary = partial(
            render,
            result,
            # Not uploaded: the summary points to the .scbench/ folder instead.
            artifact_name=artifact_name if inputs.upload_artifact else None,
            artifact_url=artifact.url if artifact else None,
            reports_folder=self.shown(inputs.options.output_dir),
        )
        if inputs.job_summary and self.env.get("GITHUB_STEP_SUMMARY"):
            append_summary(Path(self.env["GITHUB_STEP_SUMMARY"]), joined("", (note, summary())))
        if inputs.comment:
            # Degraded to fit a comment as the job summary is to fit its 1 MiB, not cut.
            room = COMMENT_BYTES - len(note.encode())
            self._comment(joined("", (note, summary(max_bytes=room))), artifact_name, target)
        shown = self.shown(outcome.results_path)
        if shown is None:
            write_step_outputs(self.env, {"passed": "true", "infrastructure_failure": "false"})
        else:
            write_step_outputs(self.env, step_outputs(result, shown, artifact))
        if inputs.annotations:
            for line in workflow_commands(annotate(result, inputs.workspace)):
                self.stdout.write(line + "\n")
        if inputs.check_run:
            headline = run_headline(result, inputs.options.fail_on)
            passed = outcome.exit_code == ExitCode.PASSED
            conclusion: Conclusion = "success" if passed else "failure"
            title = headline.heading
            if reported_by is not None:
                conclusion, title = "neutral", f"{UNVERIFIED_TITLE}: {title}"
            self.check_run(
                CheckRun(
                    name=artifact_name,
                    head_sha=target.head_sha or "",
                    conclusion=conclusion,
                    title=title,
                    summary=joined("", (note, headline.text)),
                    text=summary(max_bytes=OUTPUT_LIMIT),
                    annotations=annotate(result, inputs.workspace),
                )
            )

    def check_run(self, check: CheckRun) -> None:
        """Create `check`; a line of the log, or a warning."""
        if not check.head_sha:
            self.warn("no Check Run: neither the event nor GITHUB_SHA names a commit")
            return
        created = publish_check_run(check, self.env, self.inputs.github_token)
        if created.warning:
            # Created, it keeps what it has; its annotations stop where GitHub refused more.
            self.warn(created.warning if created.url else f"no Check Run: {created.warning}")
        elif created.url:
            annotations = f"{created.annotations} annotation{'s' * (created.annotations != 1)}"
            self.say(f"Check Run {check.name} ({annotations}): {created.url}")

    def _comment(self, summary: str, artifact_name: str, target: PublishTarget) -> None:
        if target.pull_request is None:
            # Nothing is wrong: one workflow often runs on pushes and pull requests alike.
            event = self.env.get("GITHUB_EVENT_NAME") or "unknown"
            self.say(f"No pull request comment: this run (event {event}) is not for a pull request")
            return
        tag = comment_tag(self.env, artifact_name)
        outcome = upsert_comment(
            summary, tag, self.env, self.inputs.github_token, number=target.pull_request
        )
        if outcome.warning:
            self.warn(f"no pull request comment: {outcome.warning}")
        elif outcome.url:
            self.say(f"Pull request comment {outcome.action}: {outcome.url}")

    def _upload(self, name: str, folder: Path) -> UploadedArtifact | None:
        if not self.inputs.upload_artifact:
            return None
        try:
            artifact = upload_artifact(
                name, folder, retention_days=self.inputs.retention_days, env=self.env
            )
        except ArtifactUploadError as error:
            # The verdict, outputs and summary stand without the artifact.
            self.warn(f"artifact not uploaded: {error}")
            return None
        for warning in artifact.warnings:
            self.warn(warning)
        self.say(f"Uploaded artifact {name} ({artifact.size} bytes): {artifact.url}")
        return artifact


def default_artifact_name(result: RunResult, inputs: ActionInputs) -> str:
    """`scbench-<problem>-<checkpoint>[-<submission>]`: artifact names are unique per workflow
    run, so jobs that evaluate several submissions of one checkpoint need the submission in it.
    With several problems, `<problem>` is the folder given as the input."""
    if len(result.problems) == 1:
        problem = result.problems[0].name
    else:
        problem = "-".join(
            os.path.relpath(folder, inputs.workspace) for folder in inputs.options.problems
        )
    name = f"scbench-{problem}-{inputs.options.checkpoint}"
    submission = os.path.relpath(inputs.options.submission, inputs.workspace)
    if submission != ".":
        name += f"-{submission}"
    # Braces too: a `{checkpoint}` placeholder reads badly in a name.
    refused = re.escape("".join(FORBIDDEN_IN_NAME) + "{}")
    return re.sub(f"[{refused}]+", "-", name).strip("-")


def step_outputs(
    result: RunResult, results_path: Path, artifact: UploadedArtifact | None
) -> dict[str, str]:
    totals = result.group_totals()
    overall = sum(totals.values(), GroupCounts())
    comparison = result.comparison
    outputs = {
        "passed": str(result.passed).lower(),
        "regressions": str(len(comparison.regressions)) if comparison else "",
        "fixed": str(len(comparison.fixed)) if comparison else "",
        "flaky": str(overall.flaky),
        "results_path": str(results_path),
        "artifact_id": str(artifact.id) if artifact else "",
        "artifact_url": artifact.url if artifact else "",
        "artifact_digest": artifact.digest if artifact else "",
        "infrastructure_failure": str(result.infrastructure_failure).lower(),
        "pass_rate": str(overall.pass_rate or 0),
    }
    for group_name, counts in totals.items():
        outputs[f"{group_name.value.lower()}_passed"] = str(counts.passed)
        outputs[f"{group_name.value.lower()}_total"] = str(counts.total)
    return outputs


def write_step_outputs(env: Mapping[str, str], outputs: dict[str, str]) -> None:
    if env.get("GITHUB_OUTPUT"):
        write_outputs(Path(env["GITHUB_OUTPUT"]), outputs)
