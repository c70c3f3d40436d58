"""SCBench's own code reads scbench-ci's output folder (testing/scbench_reader.py): whether its
`eval` keeps each checkpoint's evaluation, and whether its `CorrectnessResults` model validates
each `evaluation.json`. By default SCBench's files are the unmodified copies in
testing/scbench_source/ (the paper's runner: an output of `--scbench paper`); `--scbench GITDIR`
takes them from a clone instead, at `--commit`. `--source CHECKOUT --python PYTHON` reads with
SCBench's code whole, from a checkout (SCBench 1.0: an output of `--scbench 1.0`, the default), in
the environment its `uv.lock` syncs, set up outside this repository:

    git -C <slop-code-bench> archive 0a2e7bec | tar -x -C /tmp/scb
    (cd /tmp/scb && UV_PROJECT_ENVIRONMENT=/tmp/scb-venv uv sync --frozen --python 3.12)
    python benchmarks/scbench_reader.py OUTPUT --source /tmp/scb --python /tmp/scb-venv/bin/python

    python benchmarks/scbench_reader.py OUTPUT [--scbench GITDIR] [--commit REV]

Exit 0 when every checkpoint found is current for SCBench's `eval`, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.scbench_reader import (
    VENDORED,
    all_current,
    from_clone,
    read_output,
    read_with_scbench,
    vendored,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--scbench", type=Path, help="a clone's git directory")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--source", type=Path, help="a checkout of SCBench (its src/)")
    parser.add_argument("--python", help="the Python of the environment its uv.lock syncs")
    args = parser.parse_args()
    if (args.source is None) != (args.python is None):
        parser.error("--source and --python go together")
    if args.source is not None:
        print(f"SCBench: {args.source} ({args.python})")
        found = read_with_scbench(args.output, args.source.resolve(), args.python)
    elif args.scbench is None:
        print(f"SCBench: {VENDORED}")
        found = read_output(args.output, vendored)
    else:
        commit = subprocess.run(
            ["git", "--git-dir", str(args.scbench), "rev-parse", args.commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"SCBench {commit}")
        found = read_output(args.output, from_clone(args.scbench, commit))
    print(json.dumps(found, indent=2, sort_keys=True))
    sys.exit(0 if all_current(found) else 1)


if __name__ == "__main__":
    main()
