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
# The suite in tiers, one pytest each, so each tier's time is printed: together they are every
# test (the second and third are what the fast tier leaves out, the last what the others leave
# out). Every tier runs even when an earlier one failed; the script fails if any did.
# Tests are independent (their own folders, ports, container labels, action image tag), so the
# first three tiers run side by side (pytest-xdist): a test file's tests on one worker
# (--dist loadscope), so that a module's fixture (a check of every problem, a Ray cluster, a
# runner's workflow) runs once. The Docker tier has four workers on 2 cores: its tests wait on
# containers more than they compute. What bounds its own wall-clock time or needs the CPU idle
# is marked `serial` and runs last, alone, in this process. SCBENCH_TEST_WORKERS=N sets the
# workers of the first three (0: in this process).
FAST="not docker and not ray and not browser and not npm and not slow and not integration"
NEEDS_DOCKER="docker or ray or integration"
tiers=(
    "fast|2|($FAST) and not serial"
    "slow, browser, npm|2|not ($FAST) and not ($NEEDS_DOCKER) and not serial"
    "Docker, Ray, integration|4|($NEEDS_DOCKER) and not serial"
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
