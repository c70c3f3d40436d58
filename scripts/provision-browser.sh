#!/usr/bin/env bash
# Provision the browser of the summary's width test (tests/outputs/test_summary_width.py):
# headless Chromium and the fonts GitHub's markdown CSS falls back to on Linux (Liberation Sans
# for Helvetica and Arial, Liberation Mono, Noto Color Emoji for ✅ and ❌), from Debian's
# packages. Idempotent: prints nothing when all is there. Must run as root to install.
set -euo pipefail

PROG="provision-browser"
log() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: ERROR: %s\n' "$PROG" "$*" >&2; exit 1; }

missing=()
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
        && ! command -v google-chrome >/dev/null 2>&1 && ! command -v google-chrome-stable >/dev/null 2>&1; then
    missing+=(chromium)
fi
fc-list 2>/dev/null | grep -q "Liberation Sans" || missing+=(fonts-liberation)
fc-list 2>/dev/null | grep -q "Noto Color Emoji" || missing+=(fonts-noto-color-emoji)
[ "${#missing[@]}" = 0 ] && exit 0

[ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root (re-run as root)"
export DEBIAN_FRONTEND=noninteractive
alog=$(mktemp /tmp/scbench-apt.XXXXXX)
trap 'rm -f "$alog"' EXIT
log "installing ${missing[*]} ..."
apt-get update >"$alog" 2>&1 || { tail -n 20 "$alog" >&2; die "apt-get update failed"; }
apt-get install -y --no-install-recommends "${missing[@]}" >"$alog" 2>&1 \
    || { tail -n 20 "$alog" >&2; die "apt-get install ${missing[*]} failed"; }
log "installed ${missing[*]}"
