"""What each kind of checkpoint failure means and what to do about it, as the job summary
explains it: a title, a paragraph, and the end of the log under a caption."""

from __future__ import annotations

from dataclasses import dataclass

from scbench_ci.outputs.summary_levels import Level, tail
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind
from scbench_ci.trust.markdown import Markdown, fenced, formatted, joined, literal


@dataclass(frozen=True)
class Explanation:
    title: str
    text: Markdown
    """What the failure means and what to do about it."""
    log: str
    """What the log tail shown below it is."""


FAILURE_KINDS = {
    FailureKind.SETUP.value: Explanation(
        "setup failed",
        literal(
            "A command that prepares the submission before the tests (such as installing its "
            "requirements.txt) failed, so no test ran. Check the submission's dependencies and the "
            "environment's setup commands."
        ),
        "The end of the setup log:",
    ),
    FailureKind.TIMEOUT.value: Explanation(
        "timed out",
        literal(
            "The run took longer than the session timeout and was stopped, so its results are "
            "incomplete. Look for a submission or test that hangs (waiting for input, a server "
            "that never exits), or raise `--session-timeout`."
        ),
        "The end of the log:",
    ),
    FailureKind.INFRASTRUCTURE.value: Explanation(
        "infrastructure failure",
        literal(
            "The tests could not be run for a cause outside the submission (Docker, the image, or "
            "installing pytest and its plugins): this says nothing about the submission. Run the "
            "job again; if it fails the same way, the log says why."
        ),
        "The end of the log:",
    ),
    FailureKind.COLLECTION.value: Explanation(
        "test collection failed",
        literal(
            "pytest could not import the test files, so no test ran. This is usually an error in "
            "the problem's tests or conftest.py, a test dependency missing from config.yaml, or a "
            "submission module the tests import that does not load."
        ),
        "The collection errors:",
    ),
    FailureKind.INTERRUPTED.value: Explanation(
        "pytest interrupted",
        literal(
            "pytest was interrupted (as by Ctrl-C) before its tests finished, so the results are "
            "incomplete. Something in the run, most likely the submission, sent it the signal."
        ),
        "The end of the log:",
    ),
    FailureKind.NO_TESTS.value: Explanation(
        "no tests collected",
        literal(
            "pytest found no test to run. Check that the problem has `tests/test_<checkpoint>.py` "
            "for this checkpoint and that extra pytest arguments (`-k`, `-m`) do not deselect "
            "every test."
        ),
        "The end of the log:",
    ),
    FailureKind.USAGE.value: Explanation(
        "pytest usage error",
        literal(
            "pytest rejected its command line. Check the extra pytest arguments given after `--` "
            "and the options the problem's conftest.py registers."
        ),
        "The end of the log:",
    ),
    FailureKind.INTERNAL.value: Explanation(
        "pytest internal error",
        literal(
            "pytest itself crashed, often in a plugin or a conftest.py hook of the problem's: the "
            "machinery around the tests failed, and this says nothing about the submission."
        ),
        "The end of the log:",
    ),
    FailureKind.TAMPERED.value: Explanation(
        "reports tampered with",
        literal(
            "The reports do not match the seal the test runner put on them when it wrote them: "
            "something in the run changed or replaced them afterwards, so no test outcome is "
            "believed. The submission's code is the likely cause."
        ),
        "The end of the log:",
    ),
    FailureKind.ABORTED.value: Explanation(
        "test runner stopped",
        literal(
            "The test runner was killed before it could write and seal its reports, so no test "
            "outcome is counted. Nothing outside the run does that: the submission's code is the "
            "likely cause."
        ),
        "The end of the log:",
    ),
    FailureKind.RESOURCES.value: Explanation(
        "resource limit reached",
        literal(
            "The run reached its memory, process or disk limit, and pytest could not finish or "
            "report. The message names the limit; the submission's code used it up."
        ),
        "The end of the log:",
    ),
    FailureKind.REPORTS.value: Explanation(
        "reports unusable",
        literal(
            "The test runner sealed a report that cannot be used (it is too large, or not the JSON "
            "pytest writes), so no test outcome is counted."
        ),
        "The end of the log:",
    ),
    FailureKind.MISSING.value: Explanation(
        "submission missing",
        literal(
            "No test ran. Check the `--submission` template (`{problem}` and `{checkpoint}` are "
            "replaced by each problem's folder name and each checkpoint's name)."
        ),
        "",
    ),
    FailureKind.UNREPORTED.value: Explanation(
        "tests never reported",
        literal(
            "pytest collected tests it never reported an outcome for: the session ended before "
            "them (a process of the submission stopped pytest, or a test ended the session), or "
            "pytest's arguments deselected them. SCBench 1.0 counts each as failed and the "
            "checkpoint as an infrastructure failure; here each counts as failed, and the "
            "checkpoint fails."
        ),
        "The end of the log:",
    ),
}


def verdict(checkpoint: CheckpointResult) -> str:
    """`✅ passed`, `❌ failed`, or ❌ and the title of its failure kind."""
    if checkpoint.passed:
        return "✅ passed"
    failure = checkpoint.failure
    return "❌ failed" if failure is None else f"❌ {FAILURE_KINDS[failure.kind].title}"


def explained(failure: Failure, caption: str, level: Level) -> Markdown:
    """A failure's kind, what it means, and the end of its log under `caption`."""
    kind = FAILURE_KINDS[failure.kind]
    parts = [formatted("\n**{}**. {}\n", kind.title.capitalize(), kind.text)]
    if failure.log_tail:
        if caption:
            parts.append(formatted("\n{}\n", caption))
        parts.append(formatted("\n{}\n", fenced(tail(failure.log_tail, level))))
    return joined("", parts)
