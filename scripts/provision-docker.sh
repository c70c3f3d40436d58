#!/usr/bin/env bash
# Provision Docker for scbench-ci's test suite: a running Docker engine and the
# test image (SCBENCH_TEST_IMAGE, default: the public uv image the tool uses).
#
#   scripts/provision-docker.sh          make sure engine + image exist and work
#   scripts/provision-docker.sh --check  only report; exit 0 if engine up and
#                                        image present, 1 otherwise
#
# Idempotent: when everything is already in place it prints nothing and runs
# nothing: the image smoke test runs once per image (its id is kept in
# SCBENCH_VERIFIED_DIR when it passes). Must run as root when it has to install
# or start anything.
#
# When the image cannot be pulled (no registry reachable), a local stand-in is
# built under the SAME name with debootstrap: Debian bookworm minbase, this
# machine's CPython 3.12 (pyenv's, `PYENV_VERSION=3.12.1 pyenv prefix`) in
# /usr/local as the official python:3.12 images have it (so an image named
# python3.12 runs 3.12; Debian's python3 is not installed), the uv/uvx that
# scripts/bootstrap.sh installed into .venv (scbench-ci's dependency `uv`: run
# it first) in /usr/local/bin, and the host's CA bundle (so uv/pip inside
# containers trust intercepting TLS proxies). Nothing is installed into the
# system Python.
#
# SCBench's evaluation images, SCBench 1.0's (scbench_ci/images/evaluation-1.0.Dockerfile,
# the default image of the tool) and the paper runner's (evaluation-paper.Dockerfile), are
# each pulled, else built by scbench-ci itself (through the Docker SDK, `python -m
# scbench_ci.executors.docker`) on SCBench's base, SCBENCH_EVALUATION_BASE; where that base
# cannot be pulled, its stand-in is built as above from Debian trixie. The builds take Node
# and Rust from the package registries when nvm's and rustup's hosts are out of reach, and
# say so, and what an image lacks of its recipe (MinIO's server, without dl.min.io).
#
# The action's Dockerfile builds FROM SCBENCH_ACTION_BASE_IMAGE (default python:3.12-slim); when
# that cannot be pulled either, the test image (which has python3 with venv and pip) is tagged
# under its name as the local stand-in.
#
# Environment knobs:
#   SCBENCH_TEST_IMAGE        image name (default ghcr.io/astral-sh/uv:python3.12-bookworm-slim)
#   SCBENCH_EVALUATION_BASE   SCBench's base (default ghcr.io/astral-sh/uv:python3.12-trixie-slim)
#   SCBENCH_PYENV_VERSION     the CPython the stand-ins get (default 3.12.1)
#   SCBENCH_ACTION_BASE_IMAGE base of the action image (default python:3.12-slim)
#   SCBENCH_DOCKERD_LOG       dockerd log file (default /var/log/scbench-dockerd.log)
#   SCBENCH_DOCKERD_TIMEOUT   seconds to wait for dockerd to answer (default 60)
#   SCBENCH_PULL_TIMEOUT      seconds allowed for `docker pull` (default 60)
#   SCBENCH_DEBIAN_MIRROR     debootstrap mirror (default: taken from apt's sources)
#   SCBENCH_SKIP_VERIFY=1     skip the container smoke test
#   SCBENCH_VERIFIED_DIR      where the ids of the images that passed it are kept
#                             (default ~/.cache/scbench-ci/verified-images)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE="${SCBENCH_TEST_IMAGE:-ghcr.io/astral-sh/uv:python3.12-bookworm-slim}"
ACTION_BASE="${SCBENCH_ACTION_BASE_IMAGE:-python:3.12-slim}"
DOCKERD_LOG="${SCBENCH_DOCKERD_LOG:-/var/log/scbench-dockerd.log}"
DOCKERD_TIMEOUT="${SCBENCH_DOCKERD_TIMEOUT:-60}"
PULL_TIMEOUT="${SCBENCH_PULL_TIMEOUT:-60}"
EVALUATION_BASE="${SCBENCH_EVALUATION_BASE:-ghcr.io/astral-sh/uv:python3.12-trixie-slim}"
PYENV_PYTHON="${SCBENCH_PYENV_VERSION:-3.12.1}"
HOST_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
# The host's bundle, kept apart from Debian's (which update-ca-certificates rewrites in a build).
IMAGE_CA_BUNDLE=/etc/ssl/host-ca-certificates.crt
SUITE=bookworm
VERIFIED_DIR="${SCBENCH_VERIFIED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/scbench-ci/verified-images}"

