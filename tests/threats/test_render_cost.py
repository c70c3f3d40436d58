"""No results.json makes a reader or a renderer hang: a document with text built to make
scanners backtrack in every free text field the schema has (testing/hostile_results.py finds
them) is read, summarized, shown on the console, published as `command: publish` publishes a
fork's artifact (job summary, comment, Check Run, annotations) and merged, in at most
ALLOWED_RATIO times as long as the same document with ordinary text of the same size
(testing/cost_ratio.py).

Each field holds every hostile text of test_scan_cost.py in runs of RUN_CHARS characters: the
strict reader takes such a document (a string may have 1 MiB), and before the scanners were made
linear its summary took over 60 s, and its publishing over 90 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.summary import render_summary
from scbench_ci.pipeline.merge import load_shards, merge_runs
from scbench_ci.results.file import load_results
from testing.cost_ratio import ALLOWED_RATIO, cost_ratio
from testing.hostile_results import _replaced, places
from tests.threats.test_rendered_text import CHECKED, golden, published, with_every_list
from tests.threats.test_scan_cost import hostile_texts, ordinary

pytestmark = pytest.mark.slow

RUN_CHARS = 16 * 1024
"""Of each hostile text in a field: quadratic work on it is hundreds of times linear work."""


def with_text(base: dict[str, Any], text: str) -> dict[str, Any]:
    found = list(places(base))
    fields = {place.field for place in found if place.kind == "text"} - CHECKED
    return _replaced(base, found, {}, text, fields)


def test_no_results_file_makes_reading_or_rendering_it_hang(tmp_path: Path) -> None:
    base = with_every_list(golden("single_fail"))
    hostile = "".join(hostile_texts(RUN_CHARS).values())
    documents = {
        "ordinary": with_text(base, ordinary(len(hostile))),
        "hostile": with_text(base, hostile),
    }

    def read_and_render(side: str) -> None:
        folder = tmp_path / side
        folder.mkdir(exist_ok=True)
        path = folder / "results.json"
        path.write_text(json.dumps(documents[side]))
        run = load_results(path)
        render_summary(run, details="all")
        render_report(run, None, fail_on="policy")
        render_summary(merge_runs(load_shards([path])), details="all")
        workspace = folder / "workspace"
        workspace.mkdir(exist_ok=True)
        published(documents[side], workspace)

    measured = cost_ratio(read_and_render, "ordinary", "hostile", rounds=2)
    assert measured.ratio <= ALLOWED_RATIO, str(measured)
