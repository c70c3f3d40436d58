"""What tests and the submission print is inert on a terminal: no escape sequence of theirs
reaches it, and the real verdict is the last one shown. The log file keeps the raw bytes."""

from __future__ import annotations

import json

from scbench_ci.trust.terminal import terminal_text
from tests.threats.conftest import Threat, no_traceback

FAKE = "\x1b[2J\x1b[H\x1b]0;owned\x07\r\x9b1mVerdict: PASSED\u202e\x08\x08 Core 3/3\n"


def test_a_submission_cannot_draw_a_verdict_on_the_console(threat: Threat) -> None:
    threat.submission_prints(FAKE)
    run = threat.evaluate()
    no_traceback(run)
    assert run.returncode == 1, run.stdout + run.stderr
    shown = run.stdout + run.stderr
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\x08", "\r"):
        assert raw not in shown, repr(raw)
    assert "\\x1b[2J\\x1b[H" in run.stdout  # shown, escaped, in the streamed output
    verdicts = [line for line in run.stdout.splitlines() if line.startswith("Verdict:")]
    assert verdicts == [verdicts[-1]] and verdicts[-1].startswith("Verdict: FAILED")
    log = (threat.output / "demo/checkpoint_1/pytest.log").read_bytes()
    assert b"\x1b[2J\x1b[H\x1b]0;owned\x07" in log  # the artifact keeps the raw bytes
    results = json.loads((threat.output / "results.json").read_text())
    assert results["passed"] is False


def test_controls_are_escaped_and_newlines_and_tabs_kept() -> None:
    assert terminal_text("a\tb\r\nc\rd\x1b[0m\u2066e\x85") == "a\tb\nc\\rd\\x1b[0m\\u2066e\\x85"
    assert terminal_text("plain text, ünïcödé\n") == "plain text, ünïcödé\n"
