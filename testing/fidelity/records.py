"""The probe problem's records (what its tests and the submission's processes saw), read from a
run's pytest-report.json and made comparable between two flows.

Values that name a place differ by nature (the test runner's environment is uvx's under SCBench
and scbench-ci's own here; a container has its own host name; uv prints how long it took); they
are replaced by what they are, so that everything else compares exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PROBE_PROBLEM = Path(__file__).resolve().parents[2] / "tests/data/probes/probe"
PROBE_SUBMISSION = Path(__file__).resolve().parents[2] / "tests/data/probes/submission"
"""The probe's entry, `main.py`; with a requirements.txt (pyyaml) or without, by the test."""

DELIBERATE = {
    "HOSTNAME": "each container has its own",
    "SCBENCH_CHECKPOINT": "SCBench's documentation gives it to the tests; its runner does not",
}
"""Variables that differ on purpose, and why no test outcome can depend on them."""
_DURATION = re.compile(r"\bin \d+(\.\d+)?(ms|s|µs)\b")


def read_records(report: Path) -> dict[str, Any]:
    """Each probe test's metadata by test name."""
    document = json.loads(report.read_text())
    return {test["nodeid"].split("::", 1)[1]: test["metadata"] for test in document["tests"]}


def comparable(records: dict[str, Any]) -> dict[str, Any]:
    """The records with places replaced by what they are, and the deliberate differences left
    out; disk figures apart (see `free_disk`)."""
    view = records["test_the_test_process"]["view"]["stdout"]
    places = {
        view["prefix"]: "<test environment>",
        records["test_uv_run_from_a_copied_folder"]["tmp_path"]: "<tmp_path>",
    }
    return _replace(_without_deliberate(records), places)


def free_disk(records: dict[str, Any]) -> dict[str, int]:
    """The free space each process saw where it writes (the workspace, /tmp, its home)."""
    seen = records["test_first_and_second_uv_run"]["first"]["stdout"]["disk"]
    return {place: figures["free"] for place, figures in seen.items()}


def _without_deliberate(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_deliberate(item)
            for key, item in value.items()
            # `disk`: the free disk is compared apart (`free_disk`).
            if key not in DELIBERATE and key != "disk"
        }
    if isinstance(value, list):
        # The workspace's listing: SCBench's entry script is in it, scbench-ci's reports folder.
        return [_without_deliberate(item) for item in value if item not in _WORKSPACE_EXTRAS]
    return value


_WORKSPACE_EXTRAS = ("HANDLE_ENTRY.sh", ".scbench")


def _replace(value: Any, places: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: _replace(item, places) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, places) for item in value]
    if isinstance(value, str):
        for place, name in places.items():
            value = value.replace(place, name)
        value = re.sub(r"pytest-of-[^/]+/pytest-\d+", "pytest-of-<user>/pytest-<n>", value)
        return _DURATION.sub("in <time>", value)
    return value
