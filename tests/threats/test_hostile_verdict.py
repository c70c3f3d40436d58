"""A submission cannot forge the verdict, crash the evaluator, or write on this machine.

Each case is a way a determined submission went after the verdict: through the names the
evaluator writes in the workspace (pytest.ini, .scbench/), through the reports (planted,
read-only, unparseable, too many), through the runner (killed before it sealed), and through links
that leave the submission. Each must end as an ordinary fail (exit 1) with the honest counts or,
where no outcome can be trusted, none at all; never a traceback, never exit 3, and nothing outside
the output folder changed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.results.inventory import UNREPORTED
from scbench_ci.results.scbench_rules import MISSING_INVENTORY
from testing.examples import group_counts
from testing.hostile_submissions import (
    BROKEN_COUNTS,
    EXECUTORS,
    HOSTILE,
    evaluate,
    hostile,
)

# Each runs scbench-ci end to end, as every test under tests/integration does.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("nothing_survives")]

NO_COUNTS = dict.fromkeys(BROKEN_COUNTS, (0, 0, 0, 0))
PAPER_BROKEN_COUNTS = {
    "Core": (2, 3, 0, 5),
    "Functionality": (0, 3, 1, 4),
    "Error": (3, 2, 0, 5),
    "Regression": (0, 1, 0, 1),
}
"""wordstat's broken submission by the paper's rules: wordstat's own markers give groups, and the
parametrize ids `error` and `functionality` theirs (SCBench's record in
tests/data/scbench/examples_verdicts.json)."""
CANARY = "canary: must stay as it is\n"


def assert_ordinary_fail(code: int, checkpoint: dict[str, Any], output: str) -> None:
    assert code == 1, output
    assert "Traceback" not in output
    assert checkpoint["passed"] is False


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "canary.ini"
    path.parent.mkdir()
    path.write_text(CANARY)
    return path


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("ini", ["devnull", "proc_cwd", "absolute", "folder"])
def test_the_submission_has_no_say_in_pytest_ini(
    ini: str, executor: str, tmp_path: Path, test_image: str, canary: Path
) -> None:
    """Its pytest.ini, whatever it is, is discarded: never read by pytest, never written through.
    The submission also brings a root conftest.py, a plugin and an evil.ini that would force
    every outcome."""
    submission = hostile(tmp_path, "root_conftest")
    shutil.copy(HOSTILE / "root_configs" / "hostile_plugin.py", submission)
    (submission / "evil.ini").write_text("[pytest]\naddopts = -p hostile_plugin\n")
    ini_path = submission / "pytest.ini"
    if ini == "devnull":
        ini_path.symlink_to(os.devnull)
    elif ini == "proc_cwd":
        # Read in the container as the submission's own evil.ini; on the host, the caller's
        # current folder.
        ini_path.symlink_to("/proc/self/cwd/evil.ini")
    elif ini == "absolute":
        ini_path.symlink_to(canary)
    else:
        ini_path.mkdir()
        (ini_path / "pytest.ini").write_text("[pytest]\naddopts = -p hostile_plugin\n")
    caller_cwd = tmp_path / "caller"
    caller_cwd.mkdir()

    code, checkpoint, output = evaluate(submission, tmp_path, executor, test_image, cwd=caller_cwd)

    assert_ordinary_fail(code, checkpoint, output)
    assert group_counts(checkpoint) == BROKEN_COUNTS
    assert "the submission's pytest.ini was discarded" in " ".join(checkpoint["notices"])
    assert list(caller_cwd.iterdir()) == []
    assert canary.read_text() == CANARY
    assert list(canary.parent.iterdir()) == [canary]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_reports_planted_where_pytest_writes_are_replaced(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    """A read-only forged pytest-report.json, a fifo for the CTRF report, a read-only folder."""
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "readonly_reports"), tmp_path, executor, test_image
    )

    assert_ordinary_fail(code, checkpoint, output)
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == BROKEN_COUNTS


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("reports", ["forged", "deep"])
def test_a_killed_runner_counts_nothing(
    reports: str, executor: str, tmp_path: Path, test_image: str
) -> None:
    """Reports the submission wrote before it killed the runner are never believed, and those
    made to break a parser (deep nesting, 400-digit numbers, NaN) do not break the evaluator.
    SCBench 1.0's inventory, sealed once the tests were collected, counts every test as failed
    (none was reported); an inventory the submission forged (empty) is not believed either."""
    submission = hostile(tmp_path, "runner_killer")
    if reports == "deep":
        (submission / "deep").touch()

    code, checkpoint, output = evaluate(submission, tmp_path, executor, test_image)

    assert_ordinary_fail(code, checkpoint, output)
    assert checkpoint["failure"]["kind"] == "aborted"
    if reports == "forged":
        assert group_counts(checkpoint) == NO_COUNTS
        assert checkpoint["tests"] == []
        assert MISSING_INVENTORY in checkpoint["warnings"]
    else:
        assert all(passed == 0 for passed, *_ in group_counts(checkpoint).values())
        assert checkpoint["tests"] and all(
            (test["status"], test["message"]) == ("failed", UNREPORTED)
            for test in checkpoint["tests"]
        )
        assert checkpoint["scbench"]["infrastructure_failure"] is True
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Test runner stopped" in summary
    assert "15/15" not in summary and "15/15" not in output


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_crowded_reports_folder_is_no_infrastructure_failure(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "many_entries"), tmp_path, executor, test_image
    )

    assert_ordinary_fail(code, checkpoint, output)
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == BROKEN_COUNTS


@pytest.mark.parametrize("executor", EXECUTORS)
def test_links_out_of_the_submission_are_left_out(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    """As scbench-ci copies a submission by the paper's rules (`--scbench paper`): the links
    that stay inside are kept; by 1.0's every link is left out, as SCBench 1.0's snapshot leaves
    it out."""
    submission = hostile(tmp_path, "root_conftest")
    (submission / "shared").symlink_to("../..")
    (submission / "system").symlink_to("/etc")
    (submission / "here").symlink_to(".")
    (submission / "around").symlink_to("here/here/..")  # climbs out only once resolved
    (submission / "inside").symlink_to("wordstat.py")

    code, checkpoint, output = evaluate(
        submission, tmp_path, executor, test_image, "--scbench", "paper"
    )

    assert_ordinary_fail(code, checkpoint, output)
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == PAPER_BROKEN_COUNTS
    (warning,) = [w for w in checkpoint["warnings"] if "symlink" in w]
    assert warning.startswith("3 symlink(s) of the submission point outside it")
    assert {"shared", "system", "around"} == {
        name.strip() for name in warning.split(": ", 1)[1].split(",")
    }

    shutil.rmtree(tmp_path / "out")
    code, checkpoint, output = evaluate(submission, tmp_path, executor, test_image)
    assert_ordinary_fail(code, checkpoint, output)
    assert group_counts(checkpoint) == BROKEN_COUNTS
    (warning,) = [w for w in checkpoint["warnings"] if "symlink" in w]
    assert warning == (
        "5 symlink(s) of the submission were left out, as SCBench's snapshot leaves out every "
        "link: around, here, inside, shared, system"
    )


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_tree_too_deep_to_clean_up_naively_is_no_crash(
    executor: str, tmp_path: Path, test_image: str
) -> None:
    code, checkpoint, output = evaluate(
        hostile(tmp_path, "deep_tree"), tmp_path, executor, test_image
    )

    assert_ordinary_fail(code, checkpoint, output)
    assert checkpoint["failure"] is None
    assert group_counts(checkpoint) == BROKEN_COUNTS
    assert not list(Path(tempfile.gettempdir()).glob("scbench-home-*/deep"))
