"""benchmarks/quality.py's comparison with SCBench 1.0: its harness around SCBench's metrics code
(on a stand-in of SCBench's driver, which calls `subprocess.run(..., check=True)` as SCBench's
does), and the side-by-side figures from known results."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.quality import SCBENCH_SIDE, print_side_by_side
from scbench_ci.job.plan import Target
from scbench_ci.job.reports import Status
from scbench_ci.results.quality import QualityOutcome
from testing.results import make_checkpoint, make_measures, make_test

# Its command exits 1 after printing a report, as scb-check does when it flags anything.
STAND_IN_DRIVER = """
import json, subprocess, sys
def _get_scb_check_metrics(checkpoint_dir):
    report = "import json; print(json.dumps({'verbosity': 0.5})); raise SystemExit(1)"
    command = [sys.executable, "-c", report]
    try:
        done = subprocess.run(command, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError:
        return {}
    return json.loads(done.stdout)
"""


def test_the_harness_keeps_what_check_true_discards(tmp_path: Path) -> None:
    package = tmp_path / "src/slop_code/metrics/checkpoint"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "driver.py").write_text(STAND_IN_DRIVER)
    figures = tmp_path / "figures.json"

    subprocess.run(
        [sys.executable, "-c", SCBENCH_SIDE, str(tmp_path / "src"), json.dumps(["x"]), figures],
        check=True,
    )

    assert json.loads(figures.read_text()) == [
        {"driver": {}, "kept": {"verbosity": 0.5}, "exit_code": 1}
    ]


def test_the_figures_are_compared_one_by_one(capsys: pytest.CaptureFixture[str]) -> None:
    measures = replace(make_measures(0.1, 0.4, lines=100), clone_loc=4)
    checkpoint = make_checkpoint(make_test("a", Status.PASSED))
    measured = replace(checkpoint, quality=QualityOutcome(measures))
    theirs = {
        "verbosity": 0.1,
        "erosion": 0.4,
        "cloned_sloc_lines": 4,
        "verbosity_flagged_sloc_lines": 10,
        "cloned_pct": 0.04,
        "verbosity_flagged_pct": 0.1,
    }
    target = Target(Path("problems/demo"), "checkpoint_1", Path("s"))
    results = [(target, measured), (replace(target, checkpoint="checkpoint_2"), measured)]
    side = [
        {"driver": theirs, "kept": theirs, "exit_code": 0},
        {"driver": {}, "kept": {**theirs, "erosion": 0.41}, "exit_code": 1},
    ]

    print_side_by_side(results, side)

    lines = capsys.readouterr().out.splitlines()
    assert lines[1].endswith("yes    figures")
    assert lines[2].endswith("NO: erosion  none (scb-check exit 1)")
    assert lines[3].startswith(
        "figure by figure (verbosity, erosion, cloned_sloc_lines, verbosity_flagged_sloc_lines, "
        "cloned_pct, verbosity_flagged_pct) equal on 1 of 2 checkpoints; SCBench 1.0's driver as "
        "it is recorded no scb-check figure on 1"
    )
