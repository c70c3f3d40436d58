#!/usr/bin/env bash
# Evaluate a bundled example in Docker: the reference solution of wordstat's checkpoint 2.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
scripts/provision-docker.sh
exec .venv/bin/scbench-ci evaluate \
    --problem examples/wordstat \
    --checkpoint checkpoint_2 \
    --submission examples/wordstat/solutions/checkpoint_2 \
    --executor docker \
    --output .scbench \
    "$@"
