#!/usr/bin/env bash
# The whole test suite (what CI runs through .ci/run). Installs what it needs, then
# exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_packages "$PACKAGES $TEST_PACKAGES"
ensure_cargo

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --release --quiet -- -D warnings
echo "== cargo test --workspace --release"
cargo test --workspace --release --no-fail-fast
echo "== the profile-guided build (scripts/build-pgo.sh: its results equal the plain build's)"
pgo=$(bash scripts/build-pgo.sh --skip-without-llvm)
echo "$pgo"
# A second run of build-pgo.sh reuses the build just made (unless there was none: $1 is
# the first run's last line); an unknown processor is refused.
check_build_pgo_reuse_and_refusal() {
    local out
    if [[ "$1" != SKIPPED* ]]; then
        out=$(bash scripts/build-pgo.sh 2>&1 >/dev/null)
        grep -q "is up to date" <<<"$out" ||
            { echo "FAIL: scripts/build-pgo.sh did not reuse the build of unchanged sources: $out"; exit 1; }
    fi
    if out=$(CCLAB_PGO_CPU=no-such-cpu bash scripts/build-pgo.sh 2>&1 >/dev/null) ||
        ! grep -q "CCLAB_PGO_CPU=no-such-cpu: not a processor rustc knows" <<<"$out"; then
        echo "FAIL: scripts/build-pgo.sh took an unknown processor: $out"
        exit 1
    fi
}
echo "== build-pgo.sh: reuses an up-to-date build, refuses an unknown processor"
check_build_pgo_reuse_and_refusal "$(tail -n 1 <<<"$pgo")"
echo "== the web lab in headless Chromium"
bash scripts/web-browser-test.sh
echo "== the Python package (pip install ./python, pytest, the notebooks)"
bash scripts/python-test.sh
echo "== all tests passed"
