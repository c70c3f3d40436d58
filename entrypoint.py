"""Entrypoint of the scbench/evaluate Docker action: all the work is in scbench_ci.action.main."""

import sys

from scbench_ci.action.main import main

if __name__ == "__main__":
    sys.exit(main())
