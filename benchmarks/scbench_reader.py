"""SCBench's own code reads scbench-ci's output folder (testing/scbench_reader.py): whether its
`eval` keeps each checkpoint's evaluation, and whether its `CorrectnessResults` model validates
each `evaluation.json`. By default SCBench's files are the unmodified copies in
testing/scbench_source/; `--scbench GITDIR` takes them from a clone instead, at `--commit`.

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

from testing.scbench_reader import VENDORED, all_current, from_clone, read_output, vendored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--scbench", type=Path, help="a clone's git directory")
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    if args.scbench is None:
        print(f"SCBench: {VENDORED}")
        source = vendored
    else:
        commit = subprocess.run(
            ["git", "--git-dir", str(args.scbench), "rev-parse", args.commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"SCBench {commit}")
        source = from_clone(args.scbench, commit)
    found = read_output(args.output, source)
    print(json.dumps(found, indent=2, sort_keys=True))
    sys.exit(0 if all_current(found) else 1)


if __name__ == "__main__":
    main()
