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
echo "== the web lab in headless Chromium"
bash scripts/web-browser-test.sh
echo "== the Python package (pip install ./python, pytest, the notebooks)"
bash scripts/python-test.sh
echo "== all tests passed"
