#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
# The Docker tests need an engine and the test image: install, start and build what is missing.
scripts/provision-docker.sh
# The summary's width test needs headless Chromium and GitHub's fallback fonts.
scripts/provision-browser.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff"
ruff check .
ruff format --check .
echo "== mypy"
mypy
echo "== import contracts"
lint-imports --no-cache
echo "== pytest"
# Tests are independent (their own folders, ports, container labels), so SCBENCH_TEST_WORKERS=N
# runs them side by side (pytest-xdist, a module's Ray cluster tests on one worker). The default,
# 0, runs them in this process, in order: on 2 cores the Docker tests already use both, and side
# by side four workers oversubscribed them and tests failed that pass in order.
pytest -n "${SCBENCH_TEST_WORKERS:-0}" --dist loadgroup --durations=25 "$@"
