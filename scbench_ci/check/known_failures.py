"""A problem's list of tests its reference solutions are known to fail: `tests/known_failures.txt`.

One test a line, its node id as pytest names it in the workspace, then `#` and the reason:

    # Blank lines and lines starting with `#` are comments.
    tests/test_checkpoint_1.py::test_unicode[emoji]  # the spec leaves emoji width open (#27)

The id ends at the first `#` after whitespace, so it may hold spaces (parametrize ids do) but
not " #". A line without a reason is an error: the reason is what the list is for. An id names
one test exactly (a parametrized test's cases are listed one by one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.foundation.layout import TESTS_DIR
from scbench_ci.problem.fields import shown
from scbench_ci.problem.model import Problem
from scbench_ci.problem.yaml_loader import MAX_CONFIG_BYTES
from scbench_ci.results.findings import Finding, Severity, Stage, finding_path
from scbench_ci.trust.untrusted_tree import UntrustedTree, UntrustedTreeError

KNOWN_FAILURES = f"{TESTS_DIR}/known_failures.txt"
_REASON_MARK = re.compile(r"\s#")
"""Where a line's id ends and its reason starts: the first `#` after white space."""
_NODE_ID = re.compile(rf"{TESTS_DIR}/(?P<file>[^:]+\.py)::\S.*")
_FORMAT = "write '<test id>  # <reason>'"
MAX_NODE_ID_CHARS = 1000


@dataclass(frozen=True)
class KnownFailure:
    node_id: str
    reason: str
    checkpoint: str
    """The checkpoint whose test file holds the test."""
    file: str
    """The list's file, as findings name it."""
    line: int


def read_known_failures(
    problem: Problem, *, relative_to: Path | None = None
) -> tuple[list[KnownFailure], list[Finding]]:
    """The problem's list (none when it has no file) and a finding for each line that is not
    an entry of it. `relative_to` is what findings' files are relative to (by default the
    problem folder's parent)."""
    path = problem.root / KNOWN_FAILURES
    file = finding_path(path, relative_to or problem.root.parent)
    try:
        with UntrustedTree.opened(problem.root) as tree:
            if tree.entry(KNOWN_FAILURES) is None:
                return [], []
            data = tree.read_file(KNOWN_FAILURES, MAX_CONFIG_BYTES)
    except UntrustedTreeError as error:
        # A symlink is never followed: its target may be anything of the machine's.
        return [], [_error(file, None, f"cannot be read: {error.reason}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [], [_error(file, None, f"not UTF-8 text (byte {error.start})")]
    checkpoints = {checkpoint.test_file: checkpoint.name for checkpoint in problem.checkpoints}
    return parse_known_failures(text, file, checkpoints)


def parse_known_failures(
    text: str, file: str, checkpoints: Mapping[str, str]
) -> tuple[list[KnownFailure], list[Finding]]:
    """`checkpoints` maps each checkpoint's test file name (`test_checkpoint_1.py`) to it."""
    entries: list[KnownFailure] = []
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        entry = _entry(line)
        if entry is None:
            findings.append(_error(file, number, f"{shown(line)} gives no reason: {_FORMAT}"))
            continue
        node_id, reason = entry
        test = _NODE_ID.fullmatch(node_id)
        if test is None:
            findings.append(
                _error(
                    file,
                    number,
                    f"{shown(node_id)} is not a test id like {TESTS_DIR}/<file>::<name>",
                )
            )
            continue
        if len(node_id) > MAX_NODE_ID_CHARS or not node_id.isprintable():
            findings.append(
                _error(
                    file,
                    number,
                    f"{shown(node_id)} is no test id: ids are at most {MAX_NODE_ID_CHARS} "
                    "printable characters",
                )
            )
            continue
        checkpoint = checkpoints.get(test["file"])
        if checkpoint is None:
            findings.append(
                _error(
                    file,
                    number,
                    f"{shown(node_id)} is in {TESTS_DIR}/{test['file']}, no checkpoint's test file",
                )
            )
            continue
        if node_id in seen:
            findings.append(
                Finding(
                    Stage.STATIC,
                    Severity.WARNING,
                    file,
                    number,
                    f"{shown(node_id)} is listed already, at line {seen[node_id]}",
                    checkpoint=checkpoint,
                    test=node_id,
                )
            )
            continue
        seen[node_id] = number
        entries.append(KnownFailure(node_id, reason, checkpoint, file, number))
    return entries, findings


def _entry(line: str) -> tuple[str, str] | None:
    """A stripped line's id and reason, or None when it gives no reason. (A regular expression
    that finds the id's end by trying each length takes quadratic time on a line of spaces.)"""
    mark = _REASON_MARK.search(line)
    if mark is None:
        return None
    reason = line[mark.end() :].strip()
    return (line[: mark.start()].rstrip(), reason) if reason else None


def known_failure_findings(
    entries: Sequence[KnownFailure], oracle_outcomes: Mapping[str, bool]
) -> list[Finding]:
    """What the oracle runs say of the list: a listed test that passes, or that none of them
    ran. `oracle_outcomes` maps each test's node id to whether it passed (each test once: in
    the run of its own checkpoint). A failing test that is not listed is the oracle stage's."""
    findings = []
    for entry in entries:
        passed = oracle_outcomes.get(entry.node_id)
        if passed is None:
            message = "is listed as a known failure, but no oracle run has such a test"
        elif passed:
            message = f"passes now: remove it from {KNOWN_FAILURES}"
        else:
            continue
        findings.append(
            Finding(
                Stage.ORACLE,
                Severity.WARNING,
                entry.file,
                entry.line,
                f"{entry.node_id} {message}",
                checkpoint=entry.checkpoint,
                test=entry.node_id,
            )
        )
    return findings


def _error(file: str, line: int | None, message: str) -> Finding:
    return Finding(Stage.STATIC, Severity.ERROR, file, line, message)
