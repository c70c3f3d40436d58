#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
# Provisioning runs in the background, its output kept for when it is waited for: the summary's
# width test needs headless Chromium and GitHub's fallback fonts, the Docker tests an engine and
# the test images. Where they are there already, that takes seconds and is over before lint and
# types are; on a fresh machine it is minutes of apt, debootstrap and image builds, and the tests
# that need none of it run meanwhile (below). One after the other: both use apt.
provisioning_log=$(mktemp /tmp/scbench-provisioning.XXXXXX)
(scripts/provision-browser.sh && scripts/provision-docker.sh) >"$provisioning_log" 2>&1 &
provisioning=$!
provisioned=""
# Waits for provisioning and shows its output, once; a failure ends the script. A script that
# ends early (lint failed) still waits: apt is not left half done.
wait_for_provisioning() {
    [ -n "$provisioned" ] && return 0
    provisioned=done
    local status=0
    wait "$provisioning" || status=$?
    echo "== provisioning"
    cat "$provisioning_log"
    rm -f "$provisioning_log"
    if [ "$status" -ne 0 ]; then
        echo "test.sh: provisioning failed (exit $status)" >&2
        exit "$status"
    fi
}
trap wait_for_provisioning EXIT
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff"
ruff check .
ruff format --check .
echo "== mypy"
mypy
echo "== import contracts"
lint-imports --no-cache
# The suite in tiers, one pytest each, so each tier's time is printed: together they are every
# test, each test once (tests/scripts/test_tiers.py). All run even when one failed; the script
# fails if any did.
# 1. Side by side: every test that is not `serial`. Tests are independent (their own folders,
#    ports, container labels, action image tag), so they run side by side (pytest-xdist): a test
#    file's tests on one worker (--dist loadscope), so that a module's fixture (a check of every
#    problem, a Ray cluster, a runner's workflow) runs once; the files in the suite's order
#    (--no-loadscope-reorder; tests/conftest.py puts those that run evaluations first, so that no
#    long file starts last). Four workers on 2 cores: the Docker tests wait on containers as well
#    as compute, and the other tests fill what the CPU has left.
# 2. Serial: what bounds its own wall-clock time or needs the CPU idle, last, alone, in this
#    process.
# SCBENCH_TEST_WORKERS=N sets the workers of the tiers side by side (0: in this process).
tiers=(
    "side by side|4|not serial"
    "serial|-|serial"
)
# When provisioning is still running after lint and types, the first tier is cut in two: what
# needs neither Docker, Ray nor a browser runs meanwhile, the rest once provisioning is done. The
# first part sees no Docker daemon, as before the engine is up: a test that reaches Docker and is
# not marked so fails there every time, not only when it wins a race with the engine.
tiers_while_provisioning=(
    "while provisioning|4|not serial and not docker and not ray and not browser"
    "side by side|4|not serial and (docker or ray or browser)"
    "serial|-|serial"
)
if kill -0 "$provisioning" 2>/dev/null; then
    echo "== provisioning is still running: the tests that need none of it run meanwhile"
    tiers=("${tiers_while_provisioning[@]}")
fi
failed=0
empty=0
timings=()
for tier in "${tiers[@]}"; do
    name="${tier%%|*}"
    rest="${tier#*|}"
    workers="${rest%%|*}"
    if [ "$workers" = "-" ]; then workers=0; else workers="${SCBENCH_TEST_WORKERS:-$workers}"; fi
    tier_env=()
    if [ "$name" = "while provisioning" ]; then
        tier_env=(env DOCKER_HOST=unix:///nonexistent/docker.sock)
    else
        wait_for_provisioning
    fi
    echo "== pytest: $name"
    started=$SECONDS
    status=0
    "${tier_env[@]}" pytest -m "${rest#*|}" -n "$workers" --dist loadscope --no-loadscope-reorder \
        --durations=25 "$@" || status=$?
    # 5: no test of this tier among the ones asked for (`scripts/test.sh tests/some_dir`).
    if [ "$status" -eq 5 ]; then empty=$((empty + 1)); elif [ "$status" -ne 0 ]; then failed=1; fi
    timings+=("$(printf '%6d s  exit %d  %s' $((SECONDS - started)) "$status" "$name")")
done
echo "== pytest tiers"
printf '%s\n' "${timings[@]}"
if [ "$empty" -eq "${#tiers[@]}" ]; then exit 5; fi
exit "$failed"