PROG="provision-docker"
log() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: ERROR: %s\n' "$PROG" "$*" >&2; exit 1; }

CHECK_ONLY=0
case "${1:-}" in
    "") ;;
    --check) CHECK_ONLY=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (usage: $0 [--check])" ;;
esac
[ $# -le 1 ] || die "too many arguments (usage: $0 [--check])"

now() { date +%s; }
elapsed() { echo "$(( $(now) - $1 ))s"; }

# ---------------------------------------------------------------- cleanup ----
BUILD_DIR=""   # holds rootfs/ and debootstrap.log while building the stand-in
POLICY_RC_CREATED=0
cleanup() {
    local rc=$?
    if [ "$POLICY_RC_CREATED" = 1 ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
    if [ -n "$BUILD_DIR" ] && [ -d "$BUILD_DIR" ]; then
        # debootstrap may leave proc/sys mounted inside the rootfs on failure.
        local m
        awk -v r="$BUILD_DIR/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r \
            | while IFS= read -r m; do umount -l "$m" 2>/dev/null || true; done
        rm -rf --one-file-system "$BUILD_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

engine_up() { command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; }
# A stand-in of ours whose python is not the CPython its name says (older stand-ins ran Debian's
# 3.11) counts as missing.
present() {
    docker image inspect "$1" >/dev/null 2>&1 || return 1
    docker image inspect --format '{{.Comment}}' "$1" | grep -q 'scbench-ci local stand-in' || return 0
    docker image inspect --format '{{.Comment}}' "$1" | grep -q 'CPython'
}
image_present() { present "$IMAGE"; }
evaluation_base_present() { present "$EVALUATION_BASE"; }
action_base_present() { present "$ACTION_BASE"; }

# ---------------------------------------------------------------- --check ----
if [ "$CHECK_ONLY" = 1 ]; then
    if ! engine_up; then
        log "engine: NOT answering (docker info fails)"; exit 1
    fi
    log "engine: up (server $(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
    image_present || { log "image: MISSING: $IMAGE"; exit 1; }
    log "image: present: $IMAGE"
    action_base_present || { log "action base image: MISSING: $ACTION_BASE"; exit 1; }
    log "action base image: present: $ACTION_BASE"
    evaluation_base_present || { log "SCBench's base: MISSING: $EVALUATION_BASE"; exit 1; }
    log "SCBench's base: present: $EVALUATION_BASE"
    "$ROOT/.venv/bin/python" -c 'import sys, docker
from scbench_ci.executors.docker import image_build as b, image_recipe as r
client, found = docker.from_env(), True
for recipe in r.RECIPES.values():
    here = b.default_here(client, recipe)
    found = found and here is not None
    print(f"provision-docker: evaluation image ({recipe.title}):", f"present: {here.reference}" if here else f"MISSING: {recipe.published}")
sys.exit(0 if found else 1)' || exit 1
    exit 0
fi

need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root (re-run as root)"; }

apt_updated=0
apt_install() {
    need_root "installing $*"
    export DEBIAN_FRONTEND=noninteractive
    local alog; alog=$(mktemp /tmp/scbench-apt.XXXXXX)
    if [ "$apt_updated" = 0 ]; then
        apt-get update >"$alog" 2>&1 || { tail -n 20 "$alog" >&2; rm -f "$alog"; die "apt-get update failed"; }
        apt_updated=1
    fi
    apt-get install -y --no-install-recommends "$@" >"$alog" 2>&1 \
        || { tail -n 20 "$alog" >&2; rm -f "$alog"; die "apt-get install $* failed"; }
    rm -f "$alog"
}

# ------------------------------------------------------ 1. Docker engine ----
# True if $1 is a live (non-zombie) process whose command line contains $2.
proc_is() {
    local pid=$1 what=$2 state
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
    [ "$state" != Z ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$what"
}

# dockerd supervises its own containerd (pid file under /var/run/docker/containerd).
# After a crashed/killed dockerd, a new one "reuses" whatever that pid file names;
# if that containerd is dead, dying, or lost its socket, dockerd times out
# ("failed to start containerd"). Clear such leftovers before starting dockerd.
clear_stale_containerd() {
    local dir=/var/run/docker/containerd pid
    [ -f "$dir/containerd.pid" ] || return 0
    pid=$(cat "$dir/containerd.pid" 2>/dev/null || true)
    if proc_is "$pid" "$dir/containerd.toml"; then
        [ -S "$dir/containerd.sock" ] && return 0   # healthy: dockerd will reuse it
        log "stopping orphaned containerd (pid $pid, no socket) left by an earlier dockerd"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 20); do proc_is "$pid" "$dir/containerd.toml" || break; sleep 0.5; done
        if proc_is "$pid" "$dir/containerd.toml"; then kill -KILL "$pid" 2>/dev/null || true; sleep 1; fi
    fi
    log "removing stale $dir/containerd.pid"
    rm -f "$dir/containerd.pid"
}

ensure_engine() {
    engine_up && return 0
    local t0; t0=$(now)
    need_root "starting the Docker engine"

    if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
        log "installing docker.io (dockerd not installed) ..."
        # No init system here: keep the package's init script from starting a
        # second dockerd behind our back during installation.
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
            chmod 755 /usr/sbin/policy-rc.d
            POLICY_RC_CREATED=1
        fi
        apt_install docker.io
        if [ "$POLICY_RC_CREATED" = 1 ]; then rm -f /usr/sbin/policy-rc.d; POLICY_RC_CREATED=0; fi
        command -v dockerd >/dev/null 2>&1 || die "docker.io installed but dockerd not found on PATH"
        log "installed docker.io in $(elapsed "$t0")"
    fi

    # Stale state from an earlier dockerd (killed, VM restarted ...).
    local pidfile=/var/run/docker.pid pid
    if [ -f "$pidfile" ]; then
        pid=$(cat "$pidfile" 2>/dev/null || true)
        if proc_is "$pid" dockerd; then
            # Alive but not answering: maybe still starting; give it the timeout.
            log "dockerd (pid $pid) is running but not answering yet; waiting ..."
        else
            log "removing stale $pidfile (pid ${pid:-?} is not a running dockerd)"
            rm -f "$pidfile"
            pid=""
        fi
    else
        pid=""
    fi
    if [ -z "$pid" ]; then
        if [ -S /var/run/docker.sock ] || [ -e /var/run/docker.sock ]; then
            log "removing stale /var/run/docker.sock"
            rm -f /var/run/docker.sock
        fi
        clear_stale_containerd

        local args=(--host=unix:///var/run/docker.sock)
        # Container traffic leaves through the default-route interface; if its
        # MTU is below 1500 (VMs, tunnels), the bridge must match or TLS to
        # PyPI can stall on large packets.
        local dev mtu
        dev=$(ip -o route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") {print $(i+1); exit}}' || true)
        if [ -n "$dev" ] && [ -r "/sys/class/net/$dev/mtu" ]; then
            mtu=$(cat "/sys/class/net/$dev/mtu")
            if [ "$mtu" -lt 1500 ]; then args+=(--mtu="$mtu"); fi
        fi
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        log "starting dockerd ${args[*]} (log: $DOCKERD_LOG)"
        setsid nohup dockerd "${args[@]}" >>"$DOCKERD_LOG" 2>&1 < /dev/null &
        disown || true
    fi

    local deadline=$(( $(now) + DOCKERD_TIMEOUT ))
    until engine_up; do
        if [ "$(now)" -ge "$deadline" ]; then
            echo "---- last lines of $DOCKERD_LOG ----" >&2
            tail -n 25 "$DOCKERD_LOG" >&2 2>/dev/null || true
            die "Docker engine did not answer within ${DOCKERD_TIMEOUT}s"
        fi
        sleep 1
    done
    log "Docker engine up (server $(docker version --format '{{.Server.Version}}'), storage driver $(docker info --format '{{.Driver}}')) in $(elapsed "$t0")"
}

# ------------------------------------------------------ 2. the test image ----
debian_mirror() {
    if [ -n "${SCBENCH_DEBIAN_MIRROR:-}" ]; then echo "$SCBENCH_DEBIAN_MIRROR"; return; fi
    local m=""
    # deb822 sources first (URIs: ... with Suites: bookworm), then one-line format.
    m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^[[:space:]]*$/ { if (uri != "" && suite) { print uri; exit } uri=""; suite=0; next }
        /^URIs:/   { uri=$2 }
        /^Suites:/ { for (i=2;i<=NF;i++) if ($i=="'"$SUITE"'") suite=1 }
        END { if (uri != "" && suite) print uri }' | grep -v -- '-security' | head -n1 || true)
    if [ -z "$m" ]; then
        m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { if ($(i+1)=="'"$SUITE"'") print $i; break } }' \
            | head -n1 || true)
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

# The uv and uvx binaries the stand-in gets: the ones of the repository's .venv.
find_uv() {
    local bin="$ROOT/.venv/bin"
    [ -x "$bin/uv" ] && [ -x "$bin/uvx" ] \
        || die "no uv and uvx in $bin (the stand-in image needs them): run scripts/bootstrap.sh first"
    echo "$bin"
}

# The packages CPython's extension modules link against, per suite (trixie renamed some: t64).
runtime_libraries() {
    case "$1" in
        bookworm) echo libssl3,libffi8,libsqlite3-0,zlib1g,libbz2-1.0,liblzma5,libreadline8,libncursesw6,libuuid1,libexpat1,libnsl2,libtirpc3 ;;
        *) echo libssl3t64,libffi8,libsqlite3-0,zlib1g,libbz2-1.0,liblzma5,libreadline8t64,libncursesw6,libuuid1,libexpat1,libnsl2,libtirpc3t64 ;;
    esac
}

# This machine's CPython, copied into /usr/local of the rootfs ($1) as the python images have it:
# its standard library and pip, not its tests nor what else its site-packages holds.
install_cpython() {
    local rootfs=$1 prefix
    command -v pyenv >/dev/null 2>&1 || die "no pyenv: the stand-in needs a CPython $PYENV_PYTHON"
    prefix=$(PYENV_VERSION="$PYENV_PYTHON" pyenv prefix) || die "pyenv has no CPython $PYENV_PYTHON"
    local minor=${PYENV_PYTHON%.*}
    tar -C "$prefix" --exclude="./lib/python$minor/test" --exclude="./lib/python$minor/site-packages" \
        --exclude='*/__pycache__' -c . | tar -C "$rootfs/usr/local" -x
    mkdir -p "$rootfs/usr/local/lib/python$minor/site-packages"
    cp -a "$prefix/lib/python$minor/site-packages/"pip* "$rootfs/usr/local/lib/python$minor/site-packages/"
    ln -sf "python$minor" "$rootfs/usr/local/bin/python3"
    ln -sf "python$minor" "$rootfs/usr/local/bin/python"
    chroot "$rootfs" /sbin/ldconfig
    chroot "$rootfs" /usr/local/bin/python3 -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, venv' \
        || die "the CPython copied into the stand-in does not start or lacks a module"
}

# build_standin NAME SUITE: a Debian SUITE minbase with this machine's CPython, uv and CA bundle.
build_standin() {
    local name=$1 suite=$2
    local t0; t0=$(now)
    need_root "building the stand-in image"
    [ -r "$HOST_CA_BUNDLE" ] || die "host CA bundle $HOST_CA_BUNDLE not found"
    command -v debootstrap >/dev/null 2>&1 || { log "installing debootstrap ..."; apt_install debootstrap; }
    local uvdir; uvdir=$(find_uv)
    local mirror; mirror=$(debian_mirror)

    BUILD_DIR=$(mktemp -d /var/tmp/scbench-image-build.XXXXXX)
    local ROOTFS="$BUILD_DIR/rootfs"
    log "debootstrap $suite from $mirror (CPython $PYENV_PYTHON, uv $("$uvdir/uv" --version | awk '{print $2}')) for $name ..."
    local dlog="$BUILD_DIR/debootstrap.log"
    if ! debootstrap --variant=minbase --include="ca-certificates,procps,$(runtime_libraries "$suite")" \
            "$suite" "$ROOTFS" "$mirror" >"$dlog" 2>&1; then
        tail -n 25 "$dlog" >&2
        if [ -f "$ROOTFS/debootstrap/debootstrap.log" ]; then tail -n 25 "$ROOTFS/debootstrap/debootstrap.log" >&2; fi
        die "debootstrap failed"
    fi

    install_cpython "$ROOTFS"
    install -m 0755 "$uvdir/uv" "$ROOTFS/usr/local/bin/uv"
    install -m 0755 "$uvdir/uvx" "$ROOTFS/usr/local/bin/uvx"
    install -m 0644 "$HOST_CA_BUNDLE" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
    install -m 0644 "$HOST_CA_BUNDLE" "$ROOTFS$IMAGE_CA_BUNDLE"
    chmod 1777 "$ROOTFS/tmp" "$ROOTFS/var/tmp"
    mkdir -p "$ROOTFS/workspace"; chmod 0777 "$ROOTFS/workspace"
    # Keep it small.
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
           "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/* "$ROOTFS/debootstrap" \
           "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
    find "$ROOTFS/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
    : > "$ROOTFS/etc/resolv.conf"   # docker bind-mounts its own

    log "importing rootfs as $name ..."
    tar -C "$ROOTFS" --numeric-owner -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change "ENV SSL_CERT_FILE=$IMAGE_CA_BUNDLE" \
        --change "ENV PIP_CERT=$IMAGE_CA_BUNDLE" \
        --change "ENV NODE_EXTRA_CA_CERTS=$IMAGE_CA_BUNDLE" \
        --change "ENV CURL_CA_BUNDLE=$IMAGE_CA_BUNDLE" \
        --change 'ENV LANG=C.UTF-8' \
        --change 'WORKDIR /workspace' \
        --change 'CMD ["/bin/bash"]' \
        -m "scbench-ci local stand-in for $name (debootstrap $suite + CPython $PYENV_PYTHON + host uv)" \
        - "$name" >/dev/null || die "docker import failed"
    rm -rf --one-file-system "$BUILD_DIR"; BUILD_DIR=""
    log "built stand-in $name ($(image_size "$name")) in $(elapsed "$t0")"
}

image_size() {
    docker image inspect --format '{{.Size}}' "$1" 2>/dev/null \
        | awk '{ printf "%.0f MB", $1 / 1000000 }'
}

ensure_image() {
    image_present && return 0
    local t0; t0=$(now)
    log "pulling $IMAGE (at most ${PULL_TIMEOUT}s) ..."
    if timeout "$PULL_TIMEOUT" docker pull -q "$IMAGE" >/dev/null 2>&1 && image_present; then
        log "pulled $IMAGE ($(image_size "$IMAGE")) in $(elapsed "$t0")"
        return 0
    fi
    log "pull failed after $(elapsed "$t0") (no registry?); building a local stand-in under the same name"
    build_standin "$IMAGE" "$SUITE"
}

# SCBench's base, for the evaluation image's local build.
ensure_evaluation_base() {
    evaluation_base_present && return 0
    local t0; t0=$(now)
    if timeout "$PULL_TIMEOUT" docker pull -q "$EVALUATION_BASE" >/dev/null 2>&1 && evaluation_base_present; then
        log "pulled $EVALUATION_BASE in $(elapsed "$t0")"
        return 0
    fi
    log "pull of $EVALUATION_BASE failed; building a local stand-in (Debian trixie) under its name"
    build_standin "$EVALUATION_BASE" trixie
}

# SCBench's evaluation images, 1.0's and the paper's, as scbench-ci gets them (pulled, else
# built once and reused).
ensure_evaluation_image() {
    local out
    out=$("$ROOT/.venv/bin/python" -m scbench_ci.executors.docker 2>&1) \
        || { printf '%s\n' "$out" | tail -n 30 >&2; die "an evaluation image could not be had"; }
    if printf '%s\n' "$out" | grep -q '^building\|^pulling'; then
        CHANGED=1
        printf '%s\n' "$out" | sed "s/^/$PROG: /"
    fi
}

ensure_action_base() {
    action_base_present && return 0
    local t0; t0=$(now)
    log "pulling $ACTION_BASE (at most ${PULL_TIMEOUT}s) ..."
    if timeout "$PULL_TIMEOUT" docker pull -q "$ACTION_BASE" >/dev/null 2>&1 && action_base_present; then
        log "pulled $ACTION_BASE in $(elapsed "$t0")"
        return 0
    fi
    log "pull failed; tagging $IMAGE as the local stand-in for $ACTION_BASE"
    docker tag "$IMAGE" "$ACTION_BASE" || die "docker tag $IMAGE $ACTION_BASE failed"
}

# ------------------------------------------------------------- 3. verify ----
# Once per image: an image whose id passed it is not tested again (it took 9 s of every warm
# `./scripts/example.sh`, uvx fetching pytest into a fresh home each time).
verify_image() {
    [ "${SCBENCH_SKIP_VERIFY:-0}" = 1 ] && return 0
    local t0 out id; t0=$(now)
    id=$(docker image inspect --format '{{.Id}}' "$IMAGE") || die "no image $IMAGE to verify"
    id=${id#sha256:}
    [ -f "$VERIFIED_DIR/$id" ] && return 0
    if ! out=$(docker run --rm -e HOME=/tmp -u 1000:1000 "$IMAGE" \
            sh -c 'uvx --with=pytest pytest --version' 2>&1); then
        printf '%s\n' "$out" | tail -n 20 >&2
        die "smoke test failed: 'uvx --with=pytest pytest --version' as uid 1000 in $IMAGE"
    fi
    mkdir -p "$VERIFIED_DIR" && : > "$VERIFIED_DIR/$id"
    # Quiet when nothing changed; otherwise say what we proved.
    if [ "$CHANGED" = 1 ]; then
        log "verified: $(printf '%s\n' "$out" | grep -m1 -i pytest) as uid 1000 in $IMAGE in $(elapsed "$t0")"
    fi
}

T_ALL=$(now)
CHANGED=0
engine_up || CHANGED=1
ensure_engine
image_present || CHANGED=1
ensure_image
evaluation_base_present || CHANGED=1
ensure_evaluation_base
ensure_evaluation_image
action_base_present || CHANGED=1
ensure_action_base
verify_image
if [ "$CHANGED" = 1 ]; then
    log "done in $(elapsed "$T_ALL")"
fi
