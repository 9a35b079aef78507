#!/usr/bin/env bash
# The web lab in a real browser: starts `cclab serve` on a free port with a scratch
# results folder, runs tests/web/browser_test.py (Playwright for Python driving Debian's
# headless Chromium; Playwright's own browser download is never used) and leaves
# screenshots in target/web-artifacts/. The virtual environment is made once in
# target/web-venv. Needs the chromium and python3-venv packages (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cclab="$target/release/cclab"
artifacts="$target/web-artifacts"
venv="$target/web-venv"
cargo build --release -p cclab --quiet  # nothing to do when it is up to date
[ -x /usr/bin/chromium ] || { echo "web browser test: /usr/bin/chromium is missing (apt-get install chromium)" >&2; exit 1; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3
pin="playwright==1.49.1"
# Made anew when the pinned version changes, not only when it is missing.
if [ "$(cat "$venv/.cclab-pins" 2>/dev/null)" != "$pin" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin"
    echo "$pin" >"$venv/.cclab-pins"
fi
rm -rf "$artifacts"
mkdir -p "$artifacts"
work="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
# --idle-stop 300: the test starts runs it does not watch (the run limit's), which the
# default 15 s would stop on a slow machine before the test is done with them.
"$cclab" serve --port 0 --results "$work/results" --scenarios scenarios --idle-stop 300 \
    >"$work/out" 2>"$artifacts/server.log" &
server_pid=$!
for _ in $(seq 100); do
    grep -q '^cclab lab: ' "$work/out" 2>/dev/null && break
    sleep 0.1
done
url="$(sed -n 's/^cclab lab: //p' "$work/out")"
[ -n "$url" ] || { echo "web browser test: the server did not start" >&2; cat "$artifacts/server.log" >&2; exit 1; }
"$venv/bin/python" tests/web/browser_test.py "$url" "$artifacts"
