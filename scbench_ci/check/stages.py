"""The dynamic half of `check`: findings from the runs of a problem's checkpoints.

Collection (its own tests collected only), oracle (the reference solution judged by the oracle
policy, against the list of known failures; and the tests whose outcome changes when the network
is cut after setup: they reach it), empty (an empty submission: every Core test must
fail), flaky (an oracle test whose outcome differs between the repeats) and time (an oracle test
that takes more than half of its timeout). Files are named as static findings name them:
relative to `base`, the problem folder's parent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scbench_ci.check.known_failures import KNOWN_FAILURES, KnownFailure, known_failure_findings
from scbench_ci.check.static import SOLUTIONS_DIR
from scbench_ci.foundation.layout import TESTS_DIR, WORKSPACE_TESTS_DIR
from scbench_ci.foundation.scbench_runner import ScbenchRunner
from scbench_ci.job.reports import (
    FAILING,
    PASSING,
    Reports,
    Status,
    problem_node_id,
    read_reports,
)
from scbench_ci.outputs.console import flaky_outcome, headline
from scbench_ci.problem.model import Checkpoint, Group, Problem
from scbench_ci.results import policy
from scbench_ci.results.findings import Finding, Severity, Stage, finding_path
from scbench_ci.results.inventory import UNREPORTED
from scbench_ci.results.model import CheckpointResult, FailureKind, TestResult
from scbench_ci.results.verdict import count_groups
from scbench_ci.trust.seal import read_report_files

TIME_SHARE = 0.5
"""A test that takes more than this share of its timeout is warned about."""
_STAGED = rf"(?:{TESTS_DIR}|{re.escape(WORKSPACE_TESTS_DIR)})"
"""The tests' folder as a report names it: staged (`.evaluation_tests/`), or the problem's."""
_TRACEBACK_LINE = re.compile(rf"^({_STAGED}/[^\s:]+\.py):(\d+): ", re.MULTILINE)
_FILE_LINE = re.compile(r'File "(?=([^"\n]*)", line (\d+))')
"""A traceback's `File "<path>", line <n>`: every one, each path read once."""
_ERROR_LINE = re.compile(r"^E\s+(\S.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Place:
    """Where findings about a problem's files go."""

    problem: Problem
    base: Path

    def file(self, workspace_path: str) -> str:
        """A file of the workspace (`tests/...`), as the problem folder has it."""
        return finding_path(self.problem.root / workspace_path, self.base)

    def test_file(self, checkpoint: Checkpoint) -> str:
        return finding_path(self.problem.tests_dir / checkpoint.test_file, self.base)

    def solution(self, checkpoint: Checkpoint) -> str:
        return finding_path(self.problem.root / SOLUTIONS_DIR / checkpoint.name, self.base)


def collection_findings(
    place: Place, checkpoint: Checkpoint, result: CheckpointResult, reports_folder: Path
) -> list[Finding]:
    """What kept the checkpoint's tests from collecting. `reports_folder`: the collection
    job's folder of the output folder, with the reports it ran on."""
    failure = result.failure
    if failure is None:
        return []

    def finding(file: str, line: int | None, message: str) -> Finding:
        return Finding(
            Stage.COLLECTION, Severity.ERROR, file, line, message, checkpoint=checkpoint.name
        )

    if failure.kind is FailureKind.NO_TESTS:
        return [finding(place.test_file(checkpoint), None, "pytest collects no test from it")]
    if failure.kind is FailureKind.COLLECTION:
        reports = read_reports(read_report_files(reports_folder))
        if isinstance(reports, Reports) and reports.collection_errors:
            found = []
            for error in reports.collection_errors:
                file, line = _located(error.message)
                if file is None and error.node_id.endswith(".py"):
                    file = error.node_id
                found.append(
                    finding(
                        place.file(file) if file else place.test_file(checkpoint),
                        line,
                        f"does not collect: {_error_line(error.message)}",
                    )
                )
            return found
    tail = headline(_last_line(failure.log_tail or ""))
    return [
        finding(
            place.test_file(checkpoint),
            None,
            f"the tests do not collect ({failure.kind}): {failure.message}"
            + (f": {tail}" if tail else ""),
        )
    ]


def oracle_findings(
    place: Place,
    checkpoint: Checkpoint,
    result: CheckpointResult,
    known: Sequence[KnownFailure],
    policy_name: str,
    run_failures: bool,
) -> list[Finding]:
    """The tests the reference solution fails that the policy counts and the list does not
    hold; when none, whether it fails the policy for another reason. `run_failures`: whether a
    run that did not finish is a finding (not when collection already says why)."""
    solution = place.solution(checkpoint)
    if result.failure is not None:
        if not run_failures:
            return []
        return [
            Finding(
                Stage.ORACLE,
                Severity.ERROR,
                solution,
                None,
                f"the run of the reference solution failed ({result.failure.kind}): "
                f"{result.failure.message}",
                checkpoint=checkpoint.name,
            )
        ]
    listed = {entry.node_id for entry in known}
    counted = policy.counted_failures(policy_name)
    findings = [
        Finding(
            Stage.ORACLE,
            Severity.ERROR,
            place.file(test.file),
            test.line,
            f"{test.id} {test.status} with the reference solution, and {KNOWN_FAILURES} "
            "does not list it" + (f": {message}" if (message := headline(test.message)) else ""),
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in result.tests
        if test.status in FAILING and test.group in counted and test.id not in listed
    ]
    # Flaky tests are the flaky stage's, and listed ones are known: the rest must pass.
    judged = [t for t in result.tests if t.id not in listed and t.status is not Status.FLAKY]
    judged_counts = count_groups(judged, False)
    if not findings and not policy.passes(policy_name, judged_counts):
        findings.append(
            Finding(
                Stage.ORACLE,
                Severity.ERROR,
                solution,
                None,
                f"the reference solution fails the oracle policy {policy_name} "
                f"({policy.describe(policy_name)}): {policy.shortfall(policy_name, judged_counts)}",
                checkpoint=checkpoint.name,
            )
        )
    return findings


def network_findings(
    place: Place, checkpoint: Checkpoint, oracle: CheckpointResult, offline: CheckpointResult
) -> list[Finding]:
    """The checkpoint's own tests whose outcome with the reference solution changes when the
    network is cut after setup (SCBench's tests have it): each a warning, as is a run without
    it that did not finish. Nothing when the oracle's own run did not (the oracle says why), and
    nothing of a test that was flaky."""
    if oracle.failure is not None:
        return []
    if offline.failure is not None:
        return [
            Finding(
                Stage.ORACLE,
                Severity.WARNING,
                place.solution(checkpoint),
                None,
                "the reference solution's run with the network cut after setup did not finish "
                f"({offline.failure.kind}): {offline.failure.message}; the tests may need the "
                "network",
                checkpoint=checkpoint.name,
            )
        ]
    without = {test.id: test for test in offline.tests}
    findings = []
    for test in oracle.tests:
        cut = without.get(test.id)
        if test.checkpoint != oracle.name or test.status is Status.FLAKY or cut is None:
            continue
        if (test.status in PASSING) == (cut.status in PASSING):
            continue
        message = headline(cut.message)
        # The line where the failing one of the two runs failed: a passing test is placed at
        # its first line, which would say nothing of what reaches the network.
        failing = test if cut.status in PASSING else cut
        findings.append(
            Finding(
                Stage.ORACLE,
                Severity.WARNING,
                place.file(failing.file),
                failing.line,
                f"{test.id} {test.status} with the network and {cut.status} without it: it "
                "reaches the network, or is flaky (SCBench's tests have the network, and "
                "scbench-ci's unless --no-test-network)" + (f": {message}" if message else ""),
                checkpoint=checkpoint.name,
                test=test.id,
            )
        )
    return findings


def inventory_findings(
    place: Place, checkpoint: Checkpoint, result: CheckpointResult, scbench: ScbenchRunner
) -> list[Finding]:
    """Where SCBench 1.0's inventory of the checkpoint's tests surprises, from the reference
    solution's run: a test of the checkpoint whose node id holds a space (its `--collect-only
    -q` lines with a space are never taken), and each test collected but never reported. None
    when the runner `scbench` takes no inventory (the paper's counts what the run reports)."""
    if not scbench.collection_inventory:
        return []
    findings = [
        Finding(
            Stage.ORACLE,
            Severity.WARNING,
            place.file(test.file),
            test.line,
            f"{test.id}: its node id holds a space, which SCBench 1.0's inventory never takes: "
            "the test counts only when the run reports it, in the run's group (a marker of the "
            "problem's own included), and not at all if the run ends first",
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in result.tests
        if test.checkpoint == result.name and " " in test.id.split("::", 1)[-1]
    ]
    findings += [
        Finding(
            Stage.ORACLE,
            Severity.WARNING,
            place.file(test.file),
            test.line,
            f"{test.id} was collected (SCBench 1.0's inventory) and never reported by the "
            "reference solution's run: SCBench 1.0 counts it as failed, and the checkpoint as an "
            "infrastructure failure",
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in result.tests
        if test.message == UNREPORTED
    ]
    return findings


def known_list_findings(
    known: Sequence[KnownFailure], oracle: Iterable[CheckpointResult]
) -> list[Finding]:
    """The listed tests that pass now, or that no oracle run has: each test counts in the run
    of its own checkpoint, and only runs that finished count."""
    finished = [result for result in oracle if result.failure is None]
    outcomes = {
        test.id: test.status in PASSING
        for result in finished
        for test in result.tests
        if test.checkpoint == result.name
    }
    ran = {result.name for result in finished}
    return known_failure_findings([e for e in known if e.checkpoint in ran], outcomes)


def empty_findings(
    place: Place, checkpoint: Checkpoint, result: CheckpointResult, run_failures: bool
) -> list[Finding]:
    """Core tests that pass against an empty submission; a warning when its run did not finish
    (its Core tests were not all seen to fail), unless the tests do not collect against it
    (then none passes) or `run_failures` is False."""
    findings = [
        Finding(
            Stage.EMPTY,
            Severity.ERROR,
            place.file(test.file),
            test.line,
            f"{test.id} passes against an empty submission: it is vacuous (a Core test must "
            "fail without a solution)",
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in result.tests
        if test.group is Group.CORE and test.status in PASSING
    ]
    failure = result.failure
    quiet = (FailureKind.COLLECTION, FailureKind.NO_TESTS)
    if failure is not None and run_failures and failure.kind not in quiet:
        findings.append(
            Finding(
                Stage.EMPTY,
                Severity.WARNING,
                place.test_file(checkpoint),
                None,
                f"the run against an empty submission did not finish ({failure.kind}): "
                f"{failure.message}; its Core tests were not all seen to fail",
                checkpoint=checkpoint.name,
            )
        )
    return findings


def flaky_findings(
    place: Place, checkpoint: Checkpoint, tests: Iterable[TestResult]
) -> list[Finding]:
    return [
        Finding(
            Stage.FLAKY,
            Severity.ERROR,
            place.file(test.file),
            test.line,
            f"{test.id} is flaky with the reference solution: {flaky_outcome(test)}"
            + (f"; {message}" if (message := headline(test.message)) else ""),
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in tests
        if test.status is Status.FLAKY
    ]


def time_findings(
    place: Place, checkpoint: Checkpoint, tests: Iterable[TestResult], timeout_s: float
) -> list[Finding]:
    """`timeout_s`: the per-test timeout of the checkpoint's runs. A test's duration is its
    longest over the repeats."""
    return [
        Finding(
            Stage.TIME,
            Severity.WARNING,
            place.file(test.file),
            test.line,
            f"{test.id} took {test.duration_s:.1f} s of its {timeout_s:g} s timeout (more than "
            f"{TIME_SHARE:.0%}): a slower machine may time it out",
            checkpoint=checkpoint.name,
            test=test.id,
        )
        for test in tests
        if test.duration_s > timeout_s * TIME_SHARE
    ]


def _located(text: str) -> tuple[str | None, int | None]:
    """The last place in the tests a collection error's report names: the deepest frame."""
    places = [
        (match.start(), match.group(1), int(match.group(2)))
        for match in _TRACEBACK_LINE.finditer(text)
    ]
    for match in _FILE_LINE.finditer(text):
        file = _staged_file(match.group(1))
        if file is not None:
            places.append((match.start(), file, int(match.group(2))))
    if not places:
        return None, None
    _, file, line = max(places)
    return problem_node_id(file), line


def _staged_file(path: str) -> str | None:
    """The path from its last folder of the tests on (`tests/...` or `.evaluation_tests/...`),
    when it names a Python file in it; else None."""
    if not path.endswith(".py"):
        return None
    starts = []
    for folder in (TESTS_DIR, WORKSPACE_TESTS_DIR):
        # A file of at least one character before `.py`, after the folder's `/`.
        inside = path.rfind(f"/{folder}/", 0, len(path) - len(".py") - 1)
        if inside >= 0:
            starts.append(inside + 1)
        elif path.startswith(f"{folder}/") and len(path) > len(folder) + len("/.py"):
            starts.append(0)
    return path[max(starts) :] if starts else None


def _error_line(text: str) -> str:
    """The exception pytest reports (its last `E   ` line), else the report's first line."""
    errors = _ERROR_LINE.findall(text)
    return headline(errors[-1] if errors else text) or "(no message)"


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
