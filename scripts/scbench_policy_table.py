"""Write the table of SCBench's own pass-policy outcomes that tests/results/test_policy.py checks
scbench-ci's policies against: every policy of SCBench's `PassPolicy.check` and the two of
`CorrectnessResults.passes_policy`, over a grid of pass and total counts per group.

It runs SCBench's code, so it runs outside this repository's environment, in a scratch virtual
environment with SCBench's sources (SCBench is not on PyPI) and the three packages its
`evaluation/report.py` imports:

    git -C <slop-code-bench> archive HEAD src | tar -x -C /tmp/scbsrc
    python3.12 -m venv /tmp/scbvenv && /tmp/scbvenv/bin/pip install pydantic structlog rich
    /tmp/scbvenv/bin/python scripts/scbench_policy_table.py /tmp/scbsrc/src \
        "$(git -C <slop-code-bench> rev-parse HEAD)" > tests/data/scbench/policy_table.json

`report.py` is loaded from its file, so that `slop_code.evaluation`'s package import (the Docker
runtime and everything else) is not needed; the functions run are SCBench's, unchanged.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path

GROUPS = ("Core", "Functionality", "Regression", "Error")
PER_GROUP = ((0, 0), (1, 1), (0, 1), (1, 2))
"""(passed, total) of one group: no test, all passed, none passed, some passed."""


def main(source: Path, commit: str) -> None:
    sys.path.insert(0, str(source))
    spec = importlib.util.spec_from_file_location(
        "scbench_report", source / "slop_code/evaluation/report.py"
    )
    assert spec is not None and spec.loader is not None
    report = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = report
    spec.loader.exec_module(report)
    rows = []
    for grid in itertools.product(PER_GROUP, repeat=len(GROUPS)):
        # As SCBench's runner counts: a group without tests has no key.
        totals = {report.GroupType(g): t for g, (_, t) in zip(GROUPS, grid, strict=True) if t}
        passes = {report.GroupType(g): p for g, (p, t) in zip(GROUPS, grid, strict=True) if t}
        results = report.CorrectnessResults(
            problem_name="p",
            problem_version=1,
            checkpoint_name="checkpoint_1",
            checkpoint_version=1,
            duration=0.0,
            entrypoint="python main.py",
            pytest_exit_code=0,
            pytest_collected=sum(totals.values()),
            pass_counts=passes,
            total_counts=totals,
        )
        rows.append(
            {
                "counts": {g: list(pair) for g, pair in zip(GROUPS, grid, strict=True)},
                "check": {p.value: p.check(passes, totals) for p in report.PassPolicy},
                "passes_policy": {
                    name: results.passes_policy(name)
                    for name in ("core-cases", "all-non-error-cases")
                },
            }
        )
    document = {
        "source": f"SprocketLab/slop-code-bench {commit} src/slop_code/evaluation/report.py",
        "command": "/tmp/scbvenv/bin/python scripts/scbench_policy_table.py /tmp/scbsrc/src "
        + commit,
        "counts": "per group [passed, total]; a group with total 0 is absent from SCBench's dicts",
        "rows": rows,
    }
    # One row a line, so that a change of SCBench's outcomes reads as a diff of rows.
    text = json.dumps(document, indent=1)
    head, _, _ = text.partition('"rows": [')
    lines = ",\n".join("  " + json.dumps(row) for row in rows)
    sys.stdout.write(f'{head}"rows": [\n{lines}\n ]\n}}\n')


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
