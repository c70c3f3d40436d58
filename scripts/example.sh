#!/usr/bin/env bash
# Evaluate a bundled example: the reference solution of wordstat's checkpoint 2.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
exec .venv/bin/scbench-ci evaluate \
    --problem examples/wordstat \
    --checkpoint checkpoint_2 \
    --submission examples/wordstat/solutions/checkpoint_2 \
    --output .scbench \
    "$@"
