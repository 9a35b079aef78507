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
bash scripts/build-pgo.sh --skip-without-llvm
check_build_pgo_reuse_and_refusal() {
    local err
    if [ -x "${CARGO_TARGET_DIR:-target}/pgo/release/cclab" ] &&
        ! bash scripts/build-pgo.sh 2>&1 >/dev/null | grep -q "is up to date"; then
        echo "FAIL: scripts/build-pgo.sh did not reuse the build of unchanged sources"
        exit 1
    fi
    if err=$(CCLAB_PGO_CPU=no-such-cpu bash scripts/build-pgo.sh 2>&1 >/dev/null) ||
        ! grep -q "CCLAB_PGO_CPU=no-such-cpu: not a processor rustc knows" <<<"$err"; then
        echo "FAIL: scripts/build-pgo.sh took an unknown processor: $err"
        exit 1
    fi
}
check_build_pgo_reuse_and_refusal
echo "== the web lab in headless Chromium"
bash scripts/web-browser-test.sh
echo "== the Python package (pip install ./python, pytest, the notebooks)"
bash scripts/python-test.sh
echo "== all tests passed"
