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
# The suite in two tiers, one pytest each, so each tier's time is printed: together they are every
# test (the second is what the first leaves out). Both run even when the first failed; the script
# fails if either did.
# Tests are independent (their own folders, ports, container labels, action image tag), so the
# first tier runs side by side (pytest-xdist): a test file's tests on one worker (--dist
# loadscope), so that a module's fixture (a check of every problem, a Ray cluster, a runner's
# workflow) runs once. Four workers on 2 cores: the Docker tests wait on containers as well as
# compute, and the fast tests, the browser's and npm's fill what the CPU has left. What bounds its
# own wall-clock time or needs the CPU idle is marked `serial` and runs last, alone, in this
# process. SCBENCH_TEST_WORKERS=N sets the first tier's workers (0: in this process).
tiers=(
    "side by side|4|not serial"
    "serial|-|serial"
)
failed=0
empty=0
timings=()
for tier in "${tiers[@]}"; do
    name="${tier%%|*}"
    rest="${tier#*|}"
    workers="${rest%%|*}"
    if [ "$workers" = "-" ]; then workers=0; else workers="${SCBENCH_TEST_WORKERS:-$workers}"; fi
    echo "== pytest: $name"
    started=$SECONDS
    status=0
    pytest -m "${rest#*|}" -n "$workers" --dist loadscope --durations=25 "$@" \
        || status=$?
    # 5: no test of this tier among the ones asked for (`scripts/test.sh tests/some_dir`).
    if [ "$status" -eq 5 ]; then empty=$((empty + 1)); elif [ "$status" -ne 0 ]; then failed=1; fi
    timings+=("$(printf '%6d s  exit %d  %s' $((SECONDS - started)) "$status" "$name")")
done
echo "== pytest tiers"
printf '%s\n' "${timings[@]}"
if [ "$empty" -eq "${#tiers[@]}" ]; then exit 5; fi
exit "$failed"
